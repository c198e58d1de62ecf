"""`EngineState`: everything the data engine decides with, in one object (docs/design.md §3.6).

`DataEngine` (`rods.engine.engine`) changes it under its lock;
`rods.engine.persistence` reads and writes it, and nothing else, so what is
saved is exactly what a resumed engine decides with. Two kinds of fields:

* the record: config, RNG, replay pool, ledger rows, exclusion windows,
  counters and the per-task steps (`persistence` saves and restores these);
* indexes rebuilt from the record (`index`): the seed selector's heaps, zone
  counts, the running sum of phi, per-step group counts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from rods.engine.config import TASK_TYPES, EngineConfig
from rods.engine.ledger import RewardLedger, TaskStats
from rods.engine.pool import ReplayPool
from rods.engine.select import BoundarySeedSelector
from rods.engine.zones import ZONES, phi
from rods.tasks import Task

#: The engine's counters, all starting at zero.
COUNTERS = ("accepted", "rejected", "injected", "retired", "expired", "selected")


@dataclass(eq=False)
class EngineState:
    """The data engine's whole decision state.

    Attributes:
        config: the engine's settings.
        rng: the only randomness (`random_seeds`).
        pool: which tasks are active, queued or retired.
        seq: the last sequence number given to a task (pool order).
        last_step: the latest step seen (-1 before any).
        epochs: epoch boundaries processed.
        counters: totals of accepted, rejected, injected, retired, expired, selected.
        seeded_once: tasks already used as seeds (`one_shot`).
        active_seq / accepted_step / entry_step / retired_step: per task, its
            place in the active pool and the steps it was accepted, entered and left.
        ledger, selector, zone_counts, phi_sum: indexes of the active tasks.
        dirty: tasks observed since the ledger was last persisted.
        step_groups: step -> [groups observed, groups whose rewards varied].
        ignored: observations that arrived after their task's retirement.
    """

    config: EngineConfig
    rng: random.Random
    pool: ReplayPool
    seq: int = 0
    last_step: int = -1
    epochs: int = 0
    counters: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTERS, 0))
    seeded_once: set[str] = field(default_factory=set)
    active_seq: dict[str, int] = field(default_factory=dict)
    accepted_step: dict[str, int | None] = field(default_factory=dict)
    entry_step: dict[str, int] = field(default_factory=dict)
    retired_step: dict[str, int] = field(default_factory=dict)
    ledger: RewardLedger = field(init=False)
    selector: BoundarySeedSelector = field(init=False)
    zone_counts: dict[str, int] = field(init=False)
    phi_sum: float = field(init=False)
    dirty: set[str] = field(init=False)
    step_groups: dict[int, list[int]] = field(init=False)
    ignored: int = field(init=False)

    def __post_init__(self) -> None:
        self.clear_indexes()

    @classmethod
    def fresh(cls, config: EngineConfig, seeds: list[Task]) -> EngineState:
        """The state of a new engine: the human seeds active, in the order given."""
        state = cls(config=config, rng=random.Random(config.seed), pool=ReplayPool(seeds))
        for task in seeds:
            state.seq += 1
            state.active_seq[task.id] = state.seq
            state.entry_step[task.id] = 0
            state.activate(task, 0)
        return state

    def clear_indexes(self) -> None:
        """Empty ledger, selector and counts (a restore then re-activates every active task)."""
        cfg = self.config
        self.ledger = RewardLedger(
            K=cfg.K,
            alpha_minus=cfg.alpha_minus,
            alpha_plus=cfg.alpha_plus,
            min_observations=cfg.min_observations,
            burn_in_rollouts=cfg.burn_in_rollouts,
        )
        self.selector = BoundarySeedSelector(cfg)
        self.zone_counts = {z: 0 for z in ZONES}
        self.phi_sum = 0.0
        self.dirty = set()
        self.step_groups = {}
        self.ignored = 0

    # -- the active set and its indexes ---------------------------------------------------

    def eligible_seed(self, task: Task) -> bool:
        """Whether `task` may ever be selected as a seed."""
        if self.config.one_shot:
            return task.id in self.pool.seed_ids and task.id not in self.seeded_once
        return task.id in self.pool.seed_ids or self.config.seeds_from_synthetic

    def activate(self, task: Task, entry_step: int, row: dict[str, Any] | None = None) -> TaskStats:
        """Index an active task: a new ledger entry (or a stored `row`), its zone, phi and seed eligibility."""
        if row is None:
            stats = self.ledger.add(task.id, task.task_type, task.origin, entry_step)
        else:
            stats = self.ledger.load_row(row)
        self.zone_counts[stats.zone] += 1
        if stats.zone != "new":
            self.phi_sum += phi(stats.mean)
        if self.eligible_seed(task):
            self.selector.add(task.id, task.task_type)
            self.selector.update(task.id, stats.zone, stats.mean)
        return stats

    def deactivate(self, task_id: str) -> TaskStats:
        """Drop a retired task from every index; returns its last ledger entry."""
        stats = self.ledger.remove(task_id)
        self.zone_counts[stats.zone] -= 1
        if stats.zone != "new":
            self.phi_sum -= phi(stats.mean)
        self.selector.remove(task_id)
        self.dirty.discard(task_id)
        return stats

    def observe(self, stats: TaskStats, step: int, values: list[float], varied: bool) -> None:
        """Fold one group's rewards into the ledger entry and every index."""
        old_zone, old_mean = stats.zone, stats.mean
        self.ledger.observe_stats(stats, step, values)
        zone, mean = stats.zone, stats.mean
        if old_zone != zone:
            self.zone_counts[old_zone] -= 1
            self.zone_counts[zone] += 1
        if old_zone != "new":
            self.phi_sum -= 4.0 * old_mean * (1.0 - old_mean)
        if zone != "new":
            self.phi_sum += 4.0 * mean * (1.0 - mean)
        self.selector.update(stats.task_id, zone, mean)
        self.dirty.add(stats.task_id)
        counts = self.step_groups.get(step)
        if counts is None:
            counts = self.step_groups[step] = [0, 0]
        counts[0] += 1
        if varied:
            counts[1] += 1
        if step > self.last_step:
            self.last_step = step

    # -- what the engine reports -------------------------------------------------------------

    def metrics(self, step: int) -> dict[str, Any]:
        """Per-step metrics: zones, pool by origin, queue, informative fraction, mean phi."""
        groups, informative = self.step_groups.get(step, (0, 0))
        for old in [s for s in self.step_groups if s < step - 64]:
            del self.step_groups[old]
        classified = len(self.ledger) - self.zone_counts["new"]
        pool = self.pool
        return {
            "step": step,
            "epoch": self.epochs,
            "zones": dict(self.zone_counts),
            "boundary_by_type": {t: self.selector.boundary_count(t) for t in TASK_TYPES},
            "active": len(pool.active),
            "active_seed": len(pool.active) - pool.n_synthetic_active,
            "active_synthetic": pool.n_synthetic_active,
            "queue": len(pool.queue),
            "retired": len(pool.retired),
            "groups": groups,
            "informative_fraction": (informative / groups) if groups else None,
            "mean_phi": (self.phi_sum / classified) if classified else None,
            "ignored_observations": self.ignored,
            **{f"total_{k}": v for k, v in self.counters.items()},
        }
