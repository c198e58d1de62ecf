"""A tiny random Llama with the embedded model's tokenizer (chat template and all), built once."""

from pathlib import Path

import pytest


def _embedded_tokenizer(gguf: Path, cache: Path):
    """SmolLM2's tokenizer; converting it from the GGUF takes ~10 s, so a converted copy is kept in `cache`."""
    from transformers import AutoTokenizer

    folder = cache / f"{gguf.stem}-{gguf.stat().st_size}"
    if (folder / "tokenizer_config.json").is_file():
        return AutoTokenizer.from_pretrained(folder)
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tokenizer.save_pretrained(folder)
    return tokenizer


def _tokenizer_cache(request, tmp_path_factory) -> Path:
    """pytest's project-local cache (`.pytest_cache/d/`), or this session's temp folder without it."""
    cache = getattr(request.config, "cache", None)
    if cache is not None:
        return Path(cache.mkdir("rods-test-tokenizers"))
    return tmp_path_factory.mktemp("test-tokenizers")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, request):
    """A saved 2-layer, 32-wide random LlamaForCausalLM + SmolLM2's tokenizer (from the GGUF)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from rods.llm.embedded import embedded_gguf_path

    tokenizer = _embedded_tokenizer(embedded_gguf_path(), _tokenizer_cache(request, tmp_path_factory))
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    path = tmp_path_factory.mktemp("tiny-llama")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir)


@pytest.fixture()
def tiny_model(tiny_model_dir):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(tiny_model_dir)
