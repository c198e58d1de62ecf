"""Assembling TRL's GRPOTrainer from a `TrainConfig`: policy loading, GRPOConfig, rollout, reward, engine hooks.

`build_trainer` wires the pieces of `rods.integrations.trl` together (they know
nothing of `TrainConfig`); `rods.train.run` drives it with a run directory. Plain GRPO (no engine) is
the same trainer with `engine=None` and a fixed task list, which is what the
overhead benchmark compares against. With ``model.lora`` the policy trains a LoRA
adapter (TRL's ``peft_config``, or the adapter a LoRA warm start already put on it);
with ``grpo.generation`` vLLM generates the rollouts (a server rods keeps synced, or
TRL's own vLLM); with ``grpo.dynamic_sampling`` zero-variance groups are refilled.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from rods.integrations.trl.callbacks import EngineCallback, JsonlMetricsCallback, StepTimer
from rods.integrations.trl.compat import check_trl_version, quiet_rollout_func_notice, score_only_completions_on_cpu
from rods.integrations.trl.dataset import LivePool, live_pool_dataset
from rods.integrations.trl.policy_server import PolicyServer, PolicySyncCallback
from rods.integrations.trl.ranks import RankGroup
from rods.integrations.trl.rewards import EngineReward
from rods.integrations.trl.rollout import MultiTurnRollout
from rods.llm.weights import load_causal_lm
from rods.rollout import EpisodeOptions
from rods.tasks import Task
from rods.train.config import GRPOSettings, LoraSettings, ModelSettings, TrainConfig
from rods.train.memory import MicroBatchPlan, ModelShape, StepShape, check_fits, plan_step

log = logging.getLogger(__name__)


def load_policy(settings: ModelSettings, *, device: str | None = None) -> tuple[Any, Any]:
    """(model, tokenizer) of the policy (`rods.llm.weights`); dtype auto is bfloat16 on a GPU, else float32."""
    import torch

    dtype = settings.torch_dtype
    if dtype == "auto":
        dtype = "bfloat16" if (torch.cuda.is_available() and device != "cpu") else "float32"
    return load_causal_lm(settings.name_or_path, settings.gguf_file, dtype=dtype)


def lora_config(settings: LoraSettings):
    """peft's `LoraConfig` for ``model.lora`` (a causal LM; the LM head keeps its weights)."""
    from peft import LoraConfig

    return LoraConfig(
        r=settings.rank, lora_alpha=settings.alpha, lora_dropout=settings.dropout,
        target_modules=settings.target_modules, task_type="CAUSAL_LM", bias="none",
    )


def add_adapter(model: Any, settings: ModelSettings) -> Any:
    """`model` with a fresh LoRA adapter (only the adapter trains); used when a warm start trains it first."""
    from peft import get_peft_model

    peft_model = get_peft_model(model, lora_config(settings.lora))
    name_base(peft_model, settings)
    return peft_model


def name_base(model: Any, settings: ModelSettings) -> None:
    """Write the policy's rods name as the adapter's base, so an adapter checkpoint says what to load it on."""
    for peft_config in getattr(model, "peft_config", {}).values():
        peft_config.base_model_name_or_path = settings.spec


def trainable_parameters(model: Any) -> tuple[int, int]:
    """(trainable, total) parameter counts."""
    params = list(model.parameters())
    return sum(p.numel() for p in params if p.requires_grad), sum(p.numel() for p in params)


def resolve_weight_sync(grpo: GRPOSettings, lora: bool) -> str | None:
    """``grpo.weight_sync`` for a vllm_server run: adapter, disk, nccl, or None (off); auto chooses by LoRA and CUDA."""
    if grpo.weight_sync == "off":
        return None
    if grpo.weight_sync != "auto":
        return grpo.weight_sync
    import torch

    return "adapter" if lora else ("nccl" if torch.cuda.is_available() else "disk")


def grpo_config(config: TrainConfig, output_dir: str | Path, *, max_steps: int | None = None, world_size: int = 1,
                plan: MicroBatchPlan | None = None):
    """TRL's `GRPOConfig` for this run (CPU-safe defaults when no GPU is present).

    A step's `grpo.tasks_per_step` x K rollouts are split over `world_size` processes, and
    each process's share into micro-batches as `plan` says (default: `plan_microbatches`
    without a model, i.e. by the token budget with completions alone).
    """
    from trl import GRPOConfig

    g = config.grpo
    use_cpu, bf16 = precision(config)
    if g.per_device_train_batch_size is not None and world_size > 1:
        raise ValueError(
            f"grpo.per_device_train_batch_size = {g.per_device_train_batch_size} is for one process; on {world_size} "
            "processes leave it unset (each process then takes tasks_per_step*num_generations / "
            "(gradient_accumulation_steps x processes) rollouts)"
        )
    plan = plan or plan_microbatches(config, world_size=world_size)
    per_device = plan.rollouts
    kwargs: dict[str, Any] = dict(
        output_dir=str(output_dir),
        use_cpu=use_cpu,
        bf16=bf16,
        gradient_checkpointing=plan.gradient_checkpointing,
        num_generations=g.num_generations,
        per_device_train_batch_size=per_device,
        gradient_accumulation_steps=plan.accumulation,
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
    if g.generation == "trl_vllm":
        kwargs.update(use_vllm=True, vllm_mode=g.vllm_mode)
        if g.vllm_mode == "server":
            kwargs["vllm_server_base_url"] = str(g.vllm_base_url).rstrip("/").removesuffix("/v1")
    kwargs.update(g.extra)
    return GRPOConfig(**kwargs)


def plan_microbatches(config: TrainConfig, *, world_size: int = 1, model: Any = None, prompt_tokens: int = 0,
                      cuda: bool = False, vllm: bool = False) -> MicroBatchPlan:
    """The micro-batches of a step (`rods.train.memory`); with `model` on CUDA, refused early if it cannot fit."""
    g = config.grpo
    rollouts, rest = divmod(g.rollouts_per_step, world_size)
    if rest or not rollouts:
        raise ValueError(f"grpo.tasks_per_step*grpo.num_generations = {g.rollouts_per_step} rollouts per step cannot "
                         f"be split evenly over {world_size} processes")
    if g.gradient_accumulation_steps is not None and rollouts % g.gradient_accumulation_steps:
        raise ValueError(
            f"grpo.tasks_per_step*grpo.num_generations = {g.rollouts_per_step} rollouts per step cannot be split "
            f"evenly over grpo.gradient_accumulation_steps = {g.gradient_accumulation_steps} x {world_size} processes"
        )
    shape = ModelShape.of(model) if model is not None else None
    if shape is not None and config.model.lora.enabled and shape.trainable == shape.parameters:
        shape = replace(shape, trainable=shape.parameters // 100)  # TRL adds the adapter later; ~1% trains
    step = StepShape(
        rollouts=rollouts, prompt_tokens=prompt_tokens, completion_tokens=config.rollout.max_completion_tokens,
        activation_bytes=2 if cuda and precision(config)[1] else 4,
        generation_batch=0 if vllm else config.rollout.generation_batch_size, reference_model=g.beta > 0,
    )
    plan = plan_step(step, budget=g.max_tokens_per_microbatch, per_device=g.per_device_train_batch_size,
                     accumulation=g.gradient_accumulation_steps, checkpointing=g.gradient_checkpointing,
                     parameters=shape.parameters if shape else 0, cuda=cuda)
    if shape is not None and cuda:
        import torch

        device = torch.cuda.current_device()
        check_fits(shape, step, plan, torch.cuda.get_device_properties(device).total_memory,
                   torch.cuda.get_device_name(device))
    return plan


def precision(config: TrainConfig) -> tuple[bool, bool]:
    """(use_cpu, bf16) of the run: the config's choice, else CUDA in bfloat16 when a device is present."""
    import torch

    g, cuda = config.grpo, torch.cuda.is_available()
    use_cpu = g.use_cpu if g.use_cpu is not None else not cuda
    return use_cpu, g.bf16 if g.bf16 is not None else (cuda and not use_cpu)


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


def make_generator(config: TrainConfig, *, sync_dir: str | Path | None = None, ranks: RankGroup | None = None):
    """Who generates rollout replies: None (the trainer's model), a synced vLLM server, or TRL's vLLM."""
    g = config.grpo
    if g.generation == "vllm_server":
        from rods.integrations.trl.policy_server import PolicyServer
        from rods.integrations.trl.vllm_server import VLLMServerGenerator
        from rods.integrations.trl.weight_sync import make_sync

        http = VLLMServerGenerator(str(g.vllm_base_url), g.vllm_model)
        kind = resolve_weight_sync(g, config.model.lora.enabled)
        folder = Path(g.sync_dir or sync_dir or Path(config.run_dir) / "policy")
        served = http.base_model if kind in ("disk", "nccl") else ""  # full weights keep the served name
        sync = make_sync(kind, str(g.vllm_base_url), served, folder) if kind else None
        return PolicyServer(http, sync, sync_every=g.sync_every, lag_bound=g.policy_lag_bound,
                            allow_stale=g.allow_stale_server, ranks=ranks)
    if g.generation == "trl_vllm":
        from rods.integrations.trl.trl_vllm import TRLColocateGenerator, TRLServerGenerator

        if g.vllm_mode == "colocate":
            return TRLColocateGenerator()
        return TRLServerGenerator(str(g.vllm_base_url), g.vllm_model)
    return None


def longest_prompt(rollout: MultiTurnRollout, tasks: Sequence[Task]) -> int:
    """Tokens of the longest first prompt among `tasks` (what a micro-batch's rollouts are sized by)."""
    return max((rollout.prompt_tokens(task) for task in tasks), default=0)


def make_rollout(config: TrainConfig, lookup: Callable[[str], Task], tokenizer: Any, *, generator: Any = None,
                 ) -> MultiTurnRollout:
    """The token-level agent loop of this run (rollout settings and the policy's tool format).

    `generator` comes from `make_generator` (None: the trainer's model generates; the
    warm start's probe always uses the model).
    """
    options = EpisodeOptions(
        system_prompt=config.model.system_prompt,
        tool_format=config.model.tool_format,
        tools_in_prompt=config.model.tools_in_prompt,
    )
    return MultiTurnRollout(
        lookup, tokenizer, config.rollout, options=options, chat_template_kwargs=config.model.chat_template_kwargs,
        generator=generator, group_size=config.grpo.num_generations,
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
    sync_dir: str | Path | None = None,
    extra_rewards: Sequence[Callable[..., list[float]]] = (),
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
        sync_dir: where adapters or weights for a vLLM server are written (default:
            ``grpo.sync_dir`` or ``<run dir>/policy``).
        extra_rewards: TRL reward functions added to the engine's reward (e.g. a format bonus);
            the policy trains on their sum, the engine observes only its own signal.
    """
    import torch
    from accelerate.utils import is_peft_model
    from trl import GRPOTrainer

    check_trl_version()
    score_only_completions_on_cpu()
    ranks = ranks or RankGroup()
    pool = LivePool(
        pool_source, config.grpo.tasks_per_step, config.grpo.steps_per_epoch, seed=config.grpo.seed,
        first_epoch=first_epoch, fresh=fresh, ranks=ranks,
    )
    generator = make_generator(config, sync_dir=sync_dir, ranks=ranks)
    rollout = make_rollout(config, lookup if ranks.is_owner else pool.task, tokenizer, generator=generator)
    plan = plan_microbatches(
        config, world_size=ranks.world_size, model=model, prompt_tokens=longest_prompt(rollout, pool_source()),
        cuda=not precision(config)[0] and torch.cuda.is_available(), vllm=generator is not None,
    )
    args = grpo_config(config, output_dir, max_steps=max_steps, world_size=ranks.world_size, plan=plan)
    log.info("a step: %d micro-batches of %d rollouts, gradient checkpointing %s", plan.accumulation, plan.rollouts,
             "on" if plan.gradient_checkpointing else "off")
    if engine is not None:
        check_group_size(args.num_generations, engine.config.K)
    if config.grpo.generation == "trl_vllm":
        from rods.integrations.trl.trl_vllm import check_available

        check_available()
    dynamic = config.grpo.dynamic_sampling
    if dynamic.enabled and ranks.distributed:
        raise ValueError("grpo.dynamic_sampling is not supported on several processes yet (a rank's share of the "
                         "batch need not hold whole groups): train in one process or turn it off")
    reward = EngineReward(
        config.grpo.reward, engine, engine_signal=config.grpo.engine_signal, ranks=ranks, reports=reports,
        group_size=args.num_generations,
    )
    rollout_func: Any = rollout
    if dynamic.enabled:
        from rods.integrations.trl.dynamic_sampling import DynamicSampling

        rollout_func = DynamicSampling(
            rollout, group_size=args.num_generations, reward=config.grpo.reward,
            max_extra_groups=config.grpo.tasks_per_step if dynamic.max_extra_groups is None
            else dynamic.max_extra_groups,
            draw=pool.draw, on_dropped=reward.hold,
        )
    peft_config = None
    if config.model.lora.enabled and not is_peft_model(model):
        peft_config = lora_config(config.model.lora)
    callbacks: list[Any] = []
    engine_callback = None
    if engine is not None:
        engine_callback = EngineCallback(engine, on_epoch=on_epoch, wait_for=wait_for, pool=pool)
        callbacks.append(engine_callback)
    if metrics_path is not None:
        callbacks.append(JsonlMetricsCallback(metrics_path))
    if isinstance(generator, PolicyServer):
        callbacks.append(PolicySyncCallback(generator))
    callbacks += list(extra_callbacks)
    timer = StepTimer({
        "generation": lambda: rollout.seconds,
        "rewards_engine": lambda: reward.observe_seconds + (
            engine_callback.select_seconds + engine_callback.boundary_seconds if engine_callback else 0.0),
        "synthesis_wait": lambda: engine_callback.waited_seconds if engine_callback else 0.0,
    })
    callbacks.append(timer)  # last, so a step's time includes the engine's work
    with quiet_rollout_func_notice():
        trainer = GRPOTrainer(
            model=model,
            reward_funcs=[reward, *extra_rewards],
            args=args,
            train_dataset=live_pool_dataset(pool),
            processing_class=tokenizer,
            rollout_func=rollout_func,
            callbacks=callbacks,
            peft_config=peft_config,
        )
    if config.model.lora.enabled:
        name_base(trainer.model, config.model)
        trained, total = trainable_parameters(trainer.model)
        log.info("LoRA r=%d: %d of %d parameters train (%.2f%%)", config.model.lora.rank, trained, total,
                 100 * trained / total)
    trainer.rods_pool = pool
    trainer.rods_rollout = rollout
    trainer.rods_reward = reward
    trainer.rods_timer = timer
    trainer.rods_generator = generator
    trainer.rods_dynamic = rollout_func if dynamic.enabled else None
    return trainer
