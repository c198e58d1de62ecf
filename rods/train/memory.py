"""What a GRPO step holds in memory: micro-batches from a token budget, checkpointing by size, a fit check.

A step trains `tasks_per_step` x K rollouts. Training them all in one forward pass
is what ran a 0.9B model out of an H200's 139 GiB (docs/results/gpu.md), so by
default a step is cut into micro-batches of at most `grpo.max_tokens_per_microbatch`
tokens, each rollout counted at its cap (longest first prompt of the pool plus
`rollout.max_completion_tokens`): the rule holds for the longest step the config
allows, not only for a typical one. Gradient checkpointing is on by default on
CUDA from `CHECKPOINTING_FROM` parameters. `check_fits` estimates the peak of a step
from the model's shape, the micro-batch and the dtype, and refuses, in one line,
a setting that cannot fit on the device before any rollout is generated.

The estimate is coarse on purpose (weights, gradients, AdamW's two moments, the
activations a decoder layer keeps per token, the logits of completion tokens and
their gradient, a reference model when beta > 0; the KV cache of one HF generate
batch, which is freed before training): it errs high, and it answers "can this
fit", not "how much will it use". No I/O, no trainer imports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Gradient checkpointing is on by default on CUDA for models of at least this many parameters.
CHECKPOINTING_FROM = 500_000_000
#: Share of the device's memory a step may be estimated to use.
HEADROOM = 0.95
GIB = 1024**3


@dataclass(frozen=True)
class ModelShape:
    """The sizes of a decoder-only policy that decide a step's memory."""

    parameters: int
    trainable: int
    hidden: int
    layers: int
    intermediate: int
    vocab: int
    kv_width: int  # key/value heads x head size
    param_bytes: int  # bytes per stored parameter (2 for bf16/fp16, 4 for fp32)

    @classmethod
    def of(cls, model: Any) -> ModelShape:
        """Read the shape off a loaded transformers model (peft-wrapped or not)."""
        config = model.config
        hidden = int(config.hidden_size)
        heads = int(getattr(config, "num_attention_heads", 1) or 1)
        kv_heads = int(getattr(config, "num_key_value_heads", heads) or heads)
        head_dim = int(getattr(config, "head_dim", None) or hidden // heads)
        params = list(model.parameters())
        return cls(
            parameters=sum(p.numel() for p in params),
            trainable=sum(p.numel() for p in params if p.requires_grad),
            hidden=hidden,
            layers=int(config.num_hidden_layers),
            intermediate=int(getattr(config, "intermediate_size", None) or 4 * hidden),
            vocab=int(config.vocab_size),
            kv_width=kv_heads * head_dim,
            param_bytes=params[0].element_size() if params else 4,
        )


@dataclass(frozen=True)
class StepShape:
    """What one step asks of the policy: how many rollouts, how long, in which precision."""

    rollouts: int  # rollouts a process trains per optimizer step
    prompt_tokens: int  # the longest first prompt of the pool
    completion_tokens: int  # rollout.max_completion_tokens
    activation_bytes: int = 2  # 2 under bf16/fp16 autocast, 4 in fp32
    generation_batch: int | None = None  # episodes per generate call (None: every rollout; 0: vLLM generates)
    reference_model: bool = False  # beta > 0 keeps a frozen copy

    @property
    def sequence_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class MicroBatchPlan:
    """How a step is cut: rollouts per micro-batch, micro-batches per step, checkpointing."""

    rollouts: int
    accumulation: int
    gradient_checkpointing: bool


def microbatch_rollouts(rollouts: int, sequence_tokens: int, budget: int) -> int:
    """The most rollouts per micro-batch that divide a step's `rollouts` and stay within `budget` tokens (>= 1)."""
    fitting = [d for d in range(1, rollouts + 1) if rollouts % d == 0 and d * sequence_tokens <= budget]
    return max(fitting, default=1)


def checkpointing_default(parameters: int, cuda: bool) -> bool:
    """On for CUDA models from `CHECKPOINTING_FROM` parameters: recomputing a layer is cheaper than running out."""
    return cuda and parameters >= CHECKPOINTING_FROM


def plan_step(
    step: StepShape,
    *,
    budget: int,
    per_device: int | None = None,
    accumulation: int | None = None,
    checkpointing: bool | None = None,
    parameters: int = 0,
    cuda: bool = False,
) -> MicroBatchPlan:
    """The micro-batches of a step: what the config fixes is kept, the rest comes from the token budget."""
    if per_device is not None:
        size = per_device
    elif accumulation is not None:
        size = step.rollouts // accumulation
    else:
        size = microbatch_rollouts(step.rollouts, step.sequence_tokens, budget)
    if size < 1 or step.rollouts % size:
        raise ValueError(f"grpo: {step.rollouts} rollouts per process and step cannot be cut into micro-batches "
                         f"of {size}")
    ckpt = checkpointing_default(parameters, cuda) if checkpointing is None else checkpointing
    return MicroBatchPlan(rollouts=size, accumulation=step.rollouts // size, gradient_checkpointing=ckpt)


def estimate_bytes(shape: ModelShape, step: StepShape, plan: MicroBatchPlan) -> dict[str, int]:
    """What one step holds, by part (bytes); `peak_bytes` adds them up."""
    tokens = plan.rollouts * step.sequence_tokens
    act = step.activation_bytes
    full_layer = (8 * shape.hidden + 4 * shape.intermediate) * act  # what a layer keeps per token for backward
    if plan.gradient_checkpointing:
        activations = tokens * (shape.layers * shape.hidden * act + full_layer)
    else:
        activations = tokens * shape.layers * full_layer
    generating = step.rollouts if step.generation_batch is None else step.generation_batch
    return {
        "weights": shape.parameters * shape.param_bytes * (2 if step.reference_model else 1),
        "gradients": shape.trainable * shape.param_bytes,
        "optimizer": 2 * shape.trainable * shape.param_bytes,
        "activations": activations,
        "logits": 2 * plan.rollouts * step.completion_tokens * shape.vocab * act,  # the logits and their gradient
        "generation_kv": generating * step.sequence_tokens * shape.layers * 2 * shape.kv_width * act,
    }


def peak_bytes(parts: dict[str, int]) -> int:
    """The step's peak: generation's KV cache is freed before the training pass, so the larger of the two counts."""
    kept = parts["weights"] + parts["gradients"] + parts["optimizer"]
    return kept + max(parts["activations"] + parts["logits"], parts["generation_kv"])


def check_fits(shape: ModelShape, step: StepShape, plan: MicroBatchPlan, device_bytes: int, device: str) -> int:
    """The estimated peak (bytes); a one-line ValueError when it exceeds the device's memory."""
    parts = estimate_bytes(shape, step, plan)
    total = peak_bytes(parts)
    if total > HEADROOM * device_bytes:
        detail = ", ".join(f"{name} {value / GIB:.1f}" for name, value in parts.items())
        if parts["generation_kv"] > parts["activations"] + parts["logits"]:
            advice = "set rollout.generation_batch_size (episodes per generate call) or generate with vLLM " \
                     "(grpo.generation)"
        else:
            advice = "lower grpo.max_tokens_per_microbatch (or grpo.per_device_train_batch_size) or turn on " \
                     "grpo.gradient_checkpointing"
        raise ValueError(
            f"grpo: a step of {step.rollouts} rollouts of up to {step.sequence_tokens} tokens, trained "
            f"{plan.rollouts} at a time, needs about {total / GIB:.0f} GiB ({detail}; gradient checkpointing "
            f"{'on' if plan.gradient_checkpointing else 'off'}) but {device} has {device_bytes / GIB:.0f} GiB: "
            f"{advice}, or shorten rollout.max_completion_tokens"
        )
    return total
