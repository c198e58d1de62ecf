"""Guards on what rods takes from TRL beyond its public API (docs/design.md §6.3).

The pins in pyproject.toml are the releases installed and tested; the CPU LM-head
patch is proven active by counting the LM head's floating-point work; a missing
patch target or an untested TRL warns once; no library code sets environment
variables; GRPO's group size and the engine's K are checked against each other.
"""

from __future__ import annotations

import ast
import logging
import os
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

pytest.importorskip("trl")

from packaging.requirements import Requirement  # noqa: E402

from rods.integrations.trl import compat  # noqa: E402
from rods.train import ConfigError, config_from_dict  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


def _extra(name: str) -> dict[str, Requirement]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    reqs = [Requirement(r) for r in pyproject["project"]["optional-dependencies"][name]]
    return {r.name: r for r in reqs}


def test_trl_and_verl_are_pinned_to_the_tested_releases():
    trl = _extra("train")["trl"]
    assert str(trl.specifier) == str(Requirement(f"trl{compat.TESTED_TRL}").specifier)
    assert version("trl") in trl.specifier, "the installed TRL is the one the pin names"
    assert not trl.specifier.contains("1.17.0") and not trl.specifier.contains("1.15.0")
    verl = _extra("verl")["verl"]
    assert str(verl.specifier) == "==0.9.1"
    try:
        installed = version("verl")
    except Exception:  # verl is installed only by scripts/install_verl_cpu.sh
        return
    assert installed in verl.specifier


@pytest.fixture
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(compat, "_warned", set())


def test_an_untested_trl_release_warns_once(monkeypatch, caplog, fresh_warnings):
    assert compat.check_trl_version() is True
    monkeypatch.setattr(compat, "trl_version", lambda: "1.17.2")
    with caplog.at_level(logging.WARNING, logger=compat.__name__):
        assert compat.check_trl_version() is False
        assert compat.check_trl_version() is False
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 1 and "TRL 1.17.2" in messages[0] and compat.TESTED_TRL in messages[0]


def _head_flops_and_logprobs(model, input_ids, labels):
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        out = model(input_ids=input_ids, labels=labels, fused_lm_head=True)
    return counter.get_total_flops(), out.log_probs


def test_cpu_lm_head_patch_scores_only_completion_positions(monkeypatch):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl.trainer import utils as trl_utils

    assert compat.score_only_completions_on_cpu() is True
    assert compat.cpu_patch_active() and compat.score_only_completions_on_cpu() is True  # idempotent
    patched = trl_utils._use_triton
    assert patched(torch.device("cpu")) is True
    assert patched(torch.device("meta")) is patched.__wrapped__(torch.device("meta"))  # other devices: TRL decides

    torch.manual_seed(0)
    hidden, vocab, length, labelled = 16, 4096, 64, 4
    config = LlamaConfig(vocab_size=vocab, hidden_size=hidden, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1, tie_word_embeddings=False)
    model = LlamaForCausalLM(config).eval()
    trl_utils.add_fused_lm_head(model)
    input_ids = torch.randint(0, vocab, (1, length))
    labels = torch.full((1, length), -100)
    labels[0, -labelled:] = input_ids[0, -labelled:]  # a long prompt, a short completion

    compact_flops, compact = _head_flops_and_logprobs(model, input_ids, labels)
    monkeypatch.setattr(trl_utils, "_use_triton", patched.__wrapped__)  # TRL's own choice on CPU: every position
    full_flops, full = _head_flops_and_logprobs(model, input_ids, labels)
    # The head (2*hidden*vocab per position) now runs on the labelled positions only, not on all length-1.
    assert full_flops - compact_flops == (length - 1 - labelled) * 2 * hidden * vocab
    torch.testing.assert_close(compact, full)  # the same log-probabilities


def test_a_missing_patch_target_warns_once_and_changes_nothing(monkeypatch, caplog, fresh_warnings):
    from trl.trainer import utils as trl_utils

    monkeypatch.delattr(trl_utils, "_use_triton")  # as a TRL release without it would be
    with caplog.at_level(logging.WARNING, logger=compat.__name__):
        assert compat.score_only_completions_on_cpu() is False
        assert compat.score_only_completions_on_cpu() is False
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 1 and compat.PATCH_TARGET in messages[0] and "not applied" in messages[0]
    assert not hasattr(trl_utils, "_use_triton") and not compat.cpu_patch_active()


def _environment_writes(path: Path) -> list[str]:
    """Lines of `path` that assign, update or delete environment variables."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        target = None
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            target = next((t for t in targets if isinstance(t, ast.Subscript) and "environ" in ast.unparse(t.value)),
                          None)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = ast.unparse(node.func.value)
            if ("environ" in owner and node.func.attr in {"setdefault", "update", "pop", "clear", "__setitem__"}) or (
                owner == "os" and node.func.attr in {"putenv", "unsetenv"}
            ):
                target = node
        if target is not None:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_library_code_sets_no_environment_variables():
    offenders = [hit for path in sorted((ROOT / "rods").rglob("*.py")) for hit in _environment_writes(path)]
    assert offenders == []
    probe = ROOT / "tests" / "integrations" / "trl" / "_probe_env.py"
    probe.write_text("import os\nos.environ.setdefault('X', '1')\nos.environ['Y'] = '2'\n")
    try:  # the scan itself finds such writes
        assert len(_environment_writes(probe)) == 2
    finally:
        probe.unlink()


def test_config_names_both_keys_when_k_and_num_generations_differ():
    with pytest.raises(ConfigError, match=r"grpo.num_generations = 8 but engine.K = 16"):
        config_from_dict({"grpo": {"num_generations": 8, "tasks_per_step": 1}, "synthesis": {"enabled": False}})
    assert config_from_dict({"grpo": {"num_generations": 8, "tasks_per_step": 1}, "engine": {"K": 8,
                             "min_observations": 8, "burn_in_rollouts": 8}, "synthesis": {"enabled": False}})


def test_build_trainer_checks_k_applies_the_patch_and_leaves_the_environment(tmp_path, tiny_model, tiny_tokenizer,
                                                                             train_tasks):
    from rods.engine import DataEngine, EngineConfig
    from rods.train.trainer import build_trainer

    settings = {"grpo": {"num_generations": 2, "tasks_per_step": 2, "max_steps": 1}, "synthesis": {"enabled": False},
                "engine": {"K": 2, "min_observations": 2, "burn_in_rollouts": 2}}
    config = config_from_dict(settings)
    engine = DataEngine(EngineConfig(K=2, min_observations=2, burn_in_rollouts=2), train_tasks[:2])
    before = dict(os.environ)
    trainer = build_trainer(config, tiny_model, tiny_tokenizer, output_dir=tmp_path, lookup=engine.task,
                            pool_source=engine.active_tasks, engine=engine)
    assert dict(os.environ) == before and trainer.args.num_generations == 2
    assert compat.cpu_patch_active()
    # GRPOConfig fields can also come through grpo.extra: what TRL would run with is what is checked.
    sneaky = config_from_dict({**settings, "grpo": {**settings["grpo"], "extra": {"num_generations": 4}}})
    with pytest.raises(ValueError, match=r"grpo.num_generations = 4 but engine.K = 2"):
        build_trainer(sneaky, tiny_model, tiny_tokenizer, output_dir=tmp_path, lookup=engine.task,
                      pool_source=engine.active_tasks, engine=engine)
