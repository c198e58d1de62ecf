"""SFT warm-start examples: gold first turns rendered exactly as the rollout prompts them."""

import json

import pytest

from rods.envs.slices import turn_slices
from rods.integrations.trl.rollout import MultiTurnRollout
from rods.integrations.trl.warm_start import hermes_calls, sft_examples
from rods.rollout import parse_tool_calls
from rods.rollout.settings import RolloutSettings
from rods.tasks import load_split


def test_hermes_calls_round_trip_through_the_parser():
    text = hermes_calls(["cd(folder='document')", "mkdir(dir_name='temp')"])
    calls = parse_tool_calls(text).calls
    assert [(c.name, c.arguments) for c in calls] == [("cd", {"folder": "document"}), ("mkdir", {"dir_name": "temp"})]
    assert json.loads(text.split("\n")[1])["name"] == "cd"
    assert hermes_calls(["sort('final_report.pdf')"]) is None  # positional: no faithful JSON form
    assert hermes_calls(["not a call("]) is None


def test_sft_examples_match_rollout_prompts(tiny_tokenizer):
    tasks = turn_slices(load_split("train"), max_calls=2)[:6]
    rollout = MultiTurnRollout({t.id: t for t in tasks}.__getitem__, tiny_tokenizer,
                               RolloutSettings(tool_docs="signatures"))
    examples = sft_examples(tasks, rollout)
    assert len(examples) >= 4
    episode = rollout.new_episode(tasks[0])
    assert examples[0]["prompt"] == rollout._render(episode.messages, episode.tools, generation_prompt=True)
    assert examples[0]["prompt"].endswith("<|im_start|>assistant\n")
    assert "<tool_call>" in examples[0]["completion"]


def _weights(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


@pytest.mark.slow  # trains twice: `make test` runs it
def test_cached_warm_start_is_the_policy_the_run_would_train(tiny_model_dir, tiny_model, tmp_path):
    """A second run with the same key loads the first's warm-started weights; another seed trains its own."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rods.envs.seeds import load_seeds
    from rods.train.config import TrainConfig
    from rods.train.warm_start import cache_key, warm_start

    def config(seed):
        return TrainConfig(
            model={"name_or_path": str(tiny_model_dir)},
            data={"seeds": "bfcl:train", "task_mix": "turn_slices", "max_slice_calls": 1, "max_slices": 4},
            rollout={"tool_docs": "signatures", "max_reply_tokens": 8},
            grpo={"seed": seed},
            synthesis={"enabled": False},
            warm_start={"enabled": True, "max_steps": 1, "batch_size": 2, "max_examples": 4, "eval_tasks": 1,
                        "max_length": 512, "learning_rate": 1e-2, "cache_dir": str(tmp_path / "cache")},
        )

    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    first = config(0)
    seeds = load_seeds(first.data)
    untrained = _weights(tiny_model)
    report = warm_start(first, tiny_model, tokenizer, seeds, tmp_path / "run-a")
    trained = _weights(tiny_model)
    assert "cached_from" not in report
    assert any(not torch_equal(trained[k], untrained[k]) for k in trained)  # the SFT step moved the weights
    entry = tmp_path / "cache" / cache_key(first, seeds)
    assert (entry / "model.safetensors").is_file()
    # the entry is a model folder too: what `rods eval --model <entry>` loads is the warm-started policy
    from rods.llm.weights import load_causal_lm

    folder_model, folder_tokenizer = load_causal_lm(str(entry))
    assert all(torch_equal(v, trained[k]) for k, v in _weights(folder_model).items())
    assert folder_tokenizer.chat_template == tokenizer.chat_template

    fresh = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    again = warm_start(config(0), fresh, tokenizer, seeds, tmp_path / "run-b")
    assert again["cached_from"] == str(entry)
    assert again["after"] == report["after"]
    assert all(torch_equal(v, trained[k]) for k, v in _weights(fresh).items())
    assert json.loads((tmp_path / "run-b" / "warm_start.json").read_text())["cached_from"] == str(entry)

    other = config(1)
    assert cache_key(other, seeds) != cache_key(first, seeds)
    third = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    assert "cached_from" not in warm_start(other, third, tokenizer, seeds, tmp_path / "run-c")
    assert len([p for p in (tmp_path / "cache").iterdir() if p.is_dir()]) == 2


def torch_equal(a, b) -> bool:
    import torch

    return bool(torch.equal(a, b))


def test_warm_start_measures_seeds_spread_over_the_list():
    from rods.train.warm_start import spread

    tasks = turn_slices(load_split("train")[:30], max_calls=1)
    picked = spread(tasks, 6)
    assert len(picked) == 6 and picked[0] is tasks[0]
    assert len({t.id.split("@")[1] for t in picked}) > 1  # not only first turns
    assert [tasks.index(t) for t in picked] == sorted(tasks.index(t) for t in picked)
    assert spread(tasks[:3], 6) == tasks[:3]
