"""The dynamic replay pool: active pool, candidate queue, staged injection, retirement (docs/design.md §3.4).

Accepted variants wait in a candidate queue and join the active pool only at
epoch boundaries, at most `max_injection_fraction` of the active pool size
(counted after this boundary's retirements) at a time, newest first by default
(`inject_order`); candidates older than `candidate_max_age_steps` expire, since
they were made for a boundary the policy has left. Retirement (synthesized tasks only; human seeds never leave), in
this order, each task retired for the first reason that applies:

1. *burn-in*: the mean of its first `burn_in_rollouts` rewards is below
   `burn_in_threshold`;
2. *boundary drift*: it is classified `mastered` or `hard`;
3. *staleness*: not sampled for `stale_after_steps` steps (counted from its
   entry when never sampled);
4. *variance-prioritised pruning*: when the synthesized tasks plus the
   injection would exceed `capacity`, the classified ones with the lowest
   reward variance go first (ties by task id); unclassified ones are pruned
   (oldest first) only if capacity is exceeded even without injection.
   Injection is then cut so that the synthesized count never exceeds capacity.

`plan_epoch` is pure: it computes the decisions, so the engine can commit them
to the store before applying them.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from rods.engine.config import EngineConfig
from rods.engine.ledger import RewardLedger
from rods.tasks import Task, content_hash


def lowest_variance(task_ids: list[str], k: int, ledger: RewardLedger) -> list[str]:
    """The k tasks of lowest reward variance, ties by task id, in O(n) (not O(n log k)).

    A linear-time partition finds the k-th smallest variance; only the tasks
    tied at that value are sorted, so the chosen set equals the first k by
    (variance, id). They come back in pool order.
    """
    if k <= 0:
        return []
    if k >= len(task_ids):
        return sorted(task_ids, key=lambda t: (ledger.get(t).variance, t))
    var = np.fromiter((ledger.get(t).variance for t in task_ids), dtype=float, count=len(task_ids))
    kth = np.partition(var, k - 1)[k - 1]
    below = [task_ids[i] for i in np.flatnonzero(var < kth)]
    tied = sorted(task_ids[i] for i in np.flatnonzero(var == kth))
    return below + tied[: k - len(below)]


@dataclass
class EpochPlan:
    """Decisions of one epoch boundary, before they are applied."""

    step: int
    retire: dict[str, str] = field(default_factory=dict)  # active task id -> reason
    inject: list[str] = field(default_factory=list)
    expire: list[str] = field(default_factory=list)  # queued candidates that aged out


class ReplayPool:
    """Which tasks are active, queued or retired (and why)."""

    def __init__(self, seeds: list[Task]) -> None:
        self.active: dict[str, Task] = {}
        self.queue: dict[str, Task] = {}  # insertion order = acceptance order
        self.queue_step: dict[str, int] = {}  # queued task id -> step accepted
        self.retired: dict[str, str] = {}  # task id -> reason
        self.seed_ids: set[str] = set()
        self.fingerprints: dict[str, str] = {}  # fingerprint -> task id (every task ever known)
        self.n_synthetic_active = 0
        for task in seeds:
            if task.id in self.active:
                raise ValueError(f"seed task id {task.id!r} appears twice")
            self.active[task.id] = task
            self.seed_ids.add(task.id)
            self.fingerprints.setdefault(content_hash(task), task.id)

    def knows(self, task_id: str) -> bool:
        return task_id in self.active or task_id in self.queue or task_id in self.retired

    def status(self, task_id: str) -> str | None:
        if task_id in self.active:
            return "active"
        if task_id in self.queue:
            return "queued"
        if task_id in self.retired:
            return "retired"
        return None

    def check_candidate(self, task: Task, fp: str) -> str | None:
        """Why a candidate cannot be accepted, or None if it can."""
        if task.origin != "synthetic":
            return "provenance.origin must be 'synthetic' for a candidate"
        if self.knows(task.id):
            return f"task id already {self.status(task.id)}"
        if fp in self.fingerprints:
            return f"same content as task {self.fingerprints[fp]!r}"
        return None

    def enqueue(self, task: Task, fp: str, step: int) -> None:
        self.queue[task.id] = task
        self.queue_step[task.id] = step
        self.fingerprints[fp] = task.id

    def drop_queued(self, task_id: str, reason: str) -> None:
        del self.queue[task_id]
        self.queue_step.pop(task_id, None)
        self.retired[task_id] = reason

    def plan_epoch(self, step: int, ledger: RewardLedger, cfg: EngineConfig) -> EpochPlan:
        """Decide retirements and injections at an epoch boundary (no mutation)."""
        plan = EpochPlan(step=step)
        synthetic = [tid for tid in self.active if tid not in self.seed_ids]
        if not cfg.no_retirement:
            for tid in synthetic:
                reason = self._retire_reason(step, ledger, tid, cfg)
                if reason:
                    plan.retire[tid] = reason
        max_age = cfg.candidate_max_age_steps
        if max_age is not None:
            plan.expire = [tid for tid, s in self.queue_step.items() if step - s > max_age]
        expired = set(plan.expire)
        waiting = [tid for tid in self.queue if tid not in expired]
        if cfg.inject_order == "newest":
            waiting.reverse()
        n_active = len(self.active) - len(plan.retire)
        n_inject = min(len(waiting), math.floor(cfg.max_injection_fraction * n_active + 1e-9))
        synth_after = len(synthetic) - len(plan.retire)
        if not cfg.no_retirement:
            need = max(0, synth_after - cfg.capacity)
            want = max(need, synth_after + n_inject - cfg.capacity)
            if want > 0:
                remaining = [tid for tid in synthetic if tid not in plan.retire]
                classified = [tid for tid in remaining if ledger.get(tid).zone != "new"]
                lowest = lowest_variance(classified, min(want, len(classified)), ledger)
                for tid in lowest:
                    plan.retire[tid] = "capacity"
                if len(lowest) < need:
                    fresh = [tid for tid in remaining if tid not in plan.retire]
                    oldest = heapq.nsmallest(
                        need - len(lowest), fresh, key=lambda t: (ledger.get(t).entry_step, t)
                    )
                    for tid in oldest:
                        plan.retire[tid] = "capacity"
                synth_after = len(synthetic) - len(plan.retire)
        # the cap applies to the pool after *all* retirements, capacity pruning included
        n_active = len(self.active) - len(plan.retire)
        n_inject = min(n_inject, math.floor(cfg.max_injection_fraction * n_active + 1e-9))
        n_inject = max(0, min(n_inject, cfg.capacity - synth_after))
        plan.inject = waiting[:n_inject]
        return plan

    @staticmethod
    def _retire_reason(step: int, ledger: RewardLedger, tid: str, cfg: EngineConfig) -> str | None:
        stats = ledger.get(tid)
        first = stats.first_mean(cfg.burn_in_rollouts)
        if first is not None and first < cfg.burn_in_threshold:
            return "burn_in"
        if stats.zone == "mastered":
            return "drift_mastered"
        if stats.zone == "hard":
            return "drift_hard"
        if cfg.stale_after_steps is not None:
            last = stats.last_step if stats.last_step is not None else stats.entry_step
            if step - last >= cfg.stale_after_steps:
                return "stale"
        return None

    def apply(self, plan: EpochPlan) -> list[Task]:
        """Apply a plan; returns the injected tasks."""
        for tid, reason in plan.retire.items():
            if tid in self.seed_ids:
                raise AssertionError(f"refusing to retire human seed {tid!r}")
            del self.active[tid]
            self.retired[tid] = reason
            self.n_synthetic_active -= 1
        for tid in plan.expire:
            self.drop_queued(tid, "expired")
        injected = []
        for tid in plan.inject:
            self.queue_step.pop(tid, None)
            task = self.queue.pop(tid)
            self.active[tid] = task
            self.n_synthetic_active += 1
            injected.append(task)
        return injected
