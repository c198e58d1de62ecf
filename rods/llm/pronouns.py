"""A thing said again in the same sentence, said as "it".

A person who asks for two steps about one thing names it once: "look up book
'bk-4' and then return it", "create a folder called 'captions' and then go into
it", not "... and then return book 'bk-4'" (which the blind readers marked as a
robot's wording). Only within one sentence: across turns the value is said
again, since each turn's query must ask for its own calls (the judge's intent
check), and only when the step before named that thing and no other name the
"it" could mean. People and places keep their names ("send it to 'Ana'"
would not be about Ana; "fly from it" reads wrong).
"""

from __future__ import annotations

import re
from typing import Any

from rods.llm.outcomes import PERSON_NOUNS, PREPOSITIONS, named_arguments, noun, say


def it_for_repeats(steps: list[str], calls: list[dict[str, Any]]) -> list[str]:
    """`steps` (one per call of `calls`, in a sentence's order) with a name the previous step was about said as
    "it". Steps that do not match their calls one to one (a collapsed list) are returned as they are."""
    if len(steps) != len(calls):
        return steps
    out = list(steps)
    for k in range(1, len(calls)):
        before = _names(calls[k - 1], steps[k - 1])
        if len(before) != 1:
            continue
        value, = before
        arguments, bound = _arguments(calls[k])
        param = next((p for p, v in arguments.items() if v == value and p not in bound), None)
        if param is None:
            continue
        what = noun(param, calls[k].get("nouns"))
        if what.split()[-1:] and (what.split()[-1] in PERSON_NOUNS or what.split()[-1] in PREPOSITIONS):
            continue
        out[k] = _said_as_it(out[k], value, what)
    return out


def _names(call: dict[str, Any], step: str) -> set[str]:
    """The names and ids a step says (quoted, with no space: not a text), and one more per value taken from an
    earlier result ("that file": another thing "it" could mean)."""
    arguments, bound = _arguments(call)
    said = {v for p, v in arguments.items()
            if isinstance(v, str) and v and not re.search(r"\s", v) and say(v) in step and p not in bound}
    return said | {f"#bound:{b}" for b in bound}


def _arguments(call: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """A call's arguments by name (positional ones named) and the names of those taken from earlier results."""
    arguments, rename = named_arguments(call.get("arguments", {}), call.get("args", []), list(call.get("params", {})))
    return arguments, {rename.get(b, b).split("[")[0] for b in call.get("bound", [])}


def _said_as_it(step: str, value: str, what: str) -> str:
    """The first mention of `value` in `step`, with its noun ("book 'bk-4'", "the 'x' folder"), as "it"."""
    quoted, noun_ = re.escape(say(value)), re.escape(what)
    for pattern in (rf"\bthe {quoted} {noun_}\b", rf"\bthe {noun_} (?:called |named )?{quoted}",
                    rf"\b{noun_} (?:called |named )?{quoted}", quoted):
        found = re.search(pattern, step)
        if found:
            return step[:found.start()] + "it" + step[found.end():]
    return step
