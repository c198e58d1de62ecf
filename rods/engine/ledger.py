"""The reward ledger: per task, the progress rewards of its latest K rollouts (docs/design.md §3.2).

The trainer already computes these rewards; the ledger only remembers them, so
detection adds no inference. Each `observe` is O(K): no work proportional to
the pool size happens here.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

from rods.engine.zones import Zone


class TaskStats:
    """What the ledger knows about one active task."""

    __slots__ = (
        "task_id",
        "task_type",
        "origin",
        "entry_step",
        "rewards",
        "n_groups",
        "n_rewards",
        "last_step",
        "first_rewards",
        "mean",
        "zone",
        "_variance",
    )

    def __init__(self, task_id: str, task_type: str, origin: str, entry_step: int, K: int) -> None:
        self.task_id = task_id
        self.task_type = task_type
        self.origin = origin
        self.entry_step = entry_step
        self.rewards: deque[float] = deque(maxlen=K)
        self.n_groups = 0  # times sampled (observed groups)
        self.n_rewards = 0  # rollouts observed in total
        self.last_step: int | None = None
        self.first_rewards: list[float] = []  # the first `burn_in_rollouts` rewards
        self.mean = 0.0
        self.zone: Zone = "new"
        self._variance: float | None = 0.0

    @property
    def variance(self) -> float:
        """Population variance of the rewards in the window (0 when fewer than 2); cached."""
        if self._variance is None:
            n = len(self.rewards)
            m = self.mean
            self._variance = sum((r - m) * (r - m) for r in self.rewards) / n if n > 1 else 0.0
        return self._variance

    def first_mean(self, burn_in_rollouts: int) -> float | None:
        """Mean of the first rewards once `burn_in_rollouts` of them are known."""
        if len(self.first_rewards) < burn_in_rollouts:
            return None
        return sum(self.first_rewards) / len(self.first_rewards)

    def to_row(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "task_type": self.task_type,
            "origin": self.origin,
            "entry_step": self.entry_step,
            "rewards": list(self.rewards),
            "n_groups": self.n_groups,
            "n_rewards": self.n_rewards,
            "last_step": self.last_step,
            "first_rewards": list(self.first_rewards),
        }


def check_rewards(task_id: str, rewards: Sequence[float]) -> list[float]:
    """Rewards as floats in [0, 1]; a clear error naming the task otherwise."""
    try:
        values = [float(r) for r in rewards]
    except (TypeError, ValueError) as err:
        raise ValueError(f"rewards for task {task_id!r} must be numbers: {err}") from None
    if not values:
        raise ValueError(f"no rewards given for task {task_id!r}")
    total = sum(values)
    if total != total or min(values) < 0.0 or max(values) > 1.0:  # NaN, or out of range
        bad = next(r for r in values if not 0.0 <= r <= 1.0)
        raise ValueError(f"reward {bad!r} for task {task_id!r} is outside [0, 1]")
    return values


class RewardLedger:
    """Latest-K progress rewards of every active task, with its zone kept current."""

    def __init__(self, *, K: int, alpha_minus: float, alpha_plus: float, min_observations: int,
                 burn_in_rollouts: int) -> None:
        self.K = K
        self.alpha_minus = alpha_minus
        self.alpha_plus = alpha_plus
        self.min_observations = min_observations
        self.burn_in_rollouts = burn_in_rollouts
        self._stats: dict[str, TaskStats] = {}

    def __contains__(self, task_id: str) -> bool:
        return task_id in self._stats

    def __len__(self) -> int:
        return len(self._stats)

    def __iter__(self):
        return iter(self._stats.values())

    def get(self, task_id: str) -> TaskStats:
        return self._stats[task_id]

    def get_or_none(self, task_id: str) -> TaskStats | None:
        return self._stats.get(task_id)

    def add(self, task_id: str, task_type: str, origin: str, entry_step: int) -> TaskStats:
        if task_id in self._stats:
            raise ValueError(f"task {task_id!r} is already in the ledger")
        stats = TaskStats(task_id, task_type, origin, entry_step, self.K)
        self._stats[task_id] = stats
        return stats

    def remove(self, task_id: str) -> TaskStats:
        return self._stats.pop(task_id)

    def observe(self, task_id: str, step: int, rewards: Iterable[float]) -> tuple[Zone, TaskStats]:
        """Record one group of rewards; returns the zone before and the updated stats."""
        stats = self._stats[task_id]
        old_zone = stats.zone
        self.observe_stats(stats, step, rewards)
        return old_zone, stats

    def observe_stats(self, stats: TaskStats, step: int, rewards: Iterable[float]) -> None:
        """`observe` for a task's stats already looked up (the engine's hot path)."""
        rewards = rewards if isinstance(rewards, list) else list(rewards)
        stats.rewards.extend(rewards)
        need_first = self.burn_in_rollouts - len(stats.first_rewards)
        if need_first > 0:
            stats.first_rewards.extend(rewards[:need_first])
        n = len(rewards)
        stats.n_groups += 1
        stats.n_rewards += n
        if stats.last_step is None or step > stats.last_step:
            stats.last_step = step
        self._refresh(stats)

    def _refresh(self, stats: TaskStats) -> None:
        window = stats.rewards
        mean = stats.mean = sum(window) / len(window) if window else 0.0
        stats._variance = None
        # classify() inlined: this runs once per observation
        if stats.n_rewards < self.min_observations:
            stats.zone = "new"
        elif mean > self.alpha_plus:
            stats.zone = "mastered"
        elif mean < self.alpha_minus:
            stats.zone = "hard"
        else:
            stats.zone = "boundary"

    def load_row(self, row: dict[str, Any]) -> TaskStats:
        """Restore one task's stats from `TaskStats.to_row()` output."""
        stats = TaskStats(row["task_id"], row["task_type"], row["origin"], row["entry_step"], self.K)
        stats.rewards.extend(float(r) for r in row["rewards"])
        stats.n_groups = int(row["n_groups"])
        stats.n_rewards = int(row["n_rewards"])
        stats.last_step = row["last_step"]
        stats.first_rewards = [float(r) for r in row["first_rewards"]]
        self._refresh(stats)
        self._stats[stats.task_id] = stats
        return stats
