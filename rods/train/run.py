"""`train(config)`: one closed-loop GRPO run with the data engine, in one run directory.

Run directory layout (``output_dir``, default ``runs/<name>``)::

    config.yaml            the resolved config of this run
    engine.sqlite          the engine's live state (source of truth for resuming)
    events.jsonl           engine decisions: select, submit, inject, retire, epoch_end
    metrics.jsonl          engine per-step metrics (zones, pool, informative fraction)
    trainer_log.jsonl      TRL's logged metrics (loss, rewards, completion lengths, ...)
    warm_start.json        parse rate / reward before and after the optional SFT start
    checkpoints/checkpoint-N/        trainer checkpoint (model, optimizer, RNG; with model.lora the adapter only)
    checkpoints/checkpoint-N/engine/ the engine snapshot taken with it
    policy/                the adapter or weights last given to a vLLM server (grpo.generation: vllm_server)
    summary.json           what the run did (steps, epochs, injected, retired, timings)
    report/                figures written by `rods report RUN_DIR`

Resuming (``resume=True`` or a checkpoint path) restores the trainer from the
checkpoint and the engine from the snapshot saved with that same checkpoint,
so the two never disagree about what happened.

Under `accelerate launch` (several processes) rank 0 owns the run directory, the
engine, its synthesis worker and its snapshots; every rank trains, and the other
ranks' rewards and the owner's pool travel through `rods.integrations.trl.ranks`.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rods.envs.seeds import load_seeds
from rods.tasks import Task
from rods.train.config import SynthesisSettings, TrainConfig
from rods.train.load import dump_config

log = logging.getLogger(__name__)

CHECKPOINTS = "checkpoints"


@dataclass
class RunSummary:
    """What a run did (also written to `summary.json`)."""

    run_dir: str
    steps: int = 0
    epochs: int = 0
    seeds: int = 0
    selected: int = 0
    submitted: int = 0
    injected: int = 0
    retired: int = 0
    active: int = 0
    active_synthetic: int = 0
    step_seconds: list[float] = field(default_factory=list)
    step_splits: list[dict[str, float]] = field(default_factory=list)  # seconds by part (StepTimer)
    warm_start: dict[str, Any] | None = None
    resumed_from: str | None = None
    backbones: dict[str, Any] = field(default_factory=dict)  # synthesis model -> tried / accepted / rate
    seconds: float = 0.0
    rank: int = 0
    world_size: int = 1
    epoch_pools: list[list[str]] = field(default_factory=list)  # distinct task ids each epoch served (this rank)
    local_rollouts: int = 0  # rollouts this process scored
    observed_groups: int = 0  # groups handed to the engine (owner rank)
    trainable_parameters: int = 0  # parameters the optimizer updates (the adapter's, with LoRA)
    total_parameters: int = 0
    weight_syncs: int = 0  # times a vLLM server was given the policy
    sync_seconds: list[float] = field(default_factory=list)
    regenerated_groups: int = 0  # groups generated again because their weights were too old
    dynamic_sampling: dict[str, int] = field(default_factory=dict)  # dropped / extra / kept_zero_variance groups


def make_synthesizer(settings: SynthesisSettings) -> Callable[[list[Task]], list[Task]]:
    """The `synthesize(seeds) -> tasks` callable: rods' five-stage pipeline on the configured backend(s).

    With `settings.backends` it is an ensemble spreading variants across them by `settings.routing`.
    """
    from rods.llm import make_backend
    from rods.synth.pipeline import Pipeline

    specs: list[tuple[str | None, dict[str, Any]]] = [(b.backend, b.backend_args) for b in settings.backends]
    specs = specs or [(settings.backend, settings.backend_args)]
    if any(name is None for name, _ in specs):
        raise ValueError("synthesis.backend is required (template, openai or local)")
    backends = [make_backend(str(name), **args) for name, args in specs]
    return Pipeline(backends, settings.options)


def make_synthesis_worker(settings: SynthesisSettings, synthesize: Callable[[list[Task]], list[Task]] | None = None):
    """The engine's synthesis worker: `synthesize` (default: `make_synthesizer(settings)`) per `settings.kind`.

    With kind "process" the pipeline is built once in each worker process from the (picklable)
    settings; it is built here too, once, so a backend that cannot be built fails now, not in the
    worker. A given `synthesize` that cannot be pickled runs in a thread (with a warning).
    """
    from functools import partial

    from rods.engine import PoolSynthesisWorker

    options: dict[str, Any] = {"max_workers": settings.workers, "kind": settings.kind, "nice": settings.nice}
    if synthesize is not None:
        return PoolSynthesisWorker(synthesize, **options)
    if settings.kind == "thread":
        return PoolSynthesisWorker(make_synthesizer(settings), **options)
    make_synthesizer(settings)
    return PoolSynthesisWorker(factory=partial(make_synthesizer, settings), **options)


def latest_checkpoint(run_dir: Path) -> Path | None:
    folder = run_dir / CHECKPOINTS
    found = sorted(
        folder.glob("checkpoint-*"), key=lambda p: int(p.name.split("-")[-1]) if p.name.split("-")[-1].isdigit() else -1
    )
    return found[-1] if found else None


def _restore_engine_snapshot(checkpoint: Path, run_dir: Path) -> None:
    """Make the run's engine state the one saved with `checkpoint`."""
    from rods.engine.store import DB_FILE
    from rods.integrations.trl.callbacks import ENGINE_SUBDIR

    snapshot = checkpoint / ENGINE_SUBDIR / DB_FILE
    if not snapshot.is_file():
        raise FileNotFoundError(f"checkpoint {checkpoint} has no engine snapshot ({snapshot})")
    for suffix in ("", "-wal", "-shm"):
        (run_dir / (DB_FILE + suffix)).unlink(missing_ok=True)
    shutil.copy2(snapshot, run_dir / DB_FILE)


def training_ranks(config: TrainConfig):
    """This process's `RankGroup`: several when a launcher (accelerate, torchrun) started the run."""
    import os

    from rods.integrations.trl.ranks import RankGroup

    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        import torch

        use_cpu = config.grpo.use_cpu if config.grpo.use_cpu is not None else not torch.cuda.is_available()
        return RankGroup.current(cpu=use_cpu)
    return RankGroup()


def train(
    config: TrainConfig,
    *,
    resume: bool | str | Path = False,
    synthesize: Callable[[list[Task]], list[Task]] | None = None,
    model: Any = None,
    tokenizer: Any = None,
    on_epoch: Callable[[Any], None] | None = None,
    max_steps: int | None = None,
    callbacks: list[Any] | None = None,
    extra_rewards: Sequence[Callable[..., list[float]]] = (),
) -> RunSummary:
    """Run GRPO with the data engine as `config` says; returns the run's summary.

    Args:
        resume: True for the newest checkpoint of the run directory, or a checkpoint path.
        synthesize: the synthesis callable (default: `rods.synth` per `config.synthesis`).
        model / tokenizer: an already loaded policy (default: load `config.model`).
        on_epoch: called with each `EpochReport`.
        max_steps: overrides `config.grpo.max_steps` (e.g. to stop early and resume).
        callbacks: extra TrainerCallbacks.
        extra_rewards: TRL reward functions added to the engine's reward (the policy trains on the sum).
    """
    from rods.engine import DataEngine
    from rods.train.trainer import build_trainer, load_policy, trainable_parameters

    start = time.perf_counter()
    ranks = training_ranks(config)
    owner = ranks.is_owner
    run_dir = Path(config.run_dir)
    checkpoint: Path | None = None
    if resume:
        checkpoint = Path(resume) if not isinstance(resume, bool) else latest_checkpoint(run_dir)
        if checkpoint is None or not checkpoint.is_dir():
            raise FileNotFoundError(f"nothing to resume: no checkpoint in {run_dir / CHECKPOINTS}")
    elif (run_dir / CHECKPOINTS).exists() and any((run_dir / CHECKPOINTS).iterdir()):
        raise ValueError(f"{run_dir} already holds a run; resume it (--resume) or choose another output_dir")
    if ranks.distributed and config.warm_start.enabled and checkpoint is None:
        raise ValueError("warm_start.enabled is not supported on several processes yet: run the warm start in one "
                         "process (or set warm_start.enabled: false)")
    if owner:
        if checkpoint is None and (run_dir / "engine.sqlite").exists():
            # A fresh run must not silently continue an older engine state.
            for name in ("engine.sqlite", "engine.sqlite-wal", "engine.sqlite-shm", "events.jsonl",
                         "metrics.jsonl", "trainer_log.jsonl"):
                (run_dir / name).unlink(missing_ok=True)
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "config.yaml").write_text(dump_config(config), encoding="utf-8")

    seeds = load_seeds(config.data)
    summary = RunSummary(run_dir=str(run_dir), seeds=len(seeds), resumed_from=str(checkpoint) if checkpoint else None,
                         rank=ranks.rank, world_size=ranks.world_size)
    if model is None or tokenizer is None:
        model, tokenizer = load_policy(config.model)
    if config.model.lora.enabled and config.warm_start.enabled and checkpoint is None:
        from rods.train.trainer import add_adapter

        model = add_adapter(model, config.model)  # the warm start trains the adapter GRPO continues
    if config.warm_start.enabled and checkpoint is None:
        from rods.train.warm_start import warm_start

        summary.warm_start = warm_start(config, model, tokenizer, seeds, run_dir)
    elif checkpoint is not None and (run_dir / "warm_start.json").exists():
        summary.warm_start = json.loads((run_dir / "warm_start.json").read_text())

    engine = worker = None
    if owner:
        if checkpoint is not None:
            _restore_engine_snapshot(checkpoint, run_dir)
        engine = DataEngine(config.engine_config(), seeds, run_dir=run_dir)
        if config.synthesis.enabled:
            worker = make_synthesis_worker(config.synthesis, synthesize)
            engine.attach_worker(worker)
    ranks.barrier()  # the run directory and the engine are ready before any rank trains
    try:
        trainer = build_trainer(
            config, model, tokenizer,
            output_dir=run_dir / CHECKPOINTS,
            lookup=engine.task if engine is not None else _no_lookup,
            pool_source=engine.active_tasks if engine is not None else list,
            engine=engine,
            first_epoch=engine.epochs if engine is not None else 0,
            fresh=(lambda task: task.origin == "synthetic" and engine.stats(task.id)["n_rewards"] == 0)
            if engine is not None else None,
            metrics_path=run_dir / "trainer_log.jsonl" if owner else None,
            max_steps=max_steps,
            on_epoch=on_epoch,
            wait_for=worker if config.synthesis.wait_at_epoch_end else None,
            extra_callbacks=callbacks or (),
            ranks=ranks,
            reports=True,
            sync_dir=run_dir / "policy",
            extra_rewards=extra_rewards,
        )
        trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
        summary.steps = trainer.state.global_step
        summary.step_seconds = [round(s, 3) for s in trainer.rods_timer.durations]
        summary.step_splits = trainer.rods_timer.splits
        summary.epoch_pools = trainer.rods_pool.history
        summary.local_rollouts = trainer.rods_reward.local_rollouts
        summary.observed_groups = trainer.rods_reward.observed_groups
        summary.trainable_parameters, summary.total_parameters = trainable_parameters(trainer.model)
        summary.regenerated_groups = trainer.rods_rollout.regenerated_groups
        generator = trainer.rods_generator
        if generator is not None and hasattr(generator, "sync_seconds"):
            summary.weight_syncs = generator.syncs
            summary.sync_seconds = [round(s, 3) for s in generator.sync_seconds]
        if trainer.rods_dynamic is not None:
            summary.dynamic_sampling = dict(trainer.rods_dynamic.totals)
        if worker is not None:
            summary.submitted = worker.submitted_seeds
        if engine is not None:
            engine.save()
            metrics = engine.metrics(summary.steps)
            summary.epochs = engine.epochs
            summary.selected = metrics["total_selected"]
            summary.injected = metrics["total_injected"]
            summary.retired = metrics["total_retired"]
            summary.active = metrics["active"]
            summary.active_synthetic = metrics["active_synthetic"]
            if worker is not None:  # the pipeline's backbones (from its worker processes, or this one)
                summary.backbones = worker.backbones()
                engine.events.emit("synthesis", step=summary.steps, backbones=summary.backbones)
    finally:
        if engine is not None:
            engine.close()
    summary.seconds = round(time.perf_counter() - start, 2)
    if owner:
        (run_dir / "summary.json").write_text(json.dumps(asdict(summary), indent=2), encoding="utf-8")
    ranks.barrier()  # the summary and the last engine state are on disk before any rank returns
    return summary


def _no_lookup(task_id: str) -> Task:  # pragma: no cover - ranks without the engine read the shared epoch
    raise KeyError(task_id)
