"""Reward: per-turn state/execution checks, the progress reward RP and the binary reward.

`score(task, steps)` executes and scores a trajectory; `ProgressScorer` scores
a rollout turn by turn on the env its loop already drove; `ground_truth_for`
caches each task's ground-truth executions for all its rollouts.
"""

from rods.reward.ground_truth import (
    GroundTruth,
    clear_ground_truth_cache,
    compute_ground_truth,
    ground_truth_for,
)
from rods.reward.progress import (
    ProgressScorer,
    RewardResult,
    TurnVerdict,
    check_steps,
    is_empty_response,
    score,
    state_matches,
)

__all__ = [
    "GroundTruth",
    "ProgressScorer",
    "RewardResult",
    "TurnVerdict",
    "check_steps",
    "clear_ground_truth_cache",
    "compute_ground_truth",
    "ground_truth_for",
    "is_empty_response",
    "score",
    "state_matches",
]
