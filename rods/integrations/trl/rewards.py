"""The reward function GRPO optimizes, which also reports every group's rewards to the engine.

The rollout already scored each episode turn by turn (`progress`, `binary`
columns from `MultiTurnRollout`); this function only picks one of them for the
policy, logs the rollouts' policy lag and dynamic-sampling counts, and, because
TRL hands it the G rollouts of a task together, forwards each group (and each
group dynamic sampling dropped, `hold`) to `DataEngine.observe`: detection costs no extra inference (docs/design.md
§3.2). What the engine sees (`engine_signal`) may differ from what the policy
trains on: the paper's binary-detection ablation gives the engine the binary
verdict while GRPO keeps the progress reward.

Under several training processes each rank scores its own slice of the batch;
the rows of all ranks are gathered on the owner rank, which alone holds the
engine (`rods.integrations.trl.ranks`), so every group is observed once, whole.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from rods.integrations.trl.ranks import RankGroup

log = logging.getLogger(__name__)


def groups(
    task_ids: Sequence[str], rewards: Sequence[float], size: int | None = None
) -> list[tuple[str, list[float]]]:
    """Consecutive runs of the same task id with their rewards (TRL keeps a task's G rollouts together).

    With `size`, a run longer than that (the same task drawn twice in a row) is cut into groups of `size`.
    """
    out: list[tuple[str, list[float]]] = []
    for tid, reward in zip(task_ids, rewards):
        if out and out[-1][0] == tid and (size is None or len(out[-1][1]) < size):
            out[-1][1].append(float(reward))
        else:
            out.append((tid, [float(reward)]))
    return out


class EngineReward:
    """`reward_func` for GRPOTrainer: the progress (or binary) reward, observed by the engine.

    Args:
        kind: what the policy trains on: "progress" (RP, the paper's reward) or
            "binary" (the binary-reward-training ablation).
        engine: a `DataEngine` (or anything with `observe(step, task_id, rewards)`);
            None for plain GRPO without the data engine.
        engine_signal: what the engine observes for boundary detection,
            "progress" or "binary" (the binary-detection ablation); default `kind`.
        ranks: the training processes; with several, rewards are gathered on the owner.
        reports: whether the run has an engine at all (true on every rank of a run whose
            owner holds one); default: `engine is not None`.
        group_size: K, so that back-to-back groups of one task are observed separately.
    """

    def __init__(
        self, kind: str = "progress", engine: Any = None, engine_signal: str | None = None, *,
        ranks: RankGroup | None = None, reports: bool | None = None, group_size: int | None = None,
    ) -> None:
        for name, value in (("reward kind", kind), ("engine_signal", engine_signal or kind)):
            if value not in ("progress", "binary"):
                raise ValueError(f"{name} must be 'progress' or 'binary', got {value!r}")
        self.kind = kind
        self.engine = engine
        self.engine_signal = engine_signal or kind
        self.__name__ = f"{kind}_reward"  # TRL names the metric after this
        self.ranks = ranks or RankGroup()
        self.reports = engine is not None if reports is None else reports
        if self.reports and engine is None and self.ranks.is_owner:
            raise ValueError("the owner rank of a run with a data engine must hold the engine")
        self.group_size = group_size
        self.observed_groups = 0
        #: Groups dropped before training (dynamic sampling), observed with the next batch.
        self._held: list[tuple[str, dict[str, list[float]]]] = []
        self.local_rollouts = 0  # rows this process scored
        self.observe_seconds = 0.0

    def hold(self, task_id: str, rewards: dict[str, list[float]]) -> None:
        """A group that will not be trained on (dynamic sampling dropped it): the engine observes it all the same."""
        self._held.append((task_id, rewards))

    def __call__(self, prompts: list, completions: list, **columns: Any) -> list[float]:
        rewards = [float(r) for r in columns[self.kind]]
        task_ids = columns.get("task_id") or [str(p) for p in prompts]
        state = columns.get("trainer_state")
        step = (state.global_step + 1) if state is not None else 0  # the step these rollouts train
        log_metric = columns.get("log_metric")
        if log_metric is not None:
            calls = columns.get("num_calls") or []
            errors = columns.get("parse_errors") or []
            if calls:
                log_metric("rods/calls_per_rollout", sum(calls) / len(calls))
                log_metric("rods/parseable_fraction", sum(1 for c in calls if c > 0) / len(calls))
            if errors:
                log_metric("rods/parse_errors_per_rollout", sum(errors) / len(errors))
            other = "binary" if self.kind == "progress" else "progress"
            if columns.get(other):
                log_metric(f"rods/{other}", sum(columns[other]) / len(columns[other]))
            lags = columns.get("policy_lag") or []
            if lags:
                log_metric("rods/policy_lag", sum(lags) / len(lags))
                log_metric("rods/policy_lag_max", max(lags))
            for key in ("dynamic_dropped_groups", "dynamic_extra_groups", "dynamic_zero_variance_kept"):
                if columns.get(key):
                    log_metric(f"rods/{key}", columns[key][0])
        self.local_rollouts += len(rewards)
        if self.reports:
            start = time.perf_counter()
            seen = rewards if self.engine_signal == self.kind else [float(r) for r in columns[self.engine_signal]]
            rows = self.ranks.gather_rewards(list(zip(task_ids, seen)))
            if self.engine is not None:
                for tid, held in self._held:
                    self.engine.observe(step, tid, held[self.engine_signal])
                    self.observed_groups += 1
            if rows is not None and self.engine is not None:
                for tid, values in groups([t for t, _ in rows], [r for _, r in rows], self.group_size):
                    self.engine.observe(step, tid, values)
                    self.observed_groups += 1
            self.observe_seconds += time.perf_counter() - start
        self._held.clear()
        return rewards
