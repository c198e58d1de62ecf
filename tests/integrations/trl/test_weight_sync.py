"""Keeping a vLLM server on the policy, against a scripted HTTP server (the process boundary).

The scripted server plays the parts of a real vLLM server that are hard to make
misbehave: a server started without runtime adapters (HTTP 404 on
``/v1/load_lora_adapter``), one that accepts every sync, and one that answers
with an older adapter than it was given. What these tests pin down: the refusal
and its message, stale servers allowed and warned about, the sync schedule
(``sync_every``, ``max_policy_lag``), and groups found older than the bound
generated again. The same paths against the real vLLM server:
tests/integrations/trl/test_policy_sync.py.
"""

import logging
import re
from types import SimpleNamespace

import pytest
from peft import LoraConfig, get_peft_model

from rods.envs.slices import turn_slices
from rods.integrations.trl.policy_server import PolicyServer
from rods.integrations.trl.rollout import MultiTurnRollout
from rods.integrations.trl.vllm_server import VLLMServerGenerator
from rods.integrations.trl.weight_sync import AdapterSync, ServerAdmin, SyncError, policy_weights
from rods.rollout.settings import RolloutSettings
from rods.tasks import load_split
from rods.train import ConfigError, config_from_dict


@pytest.fixture
def peft_model(tiny_model):
    return get_peft_model(tiny_model, LoraConfig(r=2, lora_alpha=4, target_modules=["q_proj", "v_proj"]))


def trainer_at(step, model):
    return SimpleNamespace(state=SimpleNamespace(global_step=step), model=model)


def accepting(server):
    """Routes of a vLLM server that loads and unloads every adapter it is given."""
    return server.on("/v1/load_lora_adapter", {"body": "Success"}).on("/v1/unload_lora_adapter", {"body": "ok"})


def loaded(server):
    return [body["lora_name"] for path, body in server.posts if path == "/v1/load_lora_adapter"]


def policy_server(url, folder, **kwargs):
    return PolicyServer(VLLMServerGenerator(url, "base"), AdapterSync(ServerAdmin(url), folder, "t"), **kwargs)


def test_a_server_without_runtime_adapters_stops_the_run(scripted_openai_server, peft_model, tmp_path):
    server = policy_server(scripted_openai_server.base_url, tmp_path)
    with pytest.raises(SyncError) as err:
        server.prepare(trainer_at(0, peft_model))
    message = str(err.value)
    assert "/v1/load_lora_adapter answered HTTP 404" in message
    assert "--enable-lora" in message and "VLLM_ALLOW_RUNTIME_LORA_UPDATING" in message
    assert "grpo.allow_stale_server: true" in message and "policy of step 0" in message


def test_an_allowed_stale_server_is_named_on_every_step(scripted_openai_server, peft_model, tmp_path, caplog):
    server = policy_server(scripted_openai_server.base_url, tmp_path, allow_stale=True)
    with caplog.at_level(logging.WARNING):
        server.prepare(trainer_at(0, peft_model))
        for step in (1, 2):
            server.prepare(trainer_at(step, peft_model))
    assert server.stale and server.generator.model == "base"
    lags = [int(m) for m in re.findall(r"(\d+) optimizer steps behind", caplog.text)]
    assert lags == [1, 2]


def test_sync_schedule_follows_sync_every_and_the_lag_bound(scripted_openai_server, peft_model, tmp_path):
    accepting(scripted_openai_server)
    server = policy_server(scripted_openai_server.base_url, tmp_path, sync_every=3, lag_bound=1)
    server.prepare(trainer_at(0, peft_model))
    for step in range(1, 6):
        server.after_step(peft_model, step)
        server.prepare(trainer_at(step, peft_model))  # already synced after the step: nothing more
    versions = [server.sync.version_of(name) for name in loaded(scripted_openai_server)]
    assert versions == [0, 2, 4]  # lag 2 > max_policy_lag 1 syncs before sync_every's 3
    unloaded = [body["lora_name"] for path, body in scripted_openai_server.posts if "unload" in path]
    assert unloaded == loaded(scripted_openai_server)[:-1]  # each older adapter is unloaded
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t-v4-3"]  # and its folder removed
    assert server.served_version == 4 and server.syncs == 3

    scripted_openai_server.posts.clear()
    plain = policy_server(scripted_openai_server.base_url, tmp_path / "b", sync_every=3, lag_bound=2)
    plain.prepare(trainer_at(0, peft_model))
    for step in range(1, 7):
        plain.after_step(peft_model, step)
    assert [plain.sync.version_of(n) for n in loaded(scripted_openai_server)] == [0, 3, 6]


def test_groups_from_older_weights_are_generated_again(scripted_openai_server, peft_model, tiny_tokenizer,
                                                       tmp_path):
    """One reply comes back from an older adapter than the one just loaded: its group is generated again."""
    accepting(scripted_openai_server)
    eos = tiny_tokenizer.eos_token_id
    calls = []

    def complete(body):
        calls.append(body["model"])
        served = body["model"]
        if len(calls) == 1:  # the first reply: an adapter of step 1, two steps older than the trainer's
            served = re.sub(r"-v\d+-(\d+)$", r"-v1-\1", served)
        return {"completion": {"token_ids": [eos], "logprobs": [-0.25]}, "model": served}

    scripted_openai_server.on("/v1/completions", complete)
    tasks = turn_slices(load_split("train"), max_calls=1)[:2]
    server = policy_server(scripted_openai_server.base_url, tmp_path, sync_every=1, lag_bound=0)
    rollout = MultiTurnRollout({t.id: t for t in tasks}.__getitem__, tiny_tokenizer,
                               RolloutSettings(max_steps_per_turn=1, max_reply_tokens=4, tool_docs="signatures"),
                               generator=server, group_size=2)
    out = rollout([t.id for t in tasks for _ in range(2)], trainer_at(3, peft_model))
    assert out["policy_version"] == [3, 3, 3, 3] and out["policy_lag"] == [0, 0, 0, 0]
    assert rollout.regenerated_groups == 1
    assert len(calls) == 4 + 2  # the stale reply's group (2 rollouts of one turn) was generated again
    assert [server.sync.version_of(n) for n in loaded(scripted_openai_server)] == [3, 3]  # a forced sync first
    assert out["logprobs"] == [[-0.25]] * 4 and out["task_id"] == [t.id for t in tasks for _ in range(2)]


def test_policy_weights_fold_the_adapter_in_and_send_a_tied_head(peft_model, tiny_model_dir):
    import torch
    from transformers import AutoModelForCausalLM

    with torch.no_grad():
        for name, p in peft_model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.1)
    weights = dict(policy_weights(peft_model))
    base = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    assert set(weights) == {n for n, _ in base.named_parameters()} | {"lm_head.weight"}  # tied: sent once more
    assert torch.equal(weights["lm_head.weight"], weights["model.embed_tokens.weight"])
    merged = peft_model.merge_and_unload()
    names = [n for n in weights if "q_proj" in n]
    assert names and all(torch.allclose(weights[n], merged.get_parameter(n)) for n in names)
    assert not all(torch.equal(weights[n], base.get_parameter(n)) for n in names)  # the adapter is folded in


@pytest.mark.parametrize(
    ("grpo", "message"),
    [
        ({"generation": "vllm_server", "vllm_base_url": "http://x/v1", "weight_sync": "off"},
         r"allow_stale_server: true to accept"),
        ({"generation": "vllm_server", "vllm_base_url": "http://x/v1", "weight_sync": "off",
          "allow_stale_server": True, "max_policy_lag": 1}, r"max_policy_lag cannot hold"),
        ({"generation": "trl_vllm", "vllm_mode": "server"}, r"vllm_mode server but grpo.vllm_base_url"),
        ({"generation": "trl_vllm", "sync_every": 2}, r"TRL syncs the weights itself"),
        ({"generation": "trl_vllm", "extra": {"vllm_enable_sleep_mode": True}}, r"vllm_enable_sleep_mode"),
    ],
)
def test_sync_settings_are_checked(grpo, message):
    with pytest.raises(ConfigError, match=message):
        config_from_dict({"grpo": grpo, "model": {"name_or_path": "some/folder"}, "synthesis": {"enabled": False}})


def test_trl_vllm_needs_a_model_folder_and_says_what_is_missing_on_cpu(tmp_path, tiny_model_dir):
    with pytest.raises(ConfigError, match=r"reads no GGUF"):
        config_from_dict({"grpo": {"generation": "trl_vllm"}, "synthesis": {"enabled": False}})
    from rods.integrations.trl.trl_vllm import check_available

    with pytest.raises(RuntimeError, match=r"no CUDA device.*use grpo.generation: vllm_server"):
        check_available()
    config = config_from_dict({"grpo": {"generation": "trl_vllm", "vllm_mode": "server",
                                        "vllm_base_url": "http://10.0.0.2:8000/v1"},
                               "model": {"name_or_path": str(tiny_model_dir)}, "synthesis": {"enabled": False}})
    from rods.train.trainer import grpo_config

    args = grpo_config(config, tmp_path)  # what TRL gets: its own vLLM, in server mode, at the server's root
    assert (args.use_vllm, args.vllm_mode, args.vllm_server_base_url) == (True, "server", "http://10.0.0.2:8000")
