"""Typed configuration of the data engine, with the paper's values as defaults (docs/design.md §3.7).

Every baseline and ablation of docs/design.md §7.1 that concerns the engine is a setting
here: `random_seeds` (random seed choice), `no_retirement`, `one_shot`
(one-shot synthesis), and the capacity sweep via `capacity` (0/50/100/200/400
synthesized tasks on top of the human seeds; 0 is the static baseline).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

#: The seed-selection types of docs/design.md §3.3 (`Task.task_type`).
TASK_TYPES = ("basic", "miss_func", "miss_param")


@dataclass(frozen=True)
class EngineConfig:
    """Settings of detection, selection and the replay pool.

    Attributes:
        K: rollouts kept per task in the reward ledger (latest K progress rewards).
        alpha_minus: below this mean reward a task is `hard`.
        alpha_plus: above this mean reward a task is `mastered`; in between is `boundary`.
        min_observations: rewards a task needs before it is classified at all.
        max_seeds_per_step: M, the most boundary seeds selected per step.
        quotas: M_tau per type (basic covers base and long-context); their sum is M.
        quota_order: order in which unused quota is redistributed (round-robin,
            one slot at a time, to types that still have eligible candidates).
        redistribute_unused_quota: whether unused quota flows to other types at all.
        exclusion_window: c; a seed chosen at step s is not chosen again before s + c.
        seeds_from_synthetic: whether synthesized tasks may themselves become seeds.
        max_injection_fraction: at each epoch boundary inject at most this share
            of the active pool size (after retirement).
        capacity: P_max, the most synthesized tasks in the active pool; human
            seeds are never counted against it and never retired.
        burn_in_rollouts: rewards of a new task that make up its "first rewards".
        burn_in_threshold: a synthesized task whose first-rewards mean is below
            this is retired (burn-in layer).
        stale_after_steps: a synthesized task not sampled for this many steps is
            retired (staleness layer); None disables it.
        queue_capacity: most candidates waiting; the oldest are dropped (logged)
            beyond it; None is unbounded.
        inject_order: which queued candidates go in first: "newest" (made from the
            most recent boundary, so closest to the policy's current frontier) or
            "oldest" (FIFO).
        candidate_max_age_steps: candidates queued for longer than this are
            dropped at an epoch boundary (reason "expired"): they were made for a
            boundary the policy has since left; None keeps them forever.
        random_seeds: ablation "random seed choice": seeds drawn uniformly from
            eligible active tasks of each type, ignoring zones and phi.
        no_retirement: ablation: no task is ever retired; injection stops at capacity.
        one_shot: ablation "one-shot synthesis": seeds are selected only before
            the first epoch boundary, each task at most once, seeds only from
            the human set; afterwards the engine selects nothing.
        flush_every_steps: persist the ledger every this many steps (in
            `select_seeds`); 0 flushes only at epoch boundaries and on `save()`.
        seed: RNG seed (used only by `random_seeds`; all other decisions are
            deterministic and break ties by task id).
    """

    K: int = 16
    alpha_minus: float = 0.20
    alpha_plus: float = 0.85
    min_observations: int = 8
    max_seeds_per_step: int = 8
    quotas: dict[str, int] = field(
        default_factory=lambda: {"basic": 4, "miss_func": 2, "miss_param": 2}
    )
    quota_order: tuple[str, ...] = TASK_TYPES
    redistribute_unused_quota: bool = True
    exclusion_window: int = 20
    seeds_from_synthetic: bool = True
    max_injection_fraction: float = 0.20
    capacity: int = 400
    burn_in_rollouts: int = 8
    burn_in_threshold: float = 0.10
    stale_after_steps: int | None = 200
    queue_capacity: int | None = None
    inject_order: str = "newest"
    candidate_max_age_steps: int | None = 100
    random_seeds: bool = False
    no_retirement: bool = False
    one_shot: bool = False
    flush_every_steps: int = 10
    seed: int = 0

    def __post_init__(self) -> None:
        errors = []
        if self.K < 1:
            errors.append(f"K must be >= 1, got {self.K}")
        if not 0.0 <= self.alpha_minus <= self.alpha_plus <= 1.0:
            errors.append(
                f"need 0 <= alpha_minus <= alpha_plus <= 1, got {self.alpha_minus}, {self.alpha_plus}"
            )
        if not 1 <= self.min_observations <= self.K:
            errors.append(f"min_observations must be in [1, K={self.K}], got {self.min_observations}")
        if not 1 <= self.burn_in_rollouts <= self.K:
            errors.append(f"burn_in_rollouts must be in [1, K={self.K}], got {self.burn_in_rollouts}")
        unknown = set(self.quotas) - set(TASK_TYPES)
        if unknown:
            errors.append(f"quotas has unknown type(s) {sorted(unknown)}; types are {list(TASK_TYPES)}")
        if any(q < 0 for q in self.quotas.values()):
            errors.append(f"quotas must be >= 0, got {self.quotas}")
        if sum(self.quotas.values()) > self.max_seeds_per_step:
            errors.append(
                f"quotas sum to {sum(self.quotas.values())} > max_seeds_per_step={self.max_seeds_per_step}"
            )
        if set(self.quota_order) != set(TASK_TYPES) or len(self.quota_order) != len(TASK_TYPES):
            errors.append(f"quota_order must list each of {list(TASK_TYPES)} once, got {self.quota_order}")
        if self.exclusion_window < 0:
            errors.append(f"exclusion_window must be >= 0, got {self.exclusion_window}")
        if not 0.0 <= self.max_injection_fraction <= 1.0:
            errors.append(f"max_injection_fraction must be in [0, 1], got {self.max_injection_fraction}")
        if self.capacity < 0:
            errors.append(f"capacity must be >= 0, got {self.capacity}")
        if self.stale_after_steps is not None and self.stale_after_steps < 1:
            errors.append(f"stale_after_steps must be >= 1 or None, got {self.stale_after_steps}")
        if self.queue_capacity is not None and self.queue_capacity < 0:
            errors.append(f"queue_capacity must be >= 0 or None, got {self.queue_capacity}")
        if self.inject_order not in ("newest", "oldest"):
            errors.append(f"inject_order must be 'newest' or 'oldest', got {self.inject_order!r}")
        if self.candidate_max_age_steps is not None and self.candidate_max_age_steps < 0:
            errors.append(f"candidate_max_age_steps must be >= 0 or None, got {self.candidate_max_age_steps}")
        if self.flush_every_steps < 0:
            errors.append(f"flush_every_steps must be >= 0, got {self.flush_every_steps}")
        if errors:
            raise ValueError("invalid EngineConfig: " + "; ".join(errors))

    def quota(self, task_type: str) -> int:
        return self.quotas.get(task_type, 0)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict (tuples become lists)."""
        data = dataclasses.asdict(self)
        data["quota_order"] = list(self.quota_order)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EngineConfig:
        """Build from a dict (e.g. a YAML section); unknown keys are an error."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"unknown EngineConfig field(s) {sorted(unknown)}; known: {sorted(names)}")
        data = dict(data)
        if "quota_order" in data:
            data["quota_order"] = tuple(data["quota_order"])
        if "quotas" in data:
            data["quotas"] = dict(data["quotas"])
        return cls(**data)

    def replace(self, **changes: Any) -> EngineConfig:
        return dataclasses.replace(self, **changes)
