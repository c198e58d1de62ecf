"""The complexity profile Φ of a task (docs/design.md §4.1).

Φ is what a variant must share with its seed: the API classes, the number of
turns and of calls per turn, which turns are empty (miss_param / reveal turns),
how many functions each reveal turn brings back, and the *data-flow graph*
between calls with its depth.

A data-flow edge i -> j (indices into the task's flattened call list) exists
when an argument value of call j equals a value in call i's result, or a value
that call i created in the environment's state (a directory it made, a tweet id
it posted). Values too common to mean anything (booleans, small integers,
one-letter strings) never make edges. Φ is computed from `ground_truth` executed
on the task's own environment, never from BFCL's `path` field (which does not
match the ground truth's functions).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from rods.envs.calls import ToolCall, parse_calls
from rods.envs.contract import RolloutEnvironment, environment_for
from rods.envs.domain import standard_error
from rods.envs.domains import domain_of
from rods.envs.state import walk
from rods.synth import state
from rods.synth.value_kinds import SMALL_INT
from rods.tasks.model import Task


def parse_ground_truth(task: Task) -> list[list[ToolCall]]:
    """The task's ground-truth calls, parsed with `ast` (never evaluated)."""
    out = []
    for t, turn in enumerate(task.ground_truth):
        calls = []
        for text in turn:
            try:
                calls.extend(parse_calls(text))
            except ValueError as err:
                raise ValueError(f"task {task.id}: turn {t}: bad ground-truth call {text!r}: {err}") from err
        out.append(calls)
    return out


def call_values(call: ToolCall) -> list[Any]:
    """The argument values of a call (positional and keyword), lists flattened."""
    out: list[Any] = []
    for value in [*call.args, *call.arguments.values()]:
        out.extend(value if isinstance(value, list) else [value])
    return out


def linkable(value: Any) -> bool:
    """Whether a value is specific enough to make a data-flow edge."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return abs(value) > SMALL_INT or not float(value).is_integer()
    return isinstance(value, str) and len(value.strip()) >= 2


def result_value(text: str) -> Any:
    """A BFCL result string parsed back to a value (JSON dicts), else the string."""
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return text


def value_paths(value: Any, prefix: tuple = ()) -> list[tuple[tuple, Any]]:
    """(path, scalar) pairs of every leaf of a JSON-like value (dict keys not included)."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in value_paths(v, (*prefix, k))]
    if isinstance(value, (list, tuple)):
        return [p for i, v in enumerate(value) for p in value_paths(v, (*prefix, i))]
    return [(prefix, value)]


def scalars(leaves: list[tuple[str, Any]]) -> set:
    return {v for _, v in leaves if isinstance(v, (str, int, float)) and not isinstance(v, bool)}


@dataclass
class Trace:
    """One execution of a call sequence: results and the values each call created."""

    calls: list[ToolCall]
    turn_of: list[int]
    results: list[str]
    created: list[set] = field(default_factory=list)
    changed: list[bool] = field(default_factory=list)
    #: Per call: why it failed by its domain's error convention (`Domain.error_of`), or None.
    failures: list[str | None] = field(default_factory=list)
    #: Per call: created value -> where in the state it appeared (a `walk` path), for the values' roles.
    created_at: list[dict[Any, str]] = field(default_factory=list)

    @property
    def errors(self) -> list[tuple[int, str]]:
        """(call index, result) of every call that failed (an exception or an error result)."""
        failures = self.failures or [standard_error(r) for r in self.results]
        return [(i, r) for i, (r, why) in enumerate(zip(self.results, failures)) if why is not None]


def call_failure(env: RolloutEnvironment, call: ToolCall, result: str) -> str | None:
    """Why a call's result is a failure, by the error convention of the domain of the class that ran it."""
    owner = env.owners.get(call.name)
    return standard_error(result) if owner is None else domain_of(owner).error_of(owner, result)


def is_error(result: str) -> bool:
    """An exception or a result object carrying an "error" key (every domain's convention, `standard_error`)."""
    return standard_error(result) is not None


def environment_made(task: Task) -> frozenset:
    """String values in the task's loaded state that its config does not hold.

    A domain's loading may add records of its own (long-context filler files,
    ids a class assigns on loading); those names come from the simulator, so a
    variant keeps them as they are (`Domain.makes_own_values`).
    """
    from rods.synth.value_kinds import leaves

    env = environment_for(task)
    if all(state.is_delta(c) for c in env.involved_classes):
        loaded = set().union(*(state.initial_values(env, c, task.initial_config.get(c, {}))[1]
                               for c in env.involved_classes))
    else:
        loaded = scalars(walk(env.state()))
    config = set(v for v in leaves(task.initial_config) if isinstance(v, (str, int, float)))
    return frozenset(v for v in loaded - config if isinstance(v, str))


def trace_task(task: Task, calls: list[list[ToolCall]] | None = None) -> Trace:
    """Execute the ground truth (or `calls`) on a fresh environment of the task."""
    turns = parse_ground_truth(task) if calls is None else calls
    env = environment_for(task)
    flat = [c for turn in turns for c in turn]
    turn_of = [t for t, turn in enumerate(turns) for _ in turn]
    results, created, changed = [], [], []
    if all(state.is_delta(c) for c in env.involved_classes):
        trace = _trace_delta(task, env, flat, turn_of)
    else:
        before = walk(env.state())
        where: list[dict[Any, str]] = []
        for call in flat:
            results.append(env.execute(call))
            after = walk(env.state())
            created.append(scalars(after) - scalars(before))
            where.append({v: path for path, v in after if v in created[-1]})
            changed.append(sorted(map(repr, after)) != sorted(map(repr, before)))
            before = after
        trace = Trace(flat, turn_of, results, created, changed, created_at=where)
    trace.failures = [call_failure(env, c, r) for c, r in zip(trace.calls, trace.results)]
    return trace


def _trace_delta(task: Task, env: RolloutEnvironment, flat: list[ToolCall], turn_of: list[int]) -> Trace:
    """`trace_task` for delta classes (`rods.synth.state`): the loaded state walked once, then each call's delta."""
    classes = env.involved_classes
    seen = set().union(*(state.initial_values(env, c, task.initial_config.get(c, {}))[0] for c in classes))
    results, created, changed, where = [], [], [], []
    for call in flat:
        before = env.fork()
        results.append(env.execute(call))
        walked = walk({c: state.view(env, c) for c in classes})
        now = scalars(walked)
        created.append(now - seen)
        where.append({v: path for path, v in walked if v in created[-1]})
        seen |= now
        changed.append(not all(state.same_state(before, env, c) for c in classes))
    return Trace(flat, turn_of, results, created, changed, created_at=where)


def produced_values(result: str, created: set) -> set:
    """The linkable values a call makes available to later calls: its result's leaves and keys, and what it created."""
    parsed = result_value(result)
    values = {v for _, v in value_paths(parsed) if isinstance(v, (str, int, float))}
    if isinstance(parsed, dict):
        values |= {k for k in parsed if isinstance(k, str)}
    return {v for v in values | created if linkable(v)}


def incoming_edges(call: ToolCall, produced: list[set]) -> set[int]:
    """Sources i of the edges i -> this call: for each linkable argument, the latest earlier call that produced it."""
    sources = set()
    for value in call_values(call):
        if not linkable(value) or not isinstance(value, (str, int, float)):
            continue
        for i in range(len(produced) - 1, -1, -1):
            if value in produced[i]:
                sources.add(i)
                break
    return sources


def data_flow_edges(trace: Trace) -> list[tuple[int, int]]:
    """Edges i -> j: an argument of call j equals a result value or created value of call i."""
    produced = [produced_values(r, c) for r, c in zip(trace.results, trace.created)]
    return sorted((i, j) for j, call in enumerate(trace.calls) for i in incoming_edges(call, produced[:j]))


def dependency_depth(num_calls: int, edges: list[tuple[int, int]]) -> int:
    """Calls on the longest data-flow chain (0 without calls, 1 without edges)."""
    longest = [1] * num_calls
    for i, j in sorted(edges, key=lambda e: e[1]):
        longest[j] = max(longest[j], longest[i] + 1)
    return max(longest, default=0)


@dataclass(frozen=True)
class ComplexityProfile:
    """Φ: the structure a variant keeps (see the module docstring)."""

    category: str
    classes: tuple[str, ...]
    num_turns: int
    calls_per_turn: tuple[int, ...]
    empty_turns: tuple[int, ...]
    edges: tuple[tuple[int, int], ...]
    depth: int
    held_out: tuple[tuple[int, int], ...]  # (reveal turn, number of held-out functions)
    functions: tuple[str, ...] = ()  # informational: not part of the match
    held_out_functions: tuple[tuple[int, tuple[str, ...]], ...] = ()  # informational

    def mismatches(self, other: ComplexityProfile, *, same_counts: bool = True) -> list[str]:
        """Names of the structural fields where `other` differs (empty: a match)."""
        fields_ = ["category", "classes", "num_turns", "empty_turns", "depth", "held_out"]
        if same_counts:
            fields_ += ["calls_per_turn", "edges"]
        out = [f for f in fields_ if getattr(self, f) != getattr(other, f)]
        if not same_counts and self.topology() != other.topology():
            out.append("edges")
        return out

    def topology(self) -> tuple[tuple[int, int], ...]:
        """The data-flow edges renumbered over the calls that have one (calls without edges ignored)."""
        linked = sorted({i for edge in self.edges for i in edge})
        rank = {i: r for r, i in enumerate(linked)}
        return tuple((rank[i], rank[j]) for i, j in self.edges)

    def matches(self, other: ComplexityProfile, *, same_counts: bool = True) -> bool:
        return not self.mismatches(other, same_counts=same_counts)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def profile_of(task: Task, trace: Trace | None = None) -> ComplexityProfile:
    """Φ of a task, from its ground truth executed on its own initial config."""
    trace = trace or trace_task(task)
    edges = data_flow_edges(trace)
    turns = [len(t) for t in task.ground_truth]
    calls_per_turn = []
    for t in range(task.num_turns):
        calls_per_turn.append(sum(1 for x in trace.turn_of if x == t))
    del turns
    return ComplexityProfile(
        category=task.category,
        classes=tuple(sorted(task.involved_classes)),
        num_turns=task.num_turns,
        calls_per_turn=tuple(calls_per_turn),
        empty_turns=tuple(t for t, gt in enumerate(task.ground_truth) if not gt),
        edges=tuple(edges),
        depth=dependency_depth(len(trace.calls), edges),
        held_out=tuple((k, len(v)) for k, v in sorted(task.reveal_turns().items())),
        functions=tuple(c.name for c in trace.calls),
        held_out_functions=tuple((k, tuple(v)) for k, v in sorted(task.reveal_turns().items())),
    )
