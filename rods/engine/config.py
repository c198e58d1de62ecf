"""Typed configuration of the data engine, with the paper's values as defaults (docs/design.md §3.7).

A `rods.config.Section`: every field carries its help and bounds, and
cross-field rules (alpha_minus <= alpha_plus, quotas within M, ...) are checked
when it is built, so a bad value fails with its dotted key.

Every baseline and ablation of docs/design.md §7.1 that concerns the engine is a setting
here: `random_seeds` (random seed choice), `no_retirement`, `one_shot`
(one-shot synthesis), and the capacity sweep via `capacity` (0/50/100/200/400
synthesized tasks on top of the human seeds; 0 is the static baseline).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, model_validator

from rods.config import Section
from rods.tasks.model import TaskType


#: The seed-selection types of docs/design.md §3.3 (`Task.task_type`).
def _paper_quotas() -> dict[TaskType, int]:
    """Our split of M = 8 over the types (the paper gives no split)."""
    return {"basic": 4, "miss_func": 2, "miss_param": 2}


#: The task types that get a seed quota, in the default order of redistribution.
TASK_TYPES: tuple[TaskType, ...] = ("basic", "miss_func", "miss_param")


class EngineConfig(Section):
    """Settings of detection, selection and the replay pool (frozen: an engine's config never changes under it)."""

    model_config = ConfigDict(frozen=True)

    K: int = Field(16, ge=1, description="Rollouts kept per task in the reward ledger (the latest K progress rewards).")
    alpha_minus: float = Field(0.20, ge=0.0, le=1.0, description="Below this mean reward a task is `hard`.")
    alpha_plus: float = Field(
        0.85, ge=0.0, le=1.0, description="Above this mean reward a task is `mastered`; in between is `boundary`."
    )
    min_observations: int = Field(8, ge=1, description="Rewards a task needs before it is classified at all (<= K).")
    max_seeds_per_step: int = Field(8, ge=0, description="M, the most boundary seeds selected per step.")
    quotas: dict[TaskType, Annotated[int, Field(ge=0)]] = Field(
        default_factory=_paper_quotas,
        description="M_tau per type (basic covers base and long-context); their sum is at most M.",
    )
    quota_order: tuple[TaskType, ...] = Field(
        TASK_TYPES,
        description="Order in which unused quota is redistributed (round-robin, one slot at a time, to types "
        "that still have eligible candidates); each type once.",
    )
    redistribute_unused_quota: bool = Field(True, description="Whether unused quota flows to other types at all.")
    exclusion_window: int = Field(
        20, ge=0, description="c: a seed chosen at step s is not chosen again before step s + c."
    )
    seeds_from_synthetic: bool = Field(True, description="Whether synthesized tasks may themselves become seeds.")
    max_injection_fraction: float = Field(
        0.20, ge=0.0, le=1.0,
        description="At each epoch boundary inject at most this share of the active pool size (after retirement).",
    )
    capacity: int = Field(
        400, ge=0,
        description="P_max, the most synthesized tasks in the active pool (0: the static baseline); human seeds "
        "are never counted against it and never retired.",
    )
    burn_in_rollouts: int = Field(8, ge=1, description="Rewards of a new task that make up its first rewards (<= K).")
    burn_in_threshold: float = Field(
        0.10, description="A synthesized task whose first-rewards mean is below this is retired (burn-in layer)."
    )
    stale_after_steps: int | None = Field(
        200, ge=1,
        description="A synthesized task not sampled for this many steps is retired (staleness layer); null disables.",
    )
    queue_capacity: int | None = Field(
        None, ge=0, description="Most candidates waiting; the oldest are dropped (logged) beyond it; null: unbounded."
    )
    inject_order: Literal["newest", "oldest"] = Field(
        "newest",
        description="Which queued candidates go in first: newest (made from the most recent boundary, closest to "
        "the policy's current frontier) or oldest (FIFO).",
    )
    candidate_max_age_steps: int | None = Field(
        100, ge=0,
        description="Candidates queued for longer than this are dropped at an epoch boundary (reason expired): "
        "they were made for a boundary the policy has since left; null keeps them forever.",
    )
    random_seeds: bool = Field(
        False,
        description="Ablation 'random seed choice': seeds drawn uniformly from eligible active tasks of each type, "
        "ignoring zones and phi.",
    )
    no_retirement: bool = Field(False, description="Ablation: no task is ever retired; injection stops at capacity.")
    one_shot: bool = Field(
        False,
        description="Ablation 'one-shot synthesis': seeds are selected only before the first epoch boundary, each "
        "task at most once, only from the human set; afterwards the engine selects nothing.",
    )
    flush_every_steps: int = Field(
        10, ge=0,
        description="Persist the ledger every this many steps (in select_seeds); 0 flushes only at epoch "
        "boundaries and on save().",
    )
    seed: int = Field(
        0, description="RNG seed (used only by random_seeds; every other decision is deterministic, ties by task id)."
    )

    @model_validator(mode="after")
    def _consistent(self) -> EngineConfig:
        if self.alpha_minus > self.alpha_plus:
            raise ValueError(f"need alpha_minus <= alpha_plus, got {self.alpha_minus}, {self.alpha_plus}")
        if self.min_observations > self.K:
            raise ValueError(f"min_observations must be in [1, K={self.K}], got {self.min_observations}")
        if self.burn_in_rollouts > self.K:
            raise ValueError(f"burn_in_rollouts must be in [1, K={self.K}], got {self.burn_in_rollouts}")
        if sum(self.quotas.values()) > self.max_seeds_per_step:
            raise ValueError(
                f"quotas sum to {sum(self.quotas.values())} > max_seeds_per_step={self.max_seeds_per_step}"
            )
        if sorted(self.quota_order) != sorted(TASK_TYPES):
            raise ValueError(f"quota_order must list each of {list(TASK_TYPES)} once, got {list(self.quota_order)}")
        return self

    def quota(self, task_type: str) -> int:
        return self.quotas.get(task_type, 0)  # type: ignore[call-overload]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict (tuples become lists)."""
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EngineConfig:
        """Build from a mapping (e.g. a YAML section or a stored state); unknown keys are an error."""
        return cls.model_validate(data)

    def replace(self, **changes: Any) -> EngineConfig:
        """A copy with `changes`, validated."""
        return self.model_validate({**self.model_dump(), **changes})
