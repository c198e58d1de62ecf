"""LoRA (`model.lora`): the warm start and GRPO train only the adapter; checkpoints, resume, eval and export.

A tiny random Llama stands in for the policy (the property is the same for any size):
the optimizer holds exactly the adapter's parameters (counted from the config), the
base weights are bit-identical after training, the warm start moved the adapter, a
checkpoint holds the adapter and names its base, a run resumes from it, and `rods eval`
and `rods export --merge` load it as the same function.
"""

import json

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback

from rods.cli import main
from rods.envs.slices import turn_slices
from rods.llm.adapters import adapter_base, is_adapter_dir
from rods.llm.weights import load_causal_lm
from rods.tasks import load_split, write_tasks
from rods.train import ConfigError, config_from_dict
from rods.train.run import train

RANK = 4
TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


class OptimizerProbe(TrainerCallback):
    """Counts what the optimizer updates, and which parameters ever had a gradient."""

    def __init__(self):
        self.optimized = 0
        self.with_grad: set[str] = set()

    def on_train_begin(self, args, state, control, optimizer=None, **kwargs):
        self.optimized = sum(p.numel() for group in optimizer.param_groups for p in group["params"])

    def on_pre_optimizer_step(self, args, state, control, model=None, **kwargs):
        self.with_grad |= {name for name, p in model.named_parameters() if p.grad is not None}


def expected_lora_parameters(model) -> int:
    """r * (in + out) for every targeted linear layer."""
    return sum(RANK * (m.in_features + m.out_features) for name, m in model.named_modules()
               if isinstance(m, torch.nn.Linear) and name.rsplit(".", 1)[-1] in TARGETS)


def test_lora_settings_are_checked():
    with pytest.raises(ConfigError, match=r"weight_sync: adapter .* model.lora.enabled is false"):
        config_from_dict({"grpo": {"generation": "vllm_server", "vllm_base_url": "http://x/v1",
                                   "weight_sync": "adapter"}, "synthesis": {"enabled": False}})
    with pytest.raises(ConfigError, match=r"model.lora.rank"):
        config_from_dict({"model": {"lora": {"enabled": True, "rank": 0}}, "synthesis": {"enabled": False}})


@pytest.mark.slow
def test_lora_trains_only_the_adapter_then_checkpoint_resume_eval_export(tmp_path, tiny_model_dir):
    seeds = turn_slices(load_split("train"), max_calls=1)[:4]
    seeds_file = tmp_path / "seeds.jsonl"
    write_tasks(seeds_file, seeds)
    run_dir = tmp_path / "run"
    config = config_from_dict({
        "name": "lora",
        "output_dir": str(run_dir),
        "model": {"name_or_path": str(tiny_model_dir),
                  "lora": {"enabled": True, "rank": RANK, "alpha": 8, "target_modules": list(TARGETS)}},
        "data": {"seeds": str(seeds_file)},
        "rollout": {"max_steps_per_turn": 1, "max_reply_tokens": 4, "max_completion_tokens": 256,
                    "tool_docs": "signatures"},
        "grpo": {"num_generations": 2, "tasks_per_step": 2, "steps_per_epoch": 2, "max_steps": 2, "save_steps": 1,
                 "save_total_limit": None, "learning_rate": 1e-2},
        "warm_start": {"enabled": True, "max_steps": 2, "batch_size": 2, "max_examples": 4, "eval_tasks": 1,
                       "learning_rate": 1e-2, "max_length": 1024},
        "engine": {"K": 2, "min_observations": 2, "burn_in_rollouts": 2, "capacity": 0},
        "synthesis": {"enabled": False},
    })
    model = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    base = {name: p.detach().clone() for name, p in model.named_parameters()}
    lora_count = expected_lora_parameters(model)
    probe = OptimizerProbe()

    summary = train(config, model=model, tokenizer=tokenizer, callbacks=[probe])

    assert summary.steps == 2 and summary.warm_start["examples"] >= 1
    # only the adapter trains: the optimizer holds it alone, no base weight ever had a gradient or moved
    assert summary.trainable_parameters == probe.optimized == lora_count
    assert summary.total_parameters == lora_count + sum(p.numel() for p in base.values())
    assert probe.with_grad and all("lora_" in name for name in probe.with_grad)
    peft_model = model  # wrapped in place by the warm start
    moved = 0
    for name, p in peft_model.named_parameters():
        if "lora_" in name:
            moved += int("lora_B" in name and bool(p.detach().abs().sum() > 0))
            continue
        clean = name.removeprefix("base_model.model.").replace(".base_layer", "")
        assert torch.equal(p.detach(), base[clean]), clean
    assert moved > 0, "the warm start moved the adapter (lora_B starts at zero)"

    # a checkpoint is the adapter (no full weights) and names its base
    last = run_dir / "checkpoints" / "checkpoint-2"
    assert is_adapter_dir(last) and not (last / "model.safetensors").exists()
    assert adapter_base(last) == str(tiny_model_dir)
    assert (last / "engine" / "engine.sqlite").is_file()

    fresh = AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    resumed = train(config, resume=run_dir / "checkpoints" / "checkpoint-1", model=fresh, tokenizer=tokenizer)
    assert resumed.steps == 2 and resumed.resumed_from.endswith("checkpoint-1")
    assert resumed.trainable_parameters == lora_count
    # the resumed adapter is the checkpoint's (warm-started), not a fresh one (lora_B would be zero)
    assert any("lora_B" in name and p.abs().sum() > 0 for name, p in fresh.named_parameters())

    # `rods eval --model CHECKPOINT` scores the adapter (its base found from the checkpoint)
    out = tmp_path / "eval"
    code = main(["eval", "--model", str(last), "--tasks", str(seeds_file), "--max-new-tokens", "4",
                 "--tool-docs", "signatures", "--no-official-check", "--out", str(out)])
    assert code == 0 and json.loads((out / "report.json").read_text())["n_tasks"] == len(seeds)

    # the merged load, the unmerged adapter and `rods export --merge` are one function
    from peft import PeftModel

    ids = torch.tensor([tokenizer("cd(folder='tmp') then ls").input_ids])
    merged, _ = load_causal_lm(last)
    adapter = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_model_dir), str(last)).eval()
    exported = tmp_path / "exported"
    assert main(["export", str(last), "--out", str(exported), "--merge"]) == 0
    plain = AutoModelForCausalLM.from_pretrained(exported).eval()
    assert not is_adapter_dir(exported) and not (exported / "optimizer.pt").exists()
    with torch.no_grad():
        want = adapter(ids).logits
        assert torch.allclose(merged.eval()(ids).logits, want, atol=1e-4)
        assert torch.allclose(plain(ids).logits, want, atol=1e-4)
        assert not torch.allclose(AutoModelForCausalLM.from_pretrained(tiny_model_dir)(ids).logits, want,
                                  atol=1e-4), "the adapter changes the function"
    # without --merge: the adapter alone, without the training state
    bare = tmp_path / "bare"
    assert main(["export", str(last), "--out", str(bare)]) == 0
    assert is_adapter_dir(bare) and not (bare / "optimizer.pt").exists() and not (bare / "engine").exists()
