"""A real vLLM server (CPU, the suite's one server) kept on the trainer's policy through GRPO steps.

The policy is the embedded SmolLM2-135M (the float copy the server serves) with a
LoRA adapter. GRPO needs rewards that differ within a group to move it; the
progress reward of an untrained 135M model is the same for every rollout, so a
parity reward on the sampled tokens is added (`build_trainer(extra_rewards=...)`).
After k steps with the adapter synced, the server's log-probabilities of a fixed
completion equal the trainer's and differ from the initial policy's; with a server
that cannot load the adapter (rank above its --max-lora-rank) the run stops, or,
when stale weights are allowed, the server stays at the initial policy while the
trainer moves. Full weights (no LoRA) reach the server by an in-place reload from
disk, vLLM's runtime path for them on CPU (the server's base weights are restored
after). Every rollout's policy version and lag reach the trainer's log.
"""

import json
import logging
import urllib.request

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from rods.envs.slices import turn_slices
from rods.integrations.trl.vllm_server import policy_logprobs, prompt_logprobs
from rods.integrations.trl.weight_sync import SyncError, make_sync
from rods.tasks import load_split
from rods.train import config_from_dict
from rods.train.trainer import build_trainer

from servers.vllm import MAX_LORA_RANK, VLLM_MODEL_NAME, vllm_model_dir

pytestmark = pytest.mark.slow

STEPS = 2
#: The policy must move further than the sync may be off by.
TOLERANCE = 0.05


def parity_reward(prompts, completions, completion_ids, **_):
    """1 for every other completion of the batch: meaningless, but it differs within every group, so each step
    moves the policy (a reward on the token ids' parity was the same for a whole batch about once in 64 runs,
    and the step then changed nothing)."""
    return [float(i % 2 == 0) for i in range(len(completion_ids))]


@pytest.fixture(scope="module")
def tasks():
    slices = turn_slices(load_split("train"), max_calls=1)
    return [t for t in slices if t.involved_classes == ["GorillaFileSystem"]][:4]


@pytest.fixture(scope="module")
def probe():
    """A fixed prompt and completion: (ids, number of prompt tokens)."""
    tokenizer = AutoTokenizer.from_pretrained(vllm_model_dir())
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "List the files in my home folder."}],
                                           tokenize=False, add_generation_prompt=True)
    ids = tokenizer(prompt, add_special_tokens=False).input_ids
    completion = tokenizer('<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>',
                           add_special_tokens=False).input_ids
    return ids + completion, len(ids)


def server_logprobs(base_url, model, probe):
    ids, n = probe
    return torch.tensor(prompt_logprobs(base_url, model, ids, n))


def model_logprobs(model, probe):
    ids, n = probe
    return torch.tensor(policy_logprobs(model, ids, n))


def run_grpo(vllm_server, tasks, tmp_path, *, lora, steps=STEPS, **grpo):
    k = grpo.get("num_generations", 4)
    grpo.setdefault("tasks_per_step", 1)
    config = config_from_dict({
        "output_dir": str(tmp_path),
        "model": {"name_or_path": str(vllm_model_dir()), "lora": lora},
        "rollout": {"max_steps_per_turn": 1, "max_reply_tokens": 8, "max_completion_tokens": 64,
                    "temperature": 1.0, "tool_docs": "signatures"},
        "grpo": {"num_generations": k, "max_steps": steps, "save_steps": 1000,
                 "learning_rate": 1e-2, "generation": "vllm_server", "vllm_base_url": vllm_server,
                 "vllm_model": VLLM_MODEL_NAME, **{key: v for key, v in grpo.items() if key != "num_generations"}},
        "engine": {"K": k, "min_observations": k, "burn_in_rollouts": k},
        "synthesis": {"enabled": False},
    })
    model = AutoModelForCausalLM.from_pretrained(vllm_model_dir(), dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(vllm_model_dir())
    by_id = {t.id: t for t in tasks}
    trainer = build_trainer(config, model, tokenizer, output_dir=tmp_path / "ckpt", lookup=by_id.__getitem__,
                            pool_source=lambda: list(tasks), extra_rewards=[parity_reward])
    trainer.train()
    return trainer


def logged(trainer, key):
    return [row[key] for row in trainer.state.log_history if key in row]


@pytest.fixture(scope="module")
def initial(vllm_server, probe):
    """The initial policy's log-probabilities of the probe, as the server computes them with its base weights."""
    return server_logprobs(vllm_server, VLLM_MODEL_NAME, probe)


LORA = {"enabled": True, "rank": 8, "alpha": 32, "target_modules": "all-linear"}


def test_lora_sync_keeps_the_server_on_the_trainers_policy(vllm_server, tasks, probe, initial, tmp_path):
    trainer = run_grpo(vllm_server, tasks, tmp_path, lora=LORA)
    server = trainer.rods_generator
    assert trainer.state.global_step == STEPS and server.served_version == STEPS and not server.stale
    assert server.syncs == STEPS + 1  # the initial adapter, then one after every optimizer step
    ours = model_logprobs(trainer.model, probe)
    theirs = server_logprobs(vllm_server, server.generator.model, probe)  # the adapter the server now serves
    assert (ours - theirs).abs().mean() < TOLERANCE, (ours - theirs).abs().mean()
    moved = (ours - initial).abs().mean()
    print(f"LoRA sync after {STEPS} steps: |trainer - server| {(ours - theirs).abs().mean():.2e}, "
          f"|trainer - initial| {moved:.3f} (mean over {len(ours)} tokens)")
    assert moved > TOLERANCE, f"the policy moved only {moved:.4f}: the test could not tell a stale server"
    assert logged(trainer, "rods/policy_lag") == [0.0] * STEPS  # every rollout came from the current policy


def test_a_server_that_cannot_load_the_adapter_stops_the_run_or_stays_stale(vllm_server, tasks, probe, initial,
                                                                           tmp_path, caplog):
    too_big = {**LORA, "rank": 2 * MAX_LORA_RANK}
    with pytest.raises(SyncError, match=r"load_lora_adapter answered HTTP .*max.lora.rank.*allow_stale_server"):
        run_grpo(vllm_server, tasks, tmp_path / "refused", lora=too_big)

    with caplog.at_level(logging.WARNING, logger="rods.integrations.trl.policy_server"):
        trainer = run_grpo(vllm_server, tasks, tmp_path / "stale", lora=too_big, allow_stale_server=True)
    server = trainer.rods_generator
    assert server.stale and server.syncs == 0 and server.generator.model == VLLM_MODEL_NAME
    theirs = server_logprobs(vllm_server, server.generator.model, probe)
    assert (theirs - initial).abs().mean() < 1e-3  # the server still serves the initial policy
    assert (model_logprobs(trainer.model, probe) - initial).abs().mean() > TOLERANCE  # the trainer moved on
    assert logged(trainer, "rods/policy_lag") == [0.0, 1.0]  # and the rollouts' lag says so
    assert caplog.text.count("is not synced (grpo.allow_stale_server)") == STEPS - 1


def test_max_policy_lag_syncs_before_a_rollout_would_exceed_it(vllm_server, tasks, tmp_path):
    trainer = run_grpo(vllm_server, tasks[:2], tmp_path, lora=LORA, steps=3, sync_every=3, max_policy_lag=1,
                       num_generations=2, learning_rate=1e-4)
    server = trainer.rods_generator
    assert logged(trainer, "rods/policy_lag") == [0.0, 1.0, 0.0]
    assert server.syncs == 2 and server.served_version == 2  # at the start, and after step 2 (lag 2 > 1)


def test_full_weights_reach_the_server_by_reload_from_disk(vllm_server, tasks, probe, initial, tmp_path):
    try:
        trainer = run_grpo(vllm_server, tasks[:2], tmp_path, lora={"enabled": False}, steps=1, learning_rate=1e-4)
        server = trainer.rods_generator
        assert server.sync.kind == "disk" and server.served_version == 1 and server.syncs == 2
        ours = model_logprobs(trainer.model, probe)
        theirs = server_logprobs(vllm_server, VLLM_MODEL_NAME, probe)
        assert (ours - theirs).abs().mean() < TOLERANCE
        assert (ours - initial).abs().mean() > TOLERANCE
        with urllib.request.urlopen(vllm_server.removesuffix("/v1") + "/weight_info", timeout=30) as reply:
            assert json.load(reply)["weight_version"] == "1"
    finally:  # the suite's server goes back to the weights it started with
        base = AutoModelForCausalLM.from_pretrained(vllm_model_dir(), dtype=torch.float32)
        make_sync("disk", vllm_server, VLLM_MODEL_NAME, tmp_path / "restore").push(base, 0)
    assert (server_logprobs(vllm_server, VLLM_MODEL_NAME, probe) - initial).abs().mean() < 1e-3
