"""DAPO's dynamic sampling as a `rollout_func` wrapper: zero-variance groups are dropped and refilled.

A GRPO group whose K rewards are all equal has zero advantage and gives no
gradient. `DynamicSampling` plays the step's groups with the wrapped rollout,
then, while such groups remain and the step's cap of extra groups
(``grpo.dynamic_sampling.max_extra_groups``) allows, draws fresh tasks from the
live pool (`LivePool.draw`), plays one group of each, and puts an informative one
in each dropped group's place (a refill that is itself all-equal is dropped in
its turn). Groups still all-equal when the cap is spent are trained on as they
are, so the batch keeps its shape.

The engine still observes every group: each dropped group's rewards go to
`on_dropped` (the `EngineReward`, which observes them with the step's batch),
so detection sees exactly what was sampled. The counts reach the trainer's log
as ``rods/dynamic_dropped_groups``, ``rods/dynamic_extra_groups`` and
``rods/dynamic_zero_variance_kept``.

One process only: a rank's slice of the batch need not hold whole groups.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from rods.integrations.trl.rollout import group_rows, replace_rows

log = logging.getLogger(__name__)

#: Per-rollout columns the engine may observe (`grpo.engine_signal`).
SIGNALS = ("progress", "binary")


def zero_variance(values: Sequence[float]) -> bool:
    """All rewards of the group equal (no advantage, no gradient)."""
    return max(values) - min(values) <= 1e-9


class DynamicSampling:
    """Wraps a rollout function; each call returns the batch with zero-variance groups refilled.

    Args:
        rollout: ``f(prompts, trainer) -> rollout dict`` (a `MultiTurnRollout`).
        group_size: K.
        reward: the column GRPO trains on ("progress" or "binary").
        max_extra_groups: groups that may be generated per call to refill.
        draw: ``draw(n, exclude) -> n task ids`` from the live pool, preferring ids not in `exclude`.
        on_dropped: called with each dropped group's task id and its rewards per signal.
    """

    def __init__(
        self, rollout: Callable[[Sequence[Any], Any], dict[str, Any]], *, group_size: int, reward: str,
        max_extra_groups: int, draw: Callable[[int, set[str]], list[str]],
        on_dropped: Callable[[str, dict[str, list[float]]], None] | None = None,
    ) -> None:
        self.rollout = rollout
        self.group_size = group_size
        self.reward = reward
        self.max_extra_groups = max_extra_groups
        self.draw = draw
        self.on_dropped = on_dropped
        self.totals = {"dropped": 0, "extra": 0, "kept_zero_variance": 0}

    def __call__(self, prompts: Sequence[Any], trainer: Any) -> dict[str, Any]:
        out = self.rollout(prompts, trainer)
        budget, dropped, extra = self.max_extra_groups, 0, 0
        while budget > 0:
            flat = self._zero_variance_groups(out)
            if not flat:
                break
            count = min(len(flat), budget)
            fresh_ids = self.draw(count, set(out["task_id"]))
            fresh = self.rollout([tid for tid in fresh_ids for _ in range(self.group_size)], trainer)
            budget -= count
            extra += count
            for rows, new_rows in zip(flat[:count], group_rows(fresh["task_id"], self.group_size)):
                self._drop(out, rows)
                out = replace_rows(out, rows, {key: [values[i] for i in new_rows] if isinstance(values, list)
                                               else values for key, values in fresh.items()})
                dropped += 1
        kept = len(self._zero_variance_groups(out))
        for key, value in (("dropped", dropped), ("extra", extra), ("kept_zero_variance", kept)):
            self.totals[key] += value
        if dropped or kept:
            log.info("dynamic sampling: %d zero-variance group(s) dropped, %d extra generated, %d kept (cap %d)",
                     dropped, extra, kept, self.max_extra_groups)
        return {**out, "dynamic_dropped_groups": dropped, "dynamic_extra_groups": extra,
                "dynamic_zero_variance_kept": kept}

    def _zero_variance_groups(self, out: dict[str, Any]) -> list[list[int]]:
        rewards = out[self.reward]
        return [rows for rows in group_rows(out["task_id"], self.group_size)
                if zero_variance([rewards[i] for i in rows])]

    def _drop(self, out: dict[str, Any], rows: list[int]) -> None:
        if self.on_dropped is not None:
            task_id = out["task_id"][rows[0]]
            self.on_dropped(task_id, {s: [float(out[s][i]) for i in rows] for s in SIGNALS if s in out})
