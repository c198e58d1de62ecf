"""rods' multi-turn rollout as a registered verl agent loop (`rods_multiturn`).

verl creates one agent-loop instance per trajectory and calls `run` with the
row's columns. This loop plays one `rods.rollout.Episode` (user turns, tool
calls in a per-trajectory environment, reveal turns, the per-turn step cap)
against verl's server manager, which only speaks token ids:

- the prompt is tokenized once with the chat template; afterwards tokens are
  only appended, with verl's Continuous Token builder (the same incremental
  tokenizer its own tool agent uses), so the sequence trained on is exactly
  the sequence generated;
- `response_mask` is 1 for tokens the policy generated and 0 for tool results,
  user turns and template boundary tokens;
- tool descriptions are written into the messages (system message, and the
  reveal message when held-out functions join), so the prefix never changes
  when the tool list grows;
- the episode's progress reward RP (or the binary verdict) becomes
  `reward_score`; per-turn verdicts go to `extra_fields`; the engine is sent
  `rods.engine_signal` (default: the same reward; the binary-detection
  ablation sends the binary verdict while the policy trains on RP).

Rewards reach the engine actor as each trajectory ends: the loop awaits
`EngineActor.report(group, task_id, reward, group_size)`, and the actor keeps a
task's rewards until the group's K have arrived, then calls
`DataEngine.observe` once with all K (a group cut short is flushed at the end
of the step). Validation rows carry ``report: False`` and are never reported.
"""

from __future__ import annotations

import logging
import time
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopMetrics, AgentLoopOutput, register

from rods.integrations.verl.settings import AGENT_NAME, RodsVerlSettings
from rods.rollout.episode import Episode, EpisodeOptions
from rods.tasks import Task

logger = logging.getLogger(__name__)


def task_from_extra_info(extra_info: Any) -> Task:
    """The task a row carries in ``extra_info['task']`` (JSON text)."""
    if not isinstance(extra_info, dict) or "task" not in extra_info:
        raise ValueError(
            "row extra_info has no 'task' (got keys "
            f"{sorted(extra_info) if isinstance(extra_info, dict) else extra_info!r}); "
            "rows for the rods agent loop come from rods.integrations.verl.dataset.RodsTaskDataset"
        )
    return Task.model_validate_json(extra_info["task"])


@register(AGENT_NAME)
class RodsAgentLoop(AgentLoopBase):
    """One rods episode per verl trajectory (see the module docstring)."""

    def __init__(self, *args: Any, tools: Any = None, **kwargs: Any) -> None:
        # `tools` are verl's own tool objects; rods executes calls in its own environment.
        super().__init__(*args, **kwargs)
        self.settings = RodsVerlSettings.from_trainer_config(self.config)
        self.response_length = int(self.rollout_config.response_length)
        self.max_assistant_turns = self.rollout_config.multi_turn.get("max_assistant_turns") or None
        self.group_size = int(self.rollout_config.n)
        self.options = EpisodeOptions(
            max_steps_per_turn=self.settings.max_steps_per_turn, tool_format=self.settings.tool_format,
            tools_in_prompt=True,
        )

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        extra_info = kwargs.get("extra_info") or {}
        task = task_from_extra_info(extra_info)
        episode = Episode(task, self.options)
        metrics = {"generate_sequences": 0.0, "tool_calls": 0.0}
        request_id = uuid4().hex
        prompt_ids = await self.ct_build_initial_tokens([dict(m) for m in episode.messages])
        runtime = list(prompt_ids)
        mask: list[int] = []
        logprobs: list[float] | None = None
        replies = 0
        truncated = False
        while not episode.done:
            started = time.perf_counter()
            output = await self.server_manager.generate(
                request_id=request_id, prompt_ids=runtime, sampling_params=sampling_params
            )
            metrics["generate_sequences"] += time.perf_counter() - started
            replies += 1
            if output.log_probs and logprobs is None:
                logprobs = [0.0] * len(mask)
            merged, mask, new_logprobs = await self.ct_merge_assistant_token(
                runtime, output.token_ids, mask, logprobs, assistant_logprobs=output.log_probs or None
            )
            runtime, logprobs = merged.token_ids, new_logprobs
            if len(mask) >= self.response_length:
                truncated = True
                break
            text = self.tokenizer.decode(output.token_ids, skip_special_tokens=True)
            started = time.perf_counter()
            appended = episode.advance(text)
            metrics["tool_calls"] += time.perf_counter() - started
            if episode.done or (self.max_assistant_turns and replies >= self.max_assistant_turns):
                break
            messages = [dict(m) for m in episode.messages]
            previous = messages[: len(messages) - len(appended)]
            merged, new_mask, new_logprobs = await self.ct_merge_context_msg(
                previous, messages, runtime, mask, logprobs
            )
            if len(new_mask) >= self.response_length:
                truncated = True  # the environment's reply does not fit: stop before it
                break
            runtime, mask, logprobs = merged.token_ids, new_mask, new_logprobs

        trajectory = episode.trajectory()
        verdict = {"progress": trajectory.progress, "binary": trajectory.binary}
        reward = verdict[self.settings.reward]  # what the policy trains on
        response_ids = runtime[len(prompt_ids) :]
        if extra_info.get("report", False):  # what the engine's boundary detection sees
            await self._report(kwargs, task.id, verdict[self.settings.engine_signal or self.settings.reward])
        verdicts = [t.passed if t.state_pass is not None else None for t in trajectory.turns]
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=response_ids[: self.response_length],
            response_mask=mask[: self.response_length],
            response_logprobs=logprobs[: self.response_length] if logprobs else None,
            reward_score=float(reward),
            num_turns=len(trajectory.messages) - 1,
            metrics=AgentLoopMetrics(**metrics),
            extra_fields={
                "rods_task_id": task.id,
                "rods_turn_verdicts": verdicts,
                "rods_turn_ends": [t.end for t in trajectory.turns],
                "reward_extra_info": {
                    "rods_progress": float(trajectory.progress),
                    "rods_binary": float(trajectory.binary),
                    "rods_truncated": float(truncated),
                    "rods_num_calls": float(trajectory.num_calls),
                },
            },
        )

    async def _report(self, row: dict[str, Any], task_id: str, reward: float) -> None:
        """Hand this trajectory's reward to the engine actor (grouped there by the row's uid)."""
        from rods.integrations.verl.engine_actor import lookup_engine_actor

        group = str(row.get("uid") or f"{task_id}:{row.get('index', 0)}")
        try:
            handle = lookup_engine_actor(self.settings.engine_actor, self.settings.namespace)
            await handle.report.remote(group, task_id, float(reward), self.group_size)
        except Exception:  # the engine must never take the trainer down
            logger.exception("could not report the reward of task %s to the engine actor", task_id)
