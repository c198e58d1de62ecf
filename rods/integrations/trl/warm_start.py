"""The pieces of the supervised warm start with TRL: SFT examples, the parse-rate probe, `run_sft`.

GRPO learns nothing from a policy whose every rollout scores zero. The embedded
SmolLM2-135M-Instruct out of the box writes no parseable tool call at all, so
before GRPO it is fine-tuned with TRL's `SFTTrainer` on the gold first turns
of the seed tasks: the prompt exactly as the rollout renders it (same system
prompt, tool description and chat template), the completion the gold calls as
Hermes ``<tool_call>`` blocks. The tool-call parse rate and the greedy
progress reward on held-out seeds are measured before and after and written to
``warm_start.json``.

`rods.train.warm_start` drives them from a run's config (which tasks, which
settings, the report).
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from rods.envs.calls import CallParseError, parse_calls
from rods.integrations.trl.rollout import MultiTurnRollout
from rods.llm.hermes import tool_call_block
from rods.tasks import Task

log = logging.getLogger(__name__)


def hermes_calls(gold: list[str]) -> str | None:
    """Gold call strings as Hermes ``<tool_call>`` blocks (None if one has positional arguments)."""
    blocks = []
    for text in gold:
        try:
            calls = parse_calls(text)
        except CallParseError:
            return None
        for call in calls:
            if call.args:
                return None
            blocks.append(tool_call_block(call.name, call.arguments))
    return "\n".join(blocks) if blocks else None


def sft_examples(tasks: list[Task], rollout: MultiTurnRollout) -> list[dict[str, str]]:
    """One prompt/completion pair per task: its first turn with non-empty gold, rendered as the rollout does.

    Only turn 0 is used, so the prompt never needs a gold history the model did not write.
    """
    out = []
    for task in tasks:
        completion = hermes_calls(task.ground_truth[0]) if task.ground_truth[0] else None
        if completion is None:
            continue
        episode = rollout.new_episode(task)
        prompt = rollout._render(episode.messages, episode.tools, generation_prompt=True)
        out.append({"prompt": prompt, "completion": completion})
    return out


def measure(model: Any, rollout: MultiTurnRollout, tasks: list[Task]) -> dict[str, Any]:
    """Greedy first replies on `tasks`: share with a parseable tool call, and the mean progress reward."""
    if not tasks:
        return {"tasks": 0, "parse_rate": None, "mean_progress": None}
    probe = copy.copy(rollout)  # the same prompts, sampled greedily
    probe.settings = rollout.settings.model_copy(update={"temperature": 0.0})
    was_training = model.training
    model.eval()
    try:
        result = probe.rollout(model, tasks)
    finally:
        if was_training:
            model.train()
    parsed = [bool(t.turns and t.turns[0].steps and t.turns[0].steps[0]) for t in probe.last_trajectories]
    return {
        "tasks": len(tasks),
        "parse_rate": sum(parsed) / len(parsed),
        "mean_progress": sum(result["progress"]) / len(tasks),
        "example_reply": probe.last_trajectories[0].turns[0].replies[0][:300]
        if probe.last_trajectories[0].turns[0].replies
        else "",
    }


def run_sft(model: Any, tokenizer: Any, examples: list[dict[str, str]], sft_args: dict[str, Any]) -> float:
    """TRL's SFTTrainer on prompt/completion `examples`, loss on the completion only; returns the training loss.

    `sft_args` are `SFTConfig` fields (output_dir, max_steps, learning_rate, ...);
    checkpoints, trackers and progress bars are off.
    """
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    fixed = {"gradient_checkpointing": False, "save_strategy": "no", "report_to": "none", "disable_tqdm": True,
             "completion_only_loss": True, "logging_steps": max(1, int(sft_args.get("max_steps", 10)) // 10)}
    args = SFTConfig(**{**fixed, **sft_args})
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(examples), processing_class=tokenizer)
    return trainer.train().training_loss
