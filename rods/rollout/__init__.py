"""Rollouts: the multi-turn agent loop (docs/design.md §2.4), tool-call parsing and policies.

`Episode` is the loop for one rollout, independent of how text is generated;
`run_episodes` steps many of them with a `Policy` (`TransformersPolicy` for a
local model, `OpenAIPolicy` for any OpenAI-compatible endpoint) and returns
`Trajectory` records.
"""

from rods.rollout.endpoint import OpenAIPolicy, to_openai_messages
from rods.rollout.episode import DEFAULT_MAX_STEPS, PARSE_ERROR_PREFIX, Episode, EpisodeDone, EpisodeOptions
from rods.rollout.local import TransformersPolicy
from rods.rollout.parse import ParsedReply, parse_tool_calls
from rods.rollout.policy import GenerationStats, Policy, run_episodes
from rods.rollout.trajectory import Trajectory, TurnRecord

__all__ = [
    "DEFAULT_MAX_STEPS",
    "PARSE_ERROR_PREFIX",
    "Episode",
    "GenerationStats",
    "EpisodeDone",
    "EpisodeOptions",
    "OpenAIPolicy",
    "ParsedReply",
    "Policy",
    "Trajectory",
    "TransformersPolicy",
    "TurnRecord",
    "parse_tool_calls",
    "run_episodes",
    "to_openai_messages",
]
