"""Dynamic sampling (`grpo.dynamic_sampling`): zero-variance groups dropped, refilled, counted; the engine sees all.

The refill test scripts the replies over HTTP (the vLLM completions route of the
scripted server): the batch's task always gets a reply without a call (RP 0 for
both rollouts: no gradient), the refill task gets its gold call once and nothing
once (RP 1 and 0). The arm test runs `configs/ablations/dynamic_sampling.yaml`,
shrunk to a tiny model on CPU, for two steps, after `rods compare` resolved it
beside the static pool and RODS.
"""

import threading
from pathlib import Path

import pytest

from rods.engine import DataEngine, EngineConfig
from rods.envs.slices import turn_slices
from rods.integrations.trl.dynamic_sampling import DynamicSampling, zero_variance
from rods.integrations.trl.rewards import EngineReward
from rods.integrations.trl.rollout import MultiTurnRollout
from rods.integrations.trl.vllm_server import VLLMServerGenerator
from rods.integrations.trl.warm_start import hermes_calls
from rods.rollout.settings import RolloutSettings
from rods.tasks import load_split, write_tasks

CONFIGS = Path(__file__).resolve().parents[3] / "configs"


@pytest.fixture(scope="module")
def slices():
    found = [t for t in turn_slices(load_split("train"), max_calls=1) if hermes_calls(t.ground_truth[0])]
    return found[:3]  # one-turn tasks whose gold call has a Hermes form


def scripted_replies(server, tokenizer, informative):
    """The refill task's first reply is its gold call, every other reply has no call."""
    eos = tokenizer.eos_token_id
    gold = tokenizer(hermes_calls(informative.ground_truth[0]), add_special_tokens=False).input_ids + [eos]
    question = informative.question[0][-1].content
    lock, served = threading.Lock(), []

    def complete(body):
        text = tokenizer.decode(body["prompt"])
        with lock:
            first = question in text and not served
            if question in text:
                served.append(1)
        ids = gold if first else [eos]
        return {"completion": {"token_ids": ids, "logprobs": [-0.5] * len(ids)}}

    server.on("/v1/completions", complete)


def test_zero_variance():
    assert zero_variance([0.5, 0.5]) and not zero_variance([0.0, 1.0])


def test_a_zero_variance_group_is_refilled_and_the_engine_observes_both(scripted_openai_server, tiny_tokenizer,
                                                                        slices, tmp_path):
    flat, informative, other = slices
    scripted_replies(scripted_openai_server, tiny_tokenizer, informative)
    engine = DataEngine(EngineConfig(K=2, min_observations=2, burn_in_rollouts=2), list(slices), run_dir=tmp_path)
    reward = EngineReward("progress", engine, group_size=2)
    rollout = MultiTurnRollout({t.id: t for t in slices}.__getitem__, tiny_tokenizer,
                               RolloutSettings(max_steps_per_turn=1, max_reply_tokens=64, tool_docs="signatures"),
                               generator=VLLMServerGenerator(scripted_openai_server.base_url), group_size=2)
    drawn = []

    def draw(n, exclude):
        drawn.append(set(exclude))
        return [informative.id] * n

    sampler = DynamicSampling(rollout, group_size=2, reward="progress", max_extra_groups=1, draw=draw,
                              on_dropped=reward.hold)
    out = sampler([flat.id, flat.id, other.id, other.id], trainer=None)

    # the first flat group was replaced by the refill, whose rewards differ; the cap (1) kept the second
    assert out["task_id"] == [informative.id, informative.id, other.id, other.id]
    assert sorted(out["progress"][:2]) == [0.0, 1.0] and out["progress"][2:] == [0.0, 0.0]
    assert (out["dynamic_dropped_groups"], out["dynamic_extra_groups"], out["dynamic_zero_variance_kept"]) == (1, 1, 1)
    assert drawn == [{flat.id, other.id}]  # the draw was told which tasks the batch already has
    assert len(out["completion_ids"]) == len(out["env_mask"]) == len(out["logprobs"]) == 4

    # the reward function trains on the refilled batch and the engine observes every group, the dropped one too
    logged = {}
    rows = {k: v for k, v in out.items() if isinstance(v, list)}
    scalars = {k: [v] * 4 for k, v in out.items() if not isinstance(v, list)}
    rewards = reward(prompts=[flat.id, flat.id, other.id, other.id], completions=["", "", "", ""],
                     **rows, **scalars, log_metric=logged.__setitem__)
    assert rewards == out["progress"]
    for task in slices:
        assert engine.stats(task.id)["n_rewards"] == 2, task.id
    assert reward.observed_groups == 3 and logged["rods/dynamic_dropped_groups"] == 1
    assert sampler.totals == {"dropped": 1, "extra": 1, "kept_zero_variance": 1}
    engine.close()


@pytest.mark.slow
def test_the_dynamic_sampling_arm_resolves_beside_rods_and_runs_two_steps(tmp_path, tiny_model_dir):
    from rods.compare.arms import load_arms
    from rods.train.load import load_config
    from rods.train.run import train

    ablations = CONFIGS / "ablations"
    arms = load_arms([ablations / "static_pool.yaml", ablations / "dynamic_sampling.yaml",
                      CONFIGS / "paper_qwen3_4b.yaml"])
    assert [a.name for a in arms] == ["static_pool", "dynamic_sampling", "paper_qwen3_4b"]
    arm = arms[1].config
    assert arm.grpo.dynamic_sampling.enabled and not arm.synthesis.enabled and arm.engine.capacity == 0

    seeds_file = tmp_path / "seeds.jsonl"
    write_tasks(seeds_file, turn_slices(load_split("train"), max_calls=1)[:4])
    cpu = [f"model.name_or_path={tiny_model_dir}", f"data.seeds={seeds_file}", "data.task_mix=full",
           f"output_dir={tmp_path / 'run'}", "rollout.max_steps_per_turn=1", "rollout.max_reply_tokens=4",
           "rollout.max_completion_tokens=256", "rollout.tool_docs=signatures", "grpo.num_generations=2",
           "engine.K=2", "engine.min_observations=2", "engine.burn_in_rollouts=2", "grpo.tasks_per_step=2",
           "grpo.max_steps=2", "grpo.gradient_accumulation_steps=1", "grpo.gradient_checkpointing=false",
           "grpo.report_to=[none]", "grpo.dynamic_sampling.max_extra_groups=2"]
    config = load_config(ablations / "dynamic_sampling.yaml", cpu)
    summary = train(config)
    assert summary.steps == 2
    # a random tiny model scores every rollout alike: each step drops both groups, refills, keeps what is left
    counts = summary.dynamic_sampling
    assert counts["extra"] == 2 * 2 and counts["dropped"] >= 1
    assert summary.observed_groups == 2 * 2 + counts["dropped"]  # the engine saw the dropped groups too
