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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rods.envs import (
    CallParseError,
    format_call,
    format_result,
    parse_call_text,
    public_state,
)
from rods.envs.classes import freeze, thaw
from rods.envs.contract import FrozenEnvironment, RolloutEnvironment, template_from, template_with_state
from rods.envs.domains import domain_of
from rods.reward.disk_cache import GroundTruthDiskCache

if TYPE_CHECKING:
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
    template: FrozenEnvironment
    #: Per turn: class -> whether the initial state already equals the ground truth's
    #: (decides the state check of classes a rollout never touched).
    initial_matches: tuple[dict[str, bool], ...]
    #: Per turn: the ground-truth results as (result, count) pairs (a multiset).
    needed: tuple[tuple[tuple[str, int], ...], ...]
    #: Per turn: the ground truth's calls in canonical form (None where one does not parse).
    call_keys: tuple[tuple[str, ...] | None, ...] = ()
    #: Per turn: the ground-truth environment after that turn, frozen.
    turn_templates: tuple[FrozenEnvironment, ...] = field(default=(), compare=False, repr=False)
    #: The ground truth's call texts per turn.
    calls: tuple[tuple[str, ...], ...] = ()
    #: Per turn: whether the ground truth's own state passes its state check (it
    #: does, unless a value is unequal to itself, e.g. NaN).
    self_match: tuple[bool, ...] = ()
    #: The key sets of the JSON objects among all turns' results; None when a result
    #: that looks like an object does not parse as one (see `result_formatter`).
    object_keys: frozenset[frozenset[str]] | None = None

    @property
    def num_turns(self) -> int:
        return len(self.results)

    def new_env(self) -> RolloutEnvironment:
        """A fresh environment in the task's initial state (a fork of the pristine template)."""
        return self.template.spawn()

    def untouched_verdicts(self, env: RolloutEnvironment, turn: int) -> dict[str, bool] | None:
        """State verdicts at `turn` for the classes `env` never thawed, if it came from one of our templates."""
        template = getattr(env, "template", None)
        if template is None:
            return None
        if template is self.template:
            return self.initial_matches[turn]
        for k, turn_template in enumerate(self.turn_templates):
            if template is turn_template:
                after, now = self.states[k], self.states[turn]
                return {cls: after[cls] == now[cls] for cls in now}
        return None

    def result_formatter(self) -> Callable[[Any], str]:
        """BFCL's `format_result`, except for dicts that can equal no ground-truth result.

        A rollout's results only count where they equal one of the ground truth's
        (the response check). `json.dumps` of a dict with string keys is a JSON
        object with those keys, so a dict whose key set no ground-truth object has
        cannot match: it becomes `UNMATCHED` without being serialized (long-context
        listings are the reward's costliest results to format).
        """
        keysets = self.object_keys
        if keysets is None:
            return format_result

        def formatter(value: Any) -> str:
            if type(value) is dict and frozenset(value) not in keysets and all(type(k) is str for k in value):
                return UNMATCHED
            return format_result(value)

        return formatter

    def env_after(self, turn: int) -> RolloutEnvironment:
        """A fresh environment in the ground truth's state after `turn` (-1: the initial state)."""
        return self.template.spawn() if turn < 0 else self.turn_templates[turn].spawn()


#: The result of a call whose formatted result can equal no ground-truth result.
UNMATCHED = "\x00rods: a result no ground-truth result can equal"


def _object_keys(results: tuple[tuple[str, ...], ...]) -> frozenset[frozenset[str]] | None:
    """Key sets of the JSON objects among the results; None if one starting with '{' is no JSON object."""
    keysets = set()
    for text in {r for turn in results for r in turn}:
        if text == UNMATCHED:
            return None
        if not text.startswith("{"):
            continue
        try:
            value = json.loads(text)
        except ValueError:
            return None
        if type(value) is not dict:
            return None
        keysets.add(frozenset(value))
    return frozenset(keysets)


def call_keys(calls: list[str]) -> tuple[str, ...] | None:
    """Calls in a canonical form: equal keys execute identically (None if one does not parse).

    The key is the pythonic text rebuilt from the parsed call with `repr`, so
    `f(a=1)` and `f(a = 1)` match but `f(a=1)` and `f(a=True)` do not.
    """
    keys = []
    for text in calls:
        key = _call_key(text) if len(text) <= 2000 else _call_key.__wrapped__(text)
        if key is None:
            return None
        keys.append(key)
    return tuple(keys)


@lru_cache(maxsize=65536)
def _call_key(text: str) -> str | None:
    try:
        parsed, container = parse_call_text(text)
    except CallParseError:
        return None
    if container is not None or len(parsed) != 1:
        return None
    return format_call(parsed[0])


def compute_ground_truth(task: Task) -> GroundTruth:
    """Execute a task's ground truth turn by turn (no cache)."""
    template, initial = template_with_state(task)  # `initial`: compare only, below
    env = template.spawn()
    classes, owners = template.involved_classes, template.owners
    blobs = dict(template.blobs)
    results, states, self_match, turn_templates = [], [], [], []
    snapshot: dict[str, dict[str, Any]] | None = None
    for turn in task.ground_truth:
        results.append(tuple(env.execute_all(turn)))
        # Only classes whose methods ran can have changed (they never share data):
        # re-freeze those; rollouts leaving the ground truth's path after this turn
        # start from these bytes, and the snapshot is thawed from the same bytes.
        called = env.take_called()
        for cls in called:
            blobs[cls] = freeze(env.instance(cls))
        turn_templates.append(template_from(dict(blobs), classes, template.long_context, owners))
        if snapshot is None:
            snapshot = {cls: public_state(thaw(blobs[cls])) for cls in classes}
        else:
            changed = [cls for cls in called if public_state(env.instance(cls)) != snapshot[cls]]
            if changed:  # otherwise share the previous snapshot
                snapshot = {**snapshot, **{cls: public_state(thaw(blobs[cls])) for cls in changed}}
        states.append(snapshot)
        self_match.append(state_equal(env, snapshot))
    initial_matches = tuple({cls: initial[cls] == state[cls] for cls in state} for state in states)
    del initial
    return GroundTruth(
        task_id=task.id,
        results=tuple(results),
        states=tuple(states),
        checked=tuple(bool(turn) for turn in task.ground_truth),
        template=template,
        initial_matches=initial_matches,
        needed=tuple(tuple(Counter(r).items()) for r in results),
        call_keys=tuple(call_keys(turn) for turn in task.ground_truth),
        calls=tuple(tuple(turn) for turn in task.ground_truth),
        turn_templates=tuple(turn_templates),
        self_match=tuple(self_match),
        object_keys=_object_keys(tuple(results)),
    )


_MISSING = object()


def state_equal(env: RolloutEnvironment, expected: dict[str, dict[str, Any]]) -> bool:
    """BFCL's `_compare_instances` over all classes: model attribute != ground truth's fails."""
    for cls, attrs in expected.items():
        instance = env.instance(cls)
        for name, value in attrs.items():
            if getattr(instance, name, _MISSING) != value:
                return False
    return True


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
        #: Where computed ground truths are also kept between processes (None: memory only).
        self.disk: GroundTruthDiskCache | None = None

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
        fingerprint = None
        # Only classes whose code a domain names may be cached on disk (`Domain.cache_code`): a user's
        # environment code can change between runs without the task changing.
        code = [domain_of(cls).cache_code for cls in task.involved_classes]
        disk = self.disk if all(code) else None
        if disk is not None:
            fingerprint = task_fingerprint(task)
            modules = "\n".join(sorted({m for names in code for m in names}))
            key = f"{task.id}\n{fingerprint}\n{modules}"
            stored = disk.load(key)
            if stored is None:
                stored = compute_ground_truth(task)
                disk.store(key, stored)
            gt = stored
        else:
            gt = compute_ground_truth(task)
        with self.lock:
            self.entries[task.id] = (task, fingerprint, gt)
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
    """Forget all ground truths cached in memory (a disk cache keeps its files)."""
    _CACHE.clear()


@contextmanager
def disk_cache(folder: str | Path | None) -> Iterator[GroundTruthDiskCache | None]:
    """Within the block, also keep ground truths in `folder` between processes (None: memory only).

    `rods reward` uses this; a training process keeps its ground truths in memory.
    """
    previous = _CACHE.disk
    _CACHE.disk = GroundTruthDiskCache(folder) if folder is not None else None
    try:
        yield _CACHE.disk
    finally:
        _CACHE.disk = previous
