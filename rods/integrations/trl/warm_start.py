"""A short supervised warm start on ground-truth turns, for a policy that cannot call tools yet.

GRPO learns nothing from a policy whose every rollout scores zero. The embedded
SmolLM2-135M-Instruct out of the box writes no parseable tool call at all, so
before GRPO it is fine-tuned with TRL's `SFTTrainer` on the gold first turns
of the seed tasks: the prompt exactly as the rollout renders it (same system
prompt, tool description and chat template), the completion the gold calls as
Hermes ``<tool_call>`` blocks. The tool-call parse rate and the greedy
progress reward on held-out seeds are measured before and after and written to
``warm_start.json``.

The SFT examples come from the train split shaped like the run's seeds (same
task mix) *minus the run's seeds*: GRPO then trains on tasks the warm start
never saw, and the parse rate is measured on (the first `eval_tasks` of) those
seeds.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from rods.envs.calls import CallParseError, parse_calls
from rods.integrations.trl.rollout import MultiTurnRollout
from rods.tasks import Task
from rods.train.config import TrainConfig

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
            body = json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
            blocks.append(f"<tool_call>\n{body}\n</tool_call>")
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
    settings = rollout.settings.model_copy(update={"temperature": 0.0})
    probe = MultiTurnRollout(
        rollout.lookup, rollout.tokenizer, settings, tool_format=rollout.tool_format,
        tools_in_prompt=rollout.tools_in_prompt, system_prompt=rollout.system_prompt,
        chat_template_kwargs=rollout.chat_template_kwargs,
    )
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
        "example_reply": probe.last_trajectories[0].turns[0].replies[0][:300] if probe.last_trajectories[0].turns[0].replies else "",
    }


def warm_start(config: TrainConfig, model: Any, tokenizer: Any, seeds: list[Task], run_dir: str | Path) -> dict[str, Any]:
    """SFT on gold first turns of train tasks other than the run's seeds; returns and writes the report."""
    import torch
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    settings = config.warm_start
    start = time.perf_counter()
    by_id = {t.id: t for t in seeds}
    rollout = MultiTurnRollout(
        by_id.__getitem__, tokenizer, config.rollout, tool_format=config.model.tool_format,
        tools_in_prompt=config.model.tools_in_prompt, system_prompt=config.model.system_prompt,
        chat_template_kwargs=config.model.chat_template_kwargs,
    )
    from rods.train.run import load_seeds

    seed_ids = {t.id for t in seeds}
    pool = load_seeds(config.data.model_copy(update={"seeds": "train", "max_slices": None}))
    examples = sft_examples([t for t in pool if t.id not in seed_ids], rollout)
    if settings.max_examples:
        examples = examples[: settings.max_examples]
    if not examples:
        raise ValueError("warm_start: no ground-truth turn outside the run's seeds could become an SFT example")
    held_out = seeds[: settings.eval_tasks]
    before = measure(model, rollout, held_out)
    log.info("warm start: parse rate before %.2f on %d seeds (not trained on)", before["parse_rate"] or 0.0, len(held_out))
    use_cpu = config.grpo.use_cpu if config.grpo.use_cpu is not None else not torch.cuda.is_available()
    args = SFTConfig(
        output_dir=str(Path(run_dir) / "warm_start"),
        max_steps=settings.max_steps,
        learning_rate=settings.learning_rate,
        per_device_train_batch_size=settings.batch_size,
        max_length=settings.max_length,
        use_cpu=use_cpu,
        bf16=bool(config.grpo.bf16) and not use_cpu,
        gradient_checkpointing=False,
        save_strategy="no",
        report_to="none",
        logging_steps=max(1, settings.max_steps // 10),
        completion_only_loss=True,
        disable_tqdm=True,
        seed=config.grpo.seed,
    )
    trainer = SFTTrainer(model=model, args=args, train_dataset=Dataset.from_list(examples), processing_class=tokenizer)
    output = trainer.train()
    after = measure(model, rollout, held_out)
    report = {
        "examples": len(examples),
        "steps": settings.max_steps,
        "train_loss": output.training_loss,
        "before": before,
        "after": after,
        "seconds": round(time.perf_counter() - start, 1),
    }
    log.info(
        "warm start: %d examples, %d steps; parse rate %.2f -> %.2f, progress %.2f -> %.2f",
        len(examples), settings.max_steps, before["parse_rate"] or 0.0, after["parse_rate"] or 0.0,
        before["mean_progress"] or 0.0, after["mean_progress"] or 0.0,
    )
    Path(run_dir, "warm_start.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report
