"""Zones of the task space by mean progress reward (docs/design.md §3.2, paper eq. 1).

`mastered` (r̄ > α+), `boundary` (α− ≤ r̄ ≤ α+), `hard` (r̄ < α−); a task with
fewer than `min_observations` rewards is `new` (not yet classified).
"""

from __future__ import annotations

from typing import Literal

Zone = Literal["new", "hard", "boundary", "mastered"]
ZONES: tuple[Zone, ...] = ("new", "hard", "boundary", "mastered")


def classify(mean: float, n_rewards: int, *, alpha_minus: float, alpha_plus: float, min_observations: int) -> Zone:
    """The zone of a task with `n_rewards` rewards of mean `mean`."""
    if n_rewards < min_observations:
        return "new"
    if mean > alpha_plus:
        return "mastered"
    if mean < alpha_minus:
        return "hard"
    return "boundary"


def phi(mean: float) -> float:
    """The variance proxy φ(r̄) = 4 r̄ (1 − r̄): 1 at r̄ = 0.5, 0 at 0 and 1 (Popoviciu)."""
    return 4.0 * mean * (1.0 - mean)
