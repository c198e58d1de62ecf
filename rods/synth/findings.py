"""What a read's result tells: an error, nothing at all, no match, or something to ask about.

The resolver (:mod:`rods.synth.resolver`) passes over candidates by these (a read of a file just made empty,
a search in an empty folder), the planner records whether the seed's read found nothing
(`rods.synth.planner.Slot.found_nothing`), and the pipeline's tests hold accepted variants to them.
Pure functions of a result's text (and, for `reads_what_it_made`, the calls before it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rods.envs.calls import ToolCall
from rods.synth.profile import is_error, result_value, value_paths


def is_failed(result: str) -> bool:
    """An error result, including BFCL's lists that start with an error dict."""
    if is_error(result):
        return True
    value = result_value(result)
    return isinstance(value, list) and bool(value) and isinstance(value[0], dict) and "error" in value[0]


def is_empty(result: str) -> bool:
    """A result that holds nothing: "", "None", an empty list or object, or one whose every field is an empty
    text (`{"file_content": ""}` of a file just created, `{"diff_lines": ""}` against its fresh copy): asked
    for, it tells nothing. A search that finds no match (`{"matching_lines": []}`) still answers its question."""
    value = result_value(result)
    return value in ("None", {}, []) or _hollow(value)


def _hollow(value: Any) -> bool:
    """Empty text or null, or a non-empty list or object of nothing else (an empty list inside is an answer:
    nothing matched)."""
    if isinstance(value, dict):
        return bool(value) and all(_hollow(v) for v in value.values())
    if isinstance(value, list):
        return bool(value) and all(_hollow(v) for v in value)
    return value in ("", None)


def finds_nothing(result: str) -> bool:
    """A result that holds nothing (`is_empty`), or a short answer (a few fields) that is no match (an empty
    list) or a zero count: `{"matching_lines": []}`, `{"count": 0, "type": "lines"}`. A record with a zero in
    it (a booking's `nonfree_baggages`) is not."""
    if is_empty(result):
        return True
    value = result_value(result)
    if value == []:
        return True
    if not isinstance(value, dict) or len(value) > 3:
        return False
    return any(v == [] or (v == 0 and not isinstance(v, bool)) for v in value.values())


def answers_nothing(result: str) -> bool:
    """A result with nothing in any of its fields: `is_empty`, `[]`, or an object whose every field is an empty
    list, a zero or empty (`{"matches": []}` of a search in an empty folder). A record with one empty field
    (a page with no tags) answers, as does a count with its unit (`{"count": 0, "type": "lines"}`)."""
    if is_empty(result):
        return True
    value = result_value(result)
    if value == []:
        return True
    return isinstance(value, dict) and bool(value) and all(
        v in ([], {}, "", None) or (v == 0 and not isinstance(v, bool)) for v in value.values())


def echoes(call: ToolCall, result: str) -> bool:
    """A result that only gives back a text of the call's own (`echo` of a sentence to the terminal): it tells
    the user what they said. A name given back (`cd`'s folder as the new working directory) is no such text: the
    call did something a state walk need not show."""
    leaves = [v for _, v in value_paths(result_value(result))]
    named = _named(call)
    return bool(leaves) and all(isinstance(v, str) and len(v.split()) >= 2 and v in named for v in leaves)


def tells_nothing(call: ToolCall, result: str) -> bool:
    """A read that finds nothing (`answers_nothing`) or only repeats its arguments (`echoes`)."""
    return answers_nothing(result) or echoes(call, result)


def reads_what_it_made(call: ToolCall, result: str, earlier: Iterable[tuple[ToolCall, bool, Mapping]]) -> bool:
    """A read that finds nothing (`finds_nothing`) in a thing this task made and no write touched since:
    grep or count a file just created empty tells what the task already knows; a copy made from the thing since
    leaves it as it was. `earlier`: each earlier call
    with whether it changed the state and what it created (`Step.created_at`, `Trace.created_at`)."""
    if not finds_nothing(result):
        return False
    named = _named(call)
    for before, changed, created in reversed(tuple(earlier)):  # read only for a read that found nothing
        touched = named & _named(before)
        if changed and touched:
            if touched & created.keys():
                return True  # the last write that named it made it: nothing since
            if not created:
                return False  # it wrote into the thing (echo into the file)
            # it made something else from the thing (cp's source): look further back
    return False


def _named(call: ToolCall) -> set:
    return {v for v in [*call.arguments.values(), *call.args] if isinstance(v, (str, int, float))}
