"""Policies: whatever turns chat messages into the assistant's next reply text.

A `Policy` answers a batch of ``(messages, tools)`` pairs with one reply text
each. Tool calls come back as text in the Hermes format, whatever the source:
`OpenAIPolicy` writes the endpoint's structured ``tool_calls`` as
``<tool_call>`` blocks, so one parser (`rods.rollout.parse`) reads them all.

`run_episodes` steps many episodes (K rollouts of each task) side by side:
every round asks the policy for the next reply of every unfinished episode in
one batch. The policies themselves live in `rods.rollout.local`
(`TransformersPolicy`) and `rods.rollout.endpoint` (`OpenAIPolicy`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from rods.rollout.episode import Episode, EpisodeOptions
from rods.rollout.trajectory import Trajectory
from rods.tasks import Task

log = logging.getLogger(__name__)

Messages = list[dict[str, Any]]
Tools = list[dict[str, Any]]


@runtime_checkable
class Policy(Protocol):
    """Anything that writes the next assistant reply for a batch of chats.

    `native_tools` says whether the policy passes `tools` to the model itself
    (a chat template or endpoint with tool support); when false, episodes
    write the tool descriptions into the messages.
    """

    native_tools: bool

    def generate(self, batch: list[tuple[Messages, Tools]]) -> list[str]: ...


@dataclass
class GenerationStats:
    """Counts of one policy's work so far (for throughput figures)."""

    requests: int = 0
    prompt_tokens: int = 0
    #: Prompt tokens served from a kept KV cache instead of being prefilled again.
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    by_round: list[float] = field(default_factory=list)


# -- stepping many episodes together -------------------------------------------------


def run_episodes(
    tasks: Sequence[Task],
    policy: Policy,
    k: int = 1,
    options: EpisodeOptions | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> list[Trajectory]:
    """Roll out every task `k` times; trajectories come back task-major (task 0's K first).

    Each round sends the next reply request of every unfinished episode to the
    policy in one batch. `options.tools_in_prompt` defaults to ``not policy.native_tools``.
    `progress(finished, total)` is called after every round.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    options = (options or EpisodeOptions()).for_policy(getattr(policy, "native_tools", True))
    episodes = [Episode(task, options, sample_index=i) for task in tasks for i in range(k)]
    rounds = 0
    while active := [e for e in episodes if not e.done]:
        started = time.perf_counter()
        replies = policy.generate([(e.messages, e.tools) for e in active])
        if len(replies) != len(active):
            raise RuntimeError(f"policy returned {len(replies)} replies for {len(active)} requests")
        for episode, reply in zip(active, replies):
            episode.advance(reply)
        rounds += 1
        log.debug("round %d: %d replies in %.1fs", rounds, len(active), time.perf_counter() - started)
        if progress is not None:
            progress(sum(e.done for e in episodes), len(episodes))
    log.info("%d episodes finished in %d rounds", len(episodes), rounds)
    return [e.trajectory() for e in episodes]
