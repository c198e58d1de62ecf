"""The first load of a GGUF file keeps a float copy; later loads read it and get the same model (slow: two loads)."""

from pathlib import Path

import pytest
import torch

from rods.llm.weights import EMBEDDED, float_copy_dir, load_causal_lm, weights_location

pytestmark = pytest.mark.slow


def test_a_gguf_loads_once_then_from_its_float_copy_and_the_two_are_the_same_model(tmp_path, monkeypatch):
    monkeypatch.setenv("RODS_CACHE_DIR", str(tmp_path))
    folder, name = weights_location(EMBEDDED)
    copy_dir = float_copy_dir(Path(folder, name))
    assert copy_dir is not None and copy_dir.parent == tmp_path / "float_weights"

    first, first_tok = load_causal_lm(EMBEDDED)  # dequantizes the GGUF and keeps the copy
    assert (copy_dir / "config.json").is_file() and (copy_dir / "model.safetensors").is_file()
    assert [p.name for p in copy_dir.parent.iterdir()] == [copy_dir.name]  # no partial folder left
    second, second_tok = load_causal_lm(EMBEDDED)  # reads the copy

    assert getattr(second.config, "quantization_config", None) is None
    assert getattr(first.config, "quantization_config", None) is None  # the same float model, either way
    a, b = first.state_dict(), second.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    messages = [{"role": "user", "content": "List the files in my home folder."}]
    text = first_tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert text == second_tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert first_tok(text).input_ids == second_tok(text).input_ids
    assert (first_tok.pad_token, first_tok.eos_token) == (second_tok.pad_token, second_tok.eos_token)
    assert first.generation_config.to_dict() == second.generation_config.to_dict()
    ids = torch.tensor([first_tok(text).input_ids])
    with torch.no_grad():
        assert torch.equal(first(ids).logits, second(ids).logits)


def test_a_new_or_changed_gguf_file_gets_its_own_copy(tmp_path, monkeypatch):
    monkeypatch.setenv("RODS_CACHE_DIR", str(tmp_path / "cache"))
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF v1")
    before = float_copy_dir(gguf)
    gguf.write_bytes(b"GGUF v2, longer")
    assert float_copy_dir(gguf) != before
    assert float_copy_dir(tmp_path / "missing.gguf") is None
