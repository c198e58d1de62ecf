"""Perturbed trajectories: the ground truth with one realistic mistake each.

Used to test that the reward agrees with BFCL's official checker and to
benchmark it; also handy as cheap negative examples. Every perturbation is a
deterministic function of the task and a seed.
"""

from __future__ import annotations

import ast
import json
import random
from collections.abc import Iterator
from typing import Any, cast

from rods.envs.calls import ast_parse
from rods.envs.domains import domain_of
from rods.tasks.model import Task

Steps = list[list[list[str]]]

#: Malformed call texts that BFCL's `eval` also fails on (or turns into a harmless
#: non-call value): safe to feed to the official checker. Escapes such as
#: `__import__('os').system(...)` belong in the adversarial tests only: BFCL would run them.
BROKEN_CALLS = [
    "cd(folder='document'",
    "ls(",
    "this is not a call",
    "",
    "ls(a=undefined_name)",
    "[x for x in ()]",
    "f'{undefined_name}'",
    "nonexistent.attribute(x=1)",
]

KINDS = (
    "replay",
    "dropped",
    "duplicated",
    "swapped",
    "wrong_argument",
    "unknown_function",
    "extra_read_only",
    "empty_turn",
    "empty_step_turn",
    "moved_between_turns",
    "split_into_steps",
    "broken_call",
    "act_on_empty_turn",
    "truncated",
)
#: Also available, but outside BFCL's decoded (pythonic) format: not for agreement checks.
EXTRA_KINDS = ("json_call",)


def read_only_calls(cls: str) -> list[str]:
    """Calls of a class that change nothing (`Domain.read_only_calls`)."""
    return domain_of(cls).read_only_calls(cls)


def replay(task: Task) -> Steps:
    """The ground truth as a trajectory: one step per turn (no step where the turn is empty)."""
    return [[list(turn)] if turn else [] for turn in task.ground_truth]


def _calls(task: Task) -> list[tuple[int, int]]:
    return [(t, i) for t, turn in enumerate(task.ground_truth) for i in range(len(turn))]


def _wrong_argument(call: str, rng: random.Random) -> str:
    node = cast(ast.Expression, ast_parse(call, mode="eval")).body
    assert isinstance(node, ast.Call)
    slots: list[Any] = list(node.keywords) + list(range(len(node.args)))
    if not slots:
        return call[:-1] + "unexpected=1)"
    slot = rng.choice(slots)
    value_node = slot.value if isinstance(slot, ast.keyword) else node.args[slot]
    value = ast.literal_eval(value_node)
    if isinstance(value, bool):
        new: Any = not value
    elif isinstance(value, (int, float)):
        new = value + 7
    elif isinstance(value, str):
        new = value + "_x"
    elif isinstance(value, list):
        new = value[:-1] if value else ["x"]
    elif isinstance(value, dict):
        new = {**value, "extra": 1}
    else:
        new = None
    replacement = cast(ast.Expression, ast_parse(repr(new), mode="eval")).body
    if isinstance(slot, ast.keyword):
        slot.value = replacement
    else:
        node.args[slot] = replacement
    return ast.unparse(node)


def _json_call(call: str) -> str:
    node = cast(ast.Expression, ast_parse(call, mode="eval")).body
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    if node.args:  # JSON calls have no positional arguments: keep the pythonic text
        return call
    return json.dumps({"name": node.func.id, "arguments": {k.arg: ast.literal_eval(k.value) for k in node.keywords}})


def perturb(task: Task, kind: str, seed: int = 0) -> Steps | None:
    """One perturbed trajectory of `kind` (see `KINDS`), or None if it does not apply to the task."""
    rng = random.Random(f"{task.id}:{kind}:{seed}")
    steps = replay(task)
    calls = _calls(task)
    turns_with_calls = [t for t, turn in enumerate(task.ground_truth) if turn]
    if kind == "replay":
        return steps
    if kind in ("dropped", "duplicated", "wrong_argument", "broken_call", "json_call") and not calls:
        return None
    if kind == "dropped":
        t, i = rng.choice(calls)
        del steps[t][0][i]
        if not steps[t][0]:
            steps[t] = []
    elif kind == "duplicated":
        t, i = rng.choice(calls)
        steps[t][0].insert(i, steps[t][0][i])
    elif kind == "swapped":
        multi = [t for t in turns_with_calls if len(task.ground_truth[t]) > 1]
        if multi:
            t = rng.choice(multi)
            i = rng.randrange(len(steps[t][0]) - 1)
            row = steps[t][0]
            row[i], row[i + 1] = row[i + 1], row[i]
        elif len(turns_with_calls) > 1:  # swap whole turns instead
            a = rng.randrange(len(turns_with_calls) - 1)
            ta, tb = turns_with_calls[a], turns_with_calls[a + 1]
            steps[ta], steps[tb] = steps[tb], steps[ta]
        else:
            return None
    elif kind == "wrong_argument":
        t, i = rng.choice(calls)
        steps[t][0][i] = _wrong_argument(steps[t][0][i], rng)
    elif kind == "unknown_function":
        t = rng.randrange(task.num_turns)
        steps[t] = steps[t] or [[]]
        steps[t][0].insert(rng.randrange(len(steps[t][0]) + 1), "nonexistent_function(x=1)")
    elif kind == "extra_read_only":
        t = rng.randrange(task.num_turns)
        options = read_only_calls(rng.choice(task.involved_classes))
        if not options:
            return None
        extra = rng.choice(options)
        steps[t] = steps[t] or [[]]
        steps[t][0].insert(rng.randrange(len(steps[t][0]) + 1), extra)
    elif kind in ("empty_turn", "empty_step_turn"):
        if not turns_with_calls:
            return None
        t = rng.choice(turns_with_calls)
        # [[]] is empty for BFCL; [[], []] is not (is_empty_execute_response).
        steps[t] = [[]] if kind == "empty_turn" else [[], []]
    elif kind == "moved_between_turns":
        if not calls or task.num_turns < 2:
            return None
        t, i = rng.choice(calls)
        target = t + 1 if t + 1 < task.num_turns else t - 1
        call = steps[t][0].pop(i)
        if not steps[t][0]:
            steps[t] = []
        steps[target] = steps[target] or [[]]
        steps[target][0].append(call)
    elif kind == "split_into_steps":
        for t in turns_with_calls:
            row = steps[t][0]
            cut = rng.randrange(len(row) + 1)
            steps[t] = [row[:cut], row[cut:], []]
    elif kind == "broken_call":
        t, i = rng.choice(calls)
        steps[t][0][i] = rng.choice(BROKEN_CALLS + [steps[t][0][i][:-1]])
    elif kind == "truncated":
        if task.num_turns < 2:
            return None
        steps = steps[: rng.randrange(1, task.num_turns)]
    elif kind == "json_call":
        steps = [[[_json_call(c) for c in step] for step in turn] for turn in steps]
    elif kind == "act_on_empty_turn":
        empty = [t for t, turn in enumerate(task.ground_truth) if not turn]
        if not empty:
            return None
        t = rng.choice(empty)
        later = [c for turn in task.ground_truth[t + 1:] for c in turn]
        reads = read_only_calls(task.involved_classes[0])
        if not later and not reads:
            return None
        extra = later[0] if later and (rng.random() < 0.5 or not reads) else rng.choice(reads)
        steps[t] = [[extra]]
    else:
        raise ValueError(f"unknown perturbation {kind!r}; expected one of {KINDS + EXTRA_KINDS}")
    return steps


def perturbations(task: Task, seed: int = 0, kinds: tuple[str, ...] = KINDS) -> Iterator[tuple[str, Steps]]:
    """Every applicable perturbation of a task, as (kind, steps)."""
    for kind in kinds:
        steps = perturb(task, kind, seed)
        if steps is not None:
            yield kind, steps
