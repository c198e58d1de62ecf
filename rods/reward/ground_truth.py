"""Ground-truth executions, computed once per task and reused by all its rollouts.

For every turn t the ground truth's calls of turns 0..t are executed on one
environment; we keep each turn's execution results and a deep snapshot of the
public state (what BFCL's state checker compares), plus a pristine template
environment that rollouts fork instead of reloading the scenario.
"""

from __future__ import annotations

import json
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass
from typing import Any

from rods.envs import EnvTemplate, ToolEnvironment
from rods.tasks.model import Task

#: How many tasks' ground truths the process keeps (LRU).
CACHE_SIZE = 4096


@dataclass(frozen=True)
class GroundTruth:
    """What the reward compares a rollout against, for one task."""

    task_id: str
    #: Per turn: the ground truth's formatted execution results.
    results: tuple[tuple[str, ...], ...]
    #: Per turn: class -> public attribute -> value after the ground truth of turns 0..t.
    states: tuple[dict[str, dict[str, Any]], ...]
    #: Per turn: whether BFCL checks the turn (its ground truth is non-empty).
    checked: tuple[bool, ...]
    template: EnvTemplate
    #: Per turn: class -> whether the initial state already equals the ground truth's
    #: (decides the state check of classes a rollout never touched).
    initial_matches: tuple[dict[str, bool], ...]
    #: Per turn: the ground-truth results as (result, count) pairs (a multiset).
    needed: tuple[tuple[tuple[str, int], ...], ...]

    @property
    def num_turns(self) -> int:
        return len(self.results)

    def new_env(self) -> ToolEnvironment:
        """A fresh environment in the task's initial state (a fork of the pristine template)."""
        return self.template.spawn()


def compute_ground_truth(task: Task) -> GroundTruth:
    """Execute a task's ground truth turn by turn (no cache)."""
    template = EnvTemplate.load(task)
    env = template.spawn()
    initial = template.spawn().state()  # never executed on: safe to keep live
    results, states = [], []
    previous: dict[str, dict[str, Any]] | None = None
    for turn in task.ground_truth:
        results.append(tuple(env.execute_all(turn)))
        state = env.state()
        # Unchanged state (read-only or empty turn): share the previous snapshot.
        if previous is None or not turn or state != previous:
            previous = env.snapshot()
        states.append(previous)
    return GroundTruth(
        task_id=task.id,
        results=tuple(results),
        states=tuple(states),
        checked=tuple(bool(turn) for turn in task.ground_truth),
        template=template,
        initial_matches=tuple({cls: initial[cls] == state[cls] for cls in state} for state in states),
        needed=tuple(tuple(Counter(r).items()) for r in results),
    )


def task_fingerprint(task: Task) -> str:
    """Everything the ground-truth execution depends on, as one string."""
    return json.dumps(
        [task.initial_config, task.involved_classes, task.ground_truth, task.long_context],
        sort_keys=True,
        default=str,
    )


class _Cache:
    def __init__(self, size: int):
        self.size = size
        self.entries: OrderedDict[str, tuple[Task, str | None, GroundTruth]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, task: Task) -> GroundTruth:
        with self.lock:
            entry = self.entries.get(task.id)
            if entry is not None:
                cached_task, fingerprint, gt = entry
                if cached_task is task:
                    self.entries.move_to_end(task.id)
                    return gt
                fingerprint = fingerprint or task_fingerprint(cached_task)
                if fingerprint == task_fingerprint(task):
                    self.entries[task.id] = (task, fingerprint, gt)
                    self.entries.move_to_end(task.id)
                    return gt
        gt = compute_ground_truth(task)
        with self.lock:
            self.entries[task.id] = (task, None, gt)
            self.entries.move_to_end(task.id)
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)
        return gt

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


_CACHE = _Cache(CACHE_SIZE)


def ground_truth_for(task: Task) -> GroundTruth:
    """The task's ground truth, computed on first use and cached per task.

    A cached entry is reused for the same task object, or for another object
    with the same id whose config and ground truth are equal; tasks are treated
    as immutable once scored.
    """
    return _CACHE.get(task)


def clear_ground_truth_cache() -> None:
    """Forget all cached ground truths."""
    _CACHE.clear()
