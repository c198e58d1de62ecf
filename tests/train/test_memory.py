"""A step's memory: the default micro-batch from the token budget, checkpointing by size, the one-line refusal.

The shapes are those the issue measured on an H200 (139 GiB): a 0.9B random Llama (hidden 2048, 24
layers) ran out of memory training 8 tasks x K = 16 rollouts in one micro-batch without checkpointing,
and ran at a 27 GB peak with 16 micro-batches and checkpointing.
"""

import pytest

from rods.train import config_from_dict
from rods.train.memory import (
    CHECKPOINTING_FROM,
    GIB,
    MicroBatchPlan,
    ModelShape,
    StepShape,
    check_fits,
    estimate_bytes,
    microbatch_rollouts,
    peak_bytes,
    plan_step,
)
from rods.train.trainer import grpo_config, plan_microbatches

H200 = 139 * GIB


def _llama(hidden: int, layers: int, vocab: int = 2048, trainable: bool = True) -> ModelShape:
    """The random Llama of bench/gpu_check.py: intermediate 2h, heads h/64, key/value heads h/128, bf16."""
    parameters = layers * 9 * hidden * hidden + vocab * hidden
    return ModelShape(parameters=parameters, trainable=parameters if trainable else parameters // 100,
                      hidden=hidden, layers=layers, intermediate=2 * hidden, vocab=vocab, kv_width=hidden // 2,
                      param_bytes=2)


def _config(**rollout):
    return config_from_dict({"grpo": {"num_generations": 16, "tasks_per_step": 8}, "engine": {"K": 16},
                             "rollout": rollout, "synthesis": {"enabled": False}})


def test_the_default_micro_batch_of_8_tasks_x_16_x_1k_tokens_stays_within_the_budget():
    config = _config(max_completion_tokens=1024)
    plan = plan_microbatches(config)
    budget = config.grpo.max_tokens_per_microbatch
    assert plan.rollouts * 1024 <= budget
    assert plan.rollouts < 128 and plan.rollouts * plan.accumulation == 128  # never every rollout at once
    assert (plan.rollouts + 1) * 1024 > budget or 128 % (plan.rollouts + 1)  # and no smaller than it must be
    # What TRL is given follows the plan.
    args = grpo_config(config, "/tmp/unused", plan=plan)
    assert (args.per_device_train_batch_size, args.gradient_accumulation_steps) == (plan.rollouts, plan.accumulation)
    # A longer first prompt makes the micro-batch smaller, never over the budget.
    longer = plan_microbatches(config, prompt_tokens=3000)
    assert longer.rollouts < plan.rollouts and longer.rollouts * (3000 + 1024) <= budget


def test_what_the_config_fixes_is_kept():
    config = config_from_dict({
        "grpo": {"num_generations": 4, "tasks_per_step": 2, "gradient_accumulation_steps": 4,
                 "gradient_checkpointing": False},
        "engine": {"K": 4, "min_observations": 4, "burn_in_rollouts": 4}, "synthesis": {"enabled": False},
    })
    plan = plan_microbatches(config, cuda=True)
    assert (plan.rollouts, plan.accumulation, plan.gradient_checkpointing) == (2, 4, False)
    step = StepShape(rollouts=8, prompt_tokens=0, completion_tokens=10)
    assert plan_step(step, budget=1, per_device=4).rollouts == 4
    with pytest.raises(ValueError, match="micro-batches of 3"):
        plan_step(step, budget=1, per_device=3)


def test_a_micro_batch_that_divides_nothing_larger_than_one_rollout_is_one_rollout():
    assert microbatch_rollouts(128, 100_000, 65536) == 1
    assert microbatch_rollouts(12, 1000, 5000) == 4  # 5 does not divide 12
    assert microbatch_rollouts(7, 10, 65536) == 7


def test_gradient_checkpointing_is_on_by_default_for_large_models_on_cuda_only():
    step = StepShape(rollouts=16, prompt_tokens=100, completion_tokens=100)
    assert plan_step(step, budget=65536, parameters=CHECKPOINTING_FROM, cuda=True).gradient_checkpointing
    assert not plan_step(step, budget=65536, parameters=CHECKPOINTING_FROM - 1, cuda=True).gradient_checkpointing
    assert not plan_step(step, budget=65536, parameters=10 * CHECKPOINTING_FROM, cuda=False).gradient_checkpointing
    assert not plan_step(step, budget=65536, parameters=10 * CHECKPOINTING_FROM, cuda=True,
                         checkpointing=False).gradient_checkpointing


def test_the_setting_that_ran_out_of_memory_on_the_h200_is_refused_in_one_line():
    shape = _llama(2048, 24)
    step = StepShape(rollouts=128, prompt_tokens=500, completion_tokens=1024)
    everything_at_once = MicroBatchPlan(rollouts=128, accumulation=1, gradient_checkpointing=False)
    with pytest.raises(ValueError) as refused:
        check_fits(shape, step, everything_at_once, H200, "NVIDIA H200")
    message = str(refused.value)
    assert "\n" not in message
    assert "128 rollouts of up to 1524 tokens, trained 128 at a time" in message and "139 GiB" in message
    assert "grpo.max_tokens_per_microbatch" in message and "gradient_checkpointing" in message


@pytest.mark.parametrize("hidden,layers", [(2048, 24), (2560, 36)])  # the 0.9B and ~2B shapes
def test_the_defaults_fit_the_shapes_measured_on_the_h200(hidden, layers):
    shape = _llama(hidden, layers)
    step = StepShape(rollouts=128, prompt_tokens=500, completion_tokens=1024)
    plan = plan_step(step, budget=65536, parameters=shape.parameters, cuda=True)
    assert plan.gradient_checkpointing and plan.accumulation > 1
    peak = check_fits(shape, step, plan, H200, "NVIDIA H200")
    assert peak < 60 * GIB


def test_generating_every_long_episode_at_once_is_refused_with_the_generation_advice():
    qwen3_4b = ModelShape(parameters=4_020_000_000, trainable=4_020_000_000, hidden=2560, layers=36,
                          intermediate=9728, vocab=151936, kv_width=1024, param_bytes=2)
    step = StepShape(rollouts=256, prompt_tokens=3000, completion_tokens=16384)  # the paper's config
    plan = plan_step(step, budget=65536, parameters=qwen3_4b.parameters, cuda=True)
    assert (plan.rollouts, plan.gradient_checkpointing) == (2, True)
    with pytest.raises(ValueError, match=r"rollout\.generation_batch_size"):
        check_fits(qwen3_4b, step, plan, H200, "NVIDIA H200")
    for batched in (StepShape(rollouts=256, prompt_tokens=3000, completion_tokens=16384, generation_batch=16),
                    StepShape(rollouts=256, prompt_tokens=3000, completion_tokens=16384, generation_batch=0)):
        assert check_fits(qwen3_4b, batched, plan, H200, "NVIDIA H200") < H200  # HF in batches of 16, or vLLM


def test_the_estimate_grows_with_what_a_step_holds():
    shape = _llama(1024, 8)
    step = StepShape(rollouts=32, prompt_tokens=200, completion_tokens=800)
    small = MicroBatchPlan(rollouts=4, accumulation=8, gradient_checkpointing=False)
    large = MicroBatchPlan(rollouts=32, accumulation=1, gradient_checkpointing=False)
    checkpointed = MicroBatchPlan(rollouts=32, accumulation=1, gradient_checkpointing=True)
    assert peak_bytes(estimate_bytes(shape, step, small)) < peak_bytes(estimate_bytes(shape, step, large))
    assert estimate_bytes(shape, step, checkpointed)["activations"] < estimate_bytes(shape, step, large)["activations"]
    adapter = _llama(1024, 8, trainable=False)
    assert estimate_bytes(adapter, step, small)["optimizer"] < estimate_bytes(shape, step, small)["optimizer"]


def test_the_shape_is_read_off_a_model():
    from transformers import LlamaConfig, LlamaForCausalLM

    model = LlamaForCausalLM(LlamaConfig(vocab_size=100, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                                         num_attention_heads=4, num_key_value_heads=2))
    shape = ModelShape.of(model)
    assert (shape.hidden, shape.layers, shape.intermediate, shape.vocab, shape.kv_width) == (64, 2, 96, 100, 32)
    assert shape.parameters == shape.trainable == sum(p.numel() for p in model.parameters())
    assert shape.param_bytes == 4
