"""A short supervised warm start on ground-truth turns, for a policy that cannot call tools yet.

GRPO learns nothing from a policy whose every rollout scores zero. The embedded
SmolLM2-135M-Instruct out of the box writes no parseable tool call at all, so
before GRPO it is fine-tuned with TRL's `SFTTrainer` on the gold first turns
of the seed tasks: the prompt exactly as the rollout renders it (same system
prompt, tool description and chat template), the completion the gold calls as
Hermes ``<tool_call>`` blocks (`rods.integrations.trl.warm_start`). The
tool-call parse rate and the greedy progress reward on held-out seeds are
measured before and after and written to ``warm_start.json``.

The SFT examples come from `warm_start.tasks` (BFCL's train split unless a
run names its own environment's task file) shaped like the run's seeds (same
task mix) *minus the run's seeds*: GRPO then trains on tasks the warm start
never saw, and the parse rate is measured on `eval_tasks` of those seeds spread
evenly over the seed list (turn slices come turn by turn: the first ones would
all be first turns, which a warm start learns first).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rods.envs.seeds import load_seeds
from rods.integrations.trl.warm_start import measure, run_sft, sft_examples
from rods.tasks import Task
from rods.train.config import TrainConfig
from rods.train.trainer import make_rollout

log = logging.getLogger(__name__)

REPORT_FILE = "warm_start.json"
WEIGHTS_FILE = "model.safetensors"


def warm_start(
    config: TrainConfig, model: Any, tokenizer: Any, seeds: list[Task], run_dir: str | Path
) -> dict[str, Any]:
    """SFT on gold first turns of train tasks other than the run's seeds; returns and writes the report.

    With `warm_start.cache_dir`, a warm start with the same key is loaded instead of trained (and a new one kept).
    """
    cache = config.warm_start.cache_dir
    if cache is None:
        report = _train(config, model, tokenizer, seeds, run_dir)
    else:
        entry = Path(cache) / cache_key(config, seeds)
        with _locked(entry):
            if (entry / REPORT_FILE).is_file() and (entry / WEIGHTS_FILE).is_file():
                report = _load(model, entry)
            else:
                report = _train(config, model, tokenizer, seeds, run_dir)
                _keep(model, tokenizer, report, entry)
    Path(run_dir).mkdir(parents=True, exist_ok=True)
    Path(run_dir, REPORT_FILE).write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report


def cache_key(config: TrainConfig, seeds: list[Task]) -> str:
    """A digest of everything the warm start reads; equal keys give the same warm-started policy."""
    parts = {
        "model": config.model.model_dump(mode="json"),
        "data": config.data.model_dump(mode="json"),
        "seeds": [t.id for t in seeds],
        "rollout": config.rollout.model_dump(mode="json"),
        "warm_start": config.warm_start.model_dump(mode="json", exclude={"cache_dir"}),
        "seed": config.grpo.seed,
        "precision": [config.grpo.bf16, config.grpo.use_cpu],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16]


def spread(tasks: list[Task], n: int) -> list[Task]:
    """`n` tasks evenly spaced over `tasks`, in order (all of them when there are no more than `n`)."""
    if n >= len(tasks):
        return list(tasks)
    return [tasks[i * len(tasks) // n] for i in range(n)]


@contextmanager
def _locked(entry: Path) -> Iterator[None]:
    """One process at a time trains or reads a cache entry (parallel runs of one seed wait for the first)."""
    entry.parent.mkdir(parents=True, exist_ok=True)
    with open(entry.parent / f"{entry.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _load(model: Any, entry: Path) -> dict[str, Any]:
    from safetensors.torch import load_model

    load_model(model, str(entry / WEIGHTS_FILE))
    report = json.loads((entry / REPORT_FILE).read_text(encoding="utf-8"))
    log.info("warm start: loaded the policy kept in %s (parse rate after %.2f)", entry,
             report["after"]["parse_rate"] or 0.0)
    return {**report, "cached_from": str(entry)}


def _keep(model: Any, tokenizer: Any, report: dict[str, Any], entry: Path) -> None:
    """Weights first, report last (a half-written entry has no report and is trained again).

    The entry is also a model folder (config without the GGUF quantization, tokenizer with its
    chat template), so `rods eval --model <entry>` scores the warm-started policy.
    """
    from safetensors.torch import save_model

    from rods.llm.weights import float_config

    entry.mkdir(parents=True, exist_ok=True)
    tmp = entry / f"{WEIGHTS_FILE}.tmp"
    save_model(model, str(tmp))
    tmp.replace(entry / WEIGHTS_FILE)
    float_config(model.config).save_pretrained(entry)
    tokenizer.save_pretrained(entry)
    if hasattr(model, "peft_config"):  # a LoRA warm start: the adapter too, so the folder loads as one
        model.save_pretrained(entry)
    (entry / REPORT_FILE).write_text(json.dumps(report, indent=2), encoding="utf-8")


def _train(
    config: TrainConfig, model: Any, tokenizer: Any, seeds: list[Task], run_dir: str | Path
) -> dict[str, Any]:
    import torch

    settings = config.warm_start
    start = time.perf_counter()
    by_id = {t.id: t for t in seeds}
    rollout = make_rollout(config, by_id.__getitem__, tokenizer)
    seed_ids = {t.id for t in seeds}
    pool = load_seeds(config.data.model_copy(update={"seeds": settings.tasks, "max_slices": None}))
    examples = sft_examples([t for t in pool if t.id not in seed_ids], rollout)
    # A mid-episode slice carries its history: drop what does not fit rather than cut off its gold reply.
    fits = [e for e in examples if len(tokenizer(e["prompt"] + e["completion"]).input_ids) <= settings.max_length]
    if len(fits) < len(examples):
        log.info("warm start: %d of %d examples are longer than max_length=%d tokens and are left out",
                 len(examples) - len(fits), len(examples), settings.max_length)
    examples = fits
    if settings.max_examples:
        examples = examples[: settings.max_examples]
    if not examples:
        raise ValueError("warm_start: no ground-truth turn outside the run's seeds could become an SFT example")
    held_out = spread(seeds, settings.eval_tasks)
    before = measure(model, rollout, held_out)
    log.info(
        "warm start: parse rate before %.2f on %d seeds (not trained on)", before["parse_rate"] or 0.0, len(held_out)
    )
    use_cpu = config.grpo.use_cpu if config.grpo.use_cpu is not None else not torch.cuda.is_available()
    sft_args = {
        "output_dir": str(Path(run_dir) / "warm_start"),
        "max_steps": settings.max_steps,
        "learning_rate": settings.learning_rate,
        "per_device_train_batch_size": settings.batch_size,
        "max_length": settings.max_length,
        "use_cpu": use_cpu,
        "bf16": bool(config.grpo.bf16) and not use_cpu,
        "seed": config.grpo.seed,
    }
    train_loss = run_sft(model, tokenizer, examples, sft_args)
    after = measure(model, rollout, held_out)
    report = {
        "examples": len(examples),
        "steps": settings.max_steps,
        "train_loss": train_loss,
        "before": before,
        "after": after,
        "seconds": round(time.perf_counter() - start, 1),
    }
    log.info(
        "warm start: %d examples, %d steps; parse rate %.2f -> %.2f, progress %.2f -> %.2f",
        len(examples), settings.max_steps, before["parse_rate"] or 0.0, after["parse_rate"] or 0.0,
        before["mean_progress"] or 0.0, after["mean_progress"] or 0.0,
    )
    return report
