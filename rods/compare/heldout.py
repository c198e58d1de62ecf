"""Held-out evaluation of a training policy, before and after GRPO, as the training loop prompts it.

The policy is scored on the comparison's fixed held-out split with greedy
decoding, through the training rollout (`MultiTurnRollout`: the same system
prompt, tool description, chat template and length caps as training, so a
turn-slice policy with compact signatures is measured on what it learned), and
scored by `rods.eval` (per-category accuracy and progress RP, BFCL's overall =
mean over categories). Each evaluation writes ``report.json`` (a
`rods.eval.EvalReport`) and ``trajectories.jsonl`` to its folder.

`HeldoutCallback` evaluates at the start of training (after the warm start,
if any: the policy GRPO starts from) and at its end (the policy of the final
checkpoint), in the training process, so no checkpoint is reloaded.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from rods.tasks import Task
from rods.train.config import TrainConfig

log = logging.getLogger(__name__)

BEFORE = "heldout_before"
AFTER = "heldout_after"
REPORT = "report.json"


def evaluate_policy(model: Any, tokenizer: Any, config: TrainConfig, tasks: list[Task], out_dir: str | Path,
                    *, label: str = "") -> Any:
    """Greedy rollouts of `model` on `tasks` as `config`'s training renders them; writes and returns the report."""
    from rods.eval import EvalReport
    from rods.eval.evaluate import summarize
    from rods.train.trainer import make_rollout

    by_id = {t.id: t for t in tasks}
    greedy = config.model_copy(update={"rollout": config.rollout.model_copy(update={"temperature": 0.0})})
    rollout = make_rollout(greedy, by_id.__getitem__, tokenizer)
    start = time.perf_counter()
    was_training = model.training
    model.eval()
    try:
        rollout.rollout(model, tasks)
    finally:
        if was_training:
            model.train()
    trajectories = rollout.last_trajectories
    categories = summarize(trajectories)
    report = EvalReport(
        model=config.model.name_or_path + (f" ({label})" if label else ""),
        split="heldout",
        k=1,
        n_tasks=len(tasks),
        n_rollouts=len(trajectories),
        categories=categories,
        overall_accuracy=sum(c.accuracy for c in categories.values()) / len(categories),
        overall_progress=sum(c.progress for c in categories.values()) / len(categories),
        seconds=time.perf_counter() - start,
        settings={"decoding": "greedy", "rollout": greedy.rollout.model_dump(mode="json"),
                  "tool_format": config.model.tool_format},
    )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "trajectories.jsonl").open("w", encoding="utf-8") as fh:
        for traj in trajectories:
            fh.write(traj.to_json() + "\n")
    (out / REPORT).write_text(json.dumps(report.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
    log.info("held-out %s: %d tasks, progress %.3f, accuracy %.3f (%.1fs)", label or "eval", len(tasks),
             report.overall_progress, report.overall_accuracy, report.seconds)
    return report


class HeldoutCallback(TrainerCallback):
    """Held-out evaluation when GRPO starts (once per run, kept across resumes) and when it ends."""

    def __init__(self, config: TrainConfig, tokenizer: Any, tasks: list[Task], run_dir: str | Path) -> None:
        self.config, self.tokenizer, self.tasks, self.run_dir = config, tokenizer, tasks, Path(run_dir)

    def on_train_begin(self, args, state, control, model=None, **kwargs):
        if self.tasks and not (self.run_dir / BEFORE / REPORT).is_file():
            evaluate_policy(model, self.tokenizer, self.config, self.tasks, self.run_dir / BEFORE, label="before")
        return control

    def on_train_end(self, args, state, control, model=None, **kwargs):
        if self.tasks and state.global_step >= state.max_steps:
            evaluate_policy(model, self.tokenizer, self.config, self.tasks, self.run_dir / AFTER, label="after")
        return control
