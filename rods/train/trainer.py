"""Assembling TRL's GRPOTrainer from a `TrainConfig`: policy loading, GRPOConfig, rollout, reward, engine hooks.

`build_trainer` wires the pieces of `rods.integrations.trl` together (they know
nothing of `TrainConfig`); `rods.train.run` drives it with a run directory. Plain GRPO (no engine) is
the same trainer with `engine=None` and a fixed task list, which is what the
overhead benchmark compares against.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rods.integrations.trl.callbacks import EngineCallback, JsonlMetricsCallback, StepTimer
from rods.integrations.trl.compat import check_trl_version, quiet_rollout_func_notice, score_only_completions_on_cpu
from rods.integrations.trl.dataset import LivePool, live_pool_dataset
from rods.integrations.trl.ranks import RankGroup
from rods.integrations.trl.rewards import EngineReward
from rods.integrations.trl.rollout import MultiTurnRollout
from rods.llm.weights import load_causal_lm
from rods.rollout import EpisodeOptions
from rods.tasks import Task
from rods.train.config import ModelSettings, TrainConfig

log = logging.getLogger(__name__)


def load_policy(settings: ModelSettings, *, device: str | None = None) -> tuple[Any, Any]:
    """(model, tokenizer) of the policy (`rods.llm.weights`); dtype auto is bfloat16 on a GPU, else float32."""
    import torch

    dtype = settings.torch_dtype
    if dtype == "auto":
        dtype = "bfloat16" if (torch.cuda.is_available() and device != "cpu") else "float32"
    return load_causal_lm(settings.name_or_path, settings.gguf_file, dtype=dtype)


def grpo_config(config: TrainConfig, output_dir: str | Path, *, max_steps: int | None = None, world_size: int = 1):
    """TRL's `GRPOConfig` for this run (CPU-safe defaults when no GPU is present).

    A step's `grpo.tasks_per_step` x K rollouts are split over `world_size` processes.
    """
    import torch
    from trl import GRPOConfig

    g = config.grpo
    cuda = torch.cuda.is_available()
    use_cpu = g.use_cpu if g.use_cpu is not None else not cuda
    bf16 = g.bf16 if g.bf16 is not None else (cuda and not use_cpu)
    per_device = g.per_device_train_batch_size
    if per_device is None:
        share, rest = divmod(g.rollouts_per_step, g.gradient_accumulation_steps * world_size)
        if rest or not share:
            raise ValueError(
                f"grpo.tasks_per_step*grpo.num_generations = {g.rollouts_per_step} rollouts per step cannot be split "
                f"evenly over grpo.gradient_accumulation_steps = {g.gradient_accumulation_steps} x {world_size} "
                "processes"
            )
        per_device = share
    elif world_size > 1:
        raise ValueError(
            f"grpo.per_device_train_batch_size = {per_device} is for one process; on {world_size} processes leave it "
            "unset (each process then takes tasks_per_step*num_generations / (gradient_accumulation_steps x "
            "processes) rollouts)"
        )
    kwargs: dict[str, Any] = dict(
        output_dir=str(output_dir),
        use_cpu=use_cpu,
        bf16=bf16,
        gradient_checkpointing=g.gradient_checkpointing,
        num_generations=g.num_generations,
        per_device_train_batch_size=per_device,
        gradient_accumulation_steps=g.gradient_accumulation_steps,
        max_steps=max_steps or g.max_steps,
        learning_rate=g.learning_rate,
        beta=g.beta,
        epsilon=g.epsilon,
        loss_type=g.loss_type,
        logging_steps=g.logging_steps,
        save_strategy="steps",
        save_steps=g.save_steps,
        save_total_limit=g.save_total_limit,
        report_to=g.report_to,
        seed=g.seed,
        shuffle_dataset=False,  # the live pool shuffles per epoch itself
        ignore_data_skip=True,  # a resumed run starts a fresh epoch from the restored pool
        dataloader_num_workers=0,
        temperature=config.rollout.temperature if config.rollout.temperature > 0 else 1.0,
        top_p=config.rollout.top_p,
        max_completion_length=config.rollout.max_completion_tokens,
        remove_unused_columns=False,
        disable_tqdm=True,
    )
    kwargs.update(g.extra)
    return GRPOConfig(**kwargs)


def check_group_size(num_generations: int, engine_k: int) -> None:
    """GRPO's group is what the engine's ledger windows: `grpo.num_generations` must equal `engine.K`.

    Checked on the GRPOConfig actually built (`grpo.extra` could override it) against the
    engine actually running (a resumed engine keeps its saved K unless the config gives one).
    """
    if num_generations != engine_k:
        raise ValueError(
            f"grpo.num_generations = {num_generations} but engine.K = {engine_k}: the engine's ledger keeps one "
            "GRPO group of rewards per task, so the two must be equal (set both)"
        )


def make_rollout(config: TrainConfig, lookup: Callable[[str], Task], tokenizer: Any) -> MultiTurnRollout:
    """The token-level agent loop of this run (rollout settings and the policy's tool format)."""
    options = EpisodeOptions(
        system_prompt=config.model.system_prompt,
        tool_format=config.model.tool_format,
        tools_in_prompt=config.model.tools_in_prompt,
    )
    generator = None
    if config.grpo.generation == "vllm_server":
        from rods.integrations.trl.vllm_server import VLLMServerGenerator

        generator = VLLMServerGenerator(str(config.grpo.vllm_base_url), config.grpo.vllm_model)
    return MultiTurnRollout(
        lookup, tokenizer, config.rollout, options=options, chat_template_kwargs=config.model.chat_template_kwargs,
        generator=generator,
    )


def build_trainer(
    config: TrainConfig,
    model: Any,
    tokenizer: Any,
    *,
    output_dir: str | Path,
    lookup: Callable[[str], Task],
    pool_source: Callable[[], list[Task]],
    engine: Any = None,
    first_epoch: int = 0,
    fresh: Callable[[Task], bool] | None = None,
    metrics_path: str | Path | None = None,
    max_steps: int | None = None,
    extra_callbacks: Sequence[Any] = (),
    on_epoch: Any = None,
    wait_for: Any = None,
    ranks: RankGroup | None = None,
    reports: bool | None = None,
):
    """A GRPOTrainer whose rollouts play the agent loop and whose data come from a live pool.

    Args:
        lookup: task id -> Task, for every id the dataset may yield.
        pool_source: the tasks of the current epoch (called at each epoch start).
        engine: a `DataEngine` observing rewards, selecting seeds and refreshing the
            pool at epoch boundaries; None for plain GRPO.
        first_epoch: epoch counter to continue from (resume).
        wait_for: a synthesis worker that epoch boundaries wait for (see `EngineCallback`).
        fresh: tasks for which this is true open each epoch (see `LivePool`).
        ranks: the training processes (default: this one alone). Only the owner holds
            `engine`; the others pass None with `reports=True` and look tasks up in the
            epoch the owner shared.
        reports: the run has an engine on its owner rank (default: `engine is not None`).
    """
    from trl import GRPOTrainer

    check_trl_version()
    score_only_completions_on_cpu()
    ranks = ranks or RankGroup()
    args = grpo_config(config, output_dir, max_steps=max_steps, world_size=ranks.world_size)
    if engine is not None:
        check_group_size(args.num_generations, engine.config.K)
    pool = LivePool(
        pool_source, config.grpo.tasks_per_step, config.grpo.steps_per_epoch, seed=config.grpo.seed,
        first_epoch=first_epoch, fresh=fresh, ranks=ranks,
    )
    rollout = make_rollout(config, lookup if ranks.is_owner else pool.task, tokenizer)
    reward = EngineReward(
        config.grpo.reward, engine, engine_signal=config.grpo.engine_signal, ranks=ranks, reports=reports,
        group_size=args.num_generations,
    )
    callbacks: list[Any] = []
    if engine is not None:
        callbacks.append(EngineCallback(engine, on_epoch=on_epoch, wait_for=wait_for, pool=pool))
    if metrics_path is not None:
        callbacks.append(JsonlMetricsCallback(metrics_path))
    callbacks += list(extra_callbacks)
    timer = StepTimer()
    callbacks.append(timer)  # last, so a step's time includes the engine's work
    with quiet_rollout_func_notice():
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=[reward],
            args=args,
            train_dataset=live_pool_dataset(pool),
            processing_class=tokenizer,
            rollout_func=rollout,
            callbacks=callbacks,
        )
    trainer.rods_pool = pool
    trainer.rods_rollout = rollout
    trainer.rods_reward = reward
    trainer.rods_timer = timer
    return trainer
