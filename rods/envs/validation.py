"""Validation that can fail: every gold call of a task checked on a fresh environment (docs/design.md §2.10).

Comparing a ground truth with a replay of itself scores RP = 1 whatever the
ground truth does, so it proves only determinism. Here every gold call must

* parse (`rods.envs.calls`: `ast` or JSON, never `eval`);
* name a function of the task's environment;
* fit that tool's schema: no unknown argument name, every required argument,
  every value of its type (`jsonschema` over `rods.envs.schemas.argument_schema`;
  positional arguments map to the parameters in doc order, BFCL's `any`
  accepts anything, `float` accepts integers, a `tuple` is an array);
* run without failing by its domain's error convention (`Domain.error_of`: an
  exception, a refused or unknown call, a JSON object with an `error` key, a
  class's own `rods_error`), or fail if the task marks it as expected to
  (`Task.expected_errors`; its name and arguments are checked all the same);

and two replays must agree: the same result call by call, the same snapshot
turn by turn. `validate_task` returns the failures (none: the task is valid),
each said in one line by `describe`. RP = 1 against itself is checked where
the reward is reachable (`rods tasks validate`, `rods.synth.gate`): this
module imports no reward.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Set
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from rods.envs.calls import CallParseError, ToolCall, format_call, parse_calls
from rods.envs.classes import method_owners
from rods.envs.contract import environment_for
from rods.envs.domain import standard_error
from rods.envs.domains import domain_of
from rods.envs.schemas import argument_schema, function_docs

if TYPE_CHECKING:
    from rods.tasks.model import Task

#: Why a task fails, one word each (the synthesis gate counts rejections as `gate:<kind>`).
KINDS = ("environment", "parse", "unknown_function", "schema", "call_error", "expected_error", "nondeterministic")

#: Longest piece of call text or result quoted in a message.
QUOTE = 100


@dataclass(frozen=True)
class CallFailure:
    """One reason a task is not valid: its kind, the turn and gold call it is about (None: the task as a whole)."""

    kind: str
    reason: str
    turn: int | None = None
    #: The index of the gold call (a call text of `ground_truth[turn]`) within its turn.
    call: int | None = None
    text: str = ""


def describe(failure: CallFailure, task_id: str, where: str | None = None) -> str:
    """One line: where the task is (`file:line`), its id, the turn and call, and the reason."""
    head = f"{where}: " if where else ""
    place = ""
    if failure.turn is not None and failure.call is not None:
        place = f"turn {failure.turn}, call {failure.call} {_quote(failure.text)}: "
    elif failure.turn is not None:
        place = f"turn {failure.turn}: "
    return f"{head}task {task_id}: {place}{failure.reason}"


def _quote(text: str, limit: int = QUOTE) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- the schema check -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCheck:
    """A tool's argument schema, its parameters in doc order, and the validator of its arguments."""

    schema: dict[str, Any]
    names: tuple[str, ...]
    validator: Any
    #: Why the schema itself cannot be used (not valid JSON Schema), or None.
    broken: str | None = None


@cache
def _tools(owner: str) -> dict[str, ToolCheck]:
    """Function name -> its checker, for one class key (built once per process)."""
    untyped: dict[str, set[str]] = {}
    for key in domain_of(owner).untyped_arguments(owner):
        function, _, parameter = key.partition(".")
        untyped.setdefault(function, set()).add(parameter)
    return {doc["name"]: tool_check(doc, untyped.get(doc["name"], set())) for doc in function_docs([owner])[owner]}


def tool_check(doc: dict[str, Any], untyped: Set[str] = frozenset()) -> ToolCheck:
    """The check of one function doc's arguments; `untyped` names parameters whose type is not checked."""
    from jsonschema import exceptions, validators

    schema = argument_schema(doc)
    for name in untyped & set(schema["properties"]):  # the domain's own tasks do not keep to its type
        schema["properties"][name] = {}
    names = tuple(schema["properties"])
    base = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        base.check_schema(schema)
    except exceptions.SchemaError as err:
        return ToolCheck(schema, names, None, f"the schema of {doc['name']} is not valid JSON Schema: {err.message}")
    # a Python tuple is an array (BFCL's gold passes a few); JSON Schema's "number" already takes integers
    checker = base.TYPE_CHECKER.redefine("array", lambda _, value: isinstance(value, (list, tuple)))
    return ToolCheck(schema, names, validators.extend(base, type_checker=checker)(schema))


def argument_failure(call: ToolCall, tool: ToolCheck) -> str | None:
    """Why a call's arguments do not fit its tool's schema, or None."""
    if tool.broken:
        return tool.broken
    names = tool.names
    if len(call.args) > len(names):
        return f"{call.name} takes {len(names)} argument(s), got {len(call.args)} positional"
    given = dict(zip(names, call.args))  # positional arguments, in the doc's parameter order
    for name, value in call.arguments.items():
        if name in given:
            return f"argument '{name}' is given twice (by position and by name)"
        given[name] = value
    open_names = tool.schema.get("additionalProperties", False) not in (False, None)
    unknown = [name for name in call.arguments if name not in tool.schema["properties"]]
    if unknown and not open_names:
        known = ", ".join(names) or "none"
        return f"unknown argument '{unknown[0]}' ({call.name} takes: {known})"
    missing = [name for name in tool.schema.get("required", []) if name not in given]
    if missing:
        return f"missing required argument '{missing[0]}'"
    from jsonschema.exceptions import best_match

    error = best_match(tool.validator.iter_errors(given))
    if error is None:
        return None
    path = list(error.absolute_path)
    where = (f"argument '{path[0]}'" + "".join(f"[{p!r}]" for p in path[1:])) if path else "arguments"
    return _quote(f"{where}: {error.message}", 3 * QUOTE)


def static_failure(call: ToolCall, owners: Mapping[str, str]) -> tuple[str, str] | None:
    """(kind, reason) if a parsed call names no function of the environment or does not fit its schema."""
    owner = owners.get(call.name)
    if owner is None:
        close = difflib.get_close_matches(call.name, list(owners), n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        return "unknown_function", f"unknown function '{call.name}'{hint}"
    tool = _tools(owner).get(call.name)
    if tool is None:
        return "schema", f"{call.name} has no schema: the model is never shown it"
    reason = argument_failure(call, tool)
    return ("schema", reason) if reason else None


# -- replays ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Gold:
    """One parsed gold call: its turn, the index of its call text, and the call."""

    turn: int
    index: int
    call: ToolCall


@dataclass
class _Replay:
    results: list[str]
    #: The snapshot after each turn.
    snapshots: list[Any]


def _replay(task: Task, gold: list[_Gold]) -> _Replay:
    """The gold calls run on a fresh environment of the task."""
    env = environment_for(task)
    try:
        results: list[str] = []
        snapshots: list[Any] = []
        for turn in range(task.num_turns):
            results += [env.execute(g.call) for g in gold if g.turn == turn]
            snapshots.append(env.snapshot())
        return _Replay(results, snapshots)
    finally:
        env.close()


def error_of(owners: Mapping[str, str], call: ToolCall, result: str) -> str | None:
    """Why a call's result is a failure by the error convention of its class's domain, or None."""
    owner = owners.get(call.name)
    return standard_error(result) if owner is None else domain_of(owner).error_of(owner, result)


def first_difference(a: Any, b: Any, path: str = "") -> str:
    """Where two JSON values first differ, as a path (`books['bk-1'].lent_to`); "" at the top."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if a.get(key) != b.get(key) or (key in a) != (key in b):
                return first_difference(a.get(key), b.get(key), f"{path}[{key!r}]")
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
    return path


# -- a task -----------------------------------------------------------------------------------------


def validate_task(task: Task, *, replays: int = 2) -> list[CallFailure]:
    """Every reason `task` is not valid (see the module docstring); empty: it is.

    `replays=1` skips the determinism check (the synthesis gate's reward check
    replays the gold again anyway). Never raises for a bad task: an environment
    that cannot be loaded or run is a failure of kind "environment".
    """
    failures: list[CallFailure] = []
    gold: list[_Gold] = []
    texts: dict[tuple[int, int], str] = {}
    for t, turn in enumerate(task.ground_truth):
        for i, text in enumerate(turn):
            texts[t, i] = text
            try:
                gold += [_Gold(t, i, call) for call in parse_calls(text)]
            except CallParseError as err:
                failures.append(CallFailure("parse", f"not a call: {err}", t, i, text))
    try:
        owners = method_owners(task.involved_classes)
        checked: set[tuple[int | None, int | None]] = {(f.turn, f.call) for f in failures}
        for g in gold:
            found = static_failure(g.call, owners) if (g.turn, g.index) not in checked else None
            if found:
                checked.add((g.turn, g.index))
                failures.append(CallFailure(found[0], found[1], g.turn, g.index, format_call(g.call)))
        runs = [_replay(task, gold) for _ in range(max(1, replays))]
    except Exception as err:  # a class that does not load or run: the task's failure, not the caller's crash
        return [*failures, CallFailure("environment", f"the environment cannot be run: {type(err).__name__}: {err}")]
    expected = task.expected_error_calls()
    for g, result in zip(gold, runs[0].results):
        if (g.turn, g.index) in checked:
            continue
        why = error_of(owners, g.call, result)
        if (g.turn, g.index) in expected and why is None:
            checked.add((g.turn, g.index))
            failures.append(CallFailure("expected_error", f"marked as expected to fail (expected_errors) but it "
                                        f"succeeded: {_quote(result)}", g.turn, g.index, format_call(g.call)))
        elif (g.turn, g.index) not in expected and why is not None:
            checked.add((g.turn, g.index))
            failures.append(CallFailure("call_error", f"the call fails: {_quote(why)}", g.turn, g.index,
                                        format_call(g.call)))
    for other in runs[1:]:
        disagreement = _disagreement(gold, runs[0], other)
        if disagreement:
            failures.append(disagreement)
            break
    return failures


def _disagreement(gold: list[_Gold], one: _Replay, two: _Replay) -> CallFailure | None:
    """The first result or turn-end snapshot where two replays differ, or None."""
    for g, a, b in zip(gold, one.results, two.results):
        if a != b:
            return CallFailure("nondeterministic", f"two replays return different results: {_quote(a)!r} vs "
                               f"{_quote(b)!r}", g.turn, g.index, format_call(g.call))
    for turn, (a, b) in enumerate(zip(one.snapshots, two.snapshots)):
        if a != b:
            where = first_difference(a, b)
            return CallFailure("nondeterministic", "two replays leave different states"
                               + (f" (first at {where})" if where else ""), turn)
    return None
