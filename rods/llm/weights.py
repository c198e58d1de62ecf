"""Loading a causal LM and its tokenizer: a model folder, a GGUF file, or the embedded SmolLM2.

The one loader of rods: the local LLM backend, `rods eval` and the trainer all
load weights here. GGUF weights are dequantized (transformers' `GgufConfig`),
so training and generation see ordinary float tensors. Heavy imports (torch,
transformers) stay inside the function.
"""

from __future__ import annotations

import copy
import logging
import shutil
import time
from pathlib import Path
from typing import Any

from rods.llm.embedded import embedded_gguf_path

logger = logging.getLogger(__name__)

#: The model name that means "the embedded SmolLM2-135M-Instruct GGUF".
EMBEDDED = "embedded"


def weights_location(name_or_path: str | Path, gguf_file: str | None = None) -> tuple[str, str | None]:
    """(folder or hub id, GGUF file name or None) for 'embedded', a ``.gguf`` path, or a model folder.

    Raises:
        FileNotFoundError: a ``.gguf`` path that is not a file, or a missing embedded model.
    """
    if str(name_or_path) == EMBEDDED:
        path = embedded_gguf_path()
        return str(path.parent), path.name
    path = Path(name_or_path)
    if gguf_file is None and path.suffix == ".gguf":
        if not path.is_file():
            raise FileNotFoundError(f"GGUF file {path} does not exist")
        return str(path.parent), path.name
    return str(name_or_path), gguf_file


def load_causal_lm(name_or_path: str | Path, gguf_file: str | None = None, *,
                   dtype: str = "float32") -> tuple[Any, Any]:
    """``(model, tokenizer)`` with a pad token set (the end-of-sequence token when the tokenizer has none).

    A LoRA adapter folder (a LoRA run's checkpoint) loads its base and folds the adapter in
    (`rods.llm.adapters`).

    Args:
        name_or_path: 'embedded', a ``.gguf`` file, a model folder, an adapter folder (or a cached hub id).
        gguf_file: the GGUF file inside the folder `name_or_path`, if the weights are GGUF.
        dtype: torch dtype name of the weights (``float32``, ``bfloat16``, ``float16``).
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rods.llm.adapters import is_adapter_dir, load_adapter_model

    if gguf_file is None and is_adapter_dir(name_or_path):
        return load_adapter_model(name_or_path, dtype=dtype, merge=True)
    source, gguf = weights_location(name_or_path, gguf_file)
    start = time.perf_counter()
    kwargs: dict[str, Any] = {}
    if gguf:
        from transformers import GgufConfig

        kwargs = {"gguf_file": gguf}
    tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
    if gguf:
        kwargs["quantization_config"] = GgufConfig(dequantize=True)
    model = AutoModelForCausalLM.from_pretrained(source, dtype=getattr(torch, dtype), **kwargs)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    logger.info("loaded %s%s in %.1fs", source, f" ({gguf})" if gguf else "", time.perf_counter() - start)
    return model, tokenizer


def float_config(config: Any) -> Any:
    """A copy of a model config without its quantization config.

    A GGUF model loaded with `dequantize=True` is a float model that still carries
    the GGUF quantization config; saved with it, its folder would look quantized.
    """
    config = copy.deepcopy(config)
    config.quantization_config = None
    config.__dict__.pop("quantization_config", None)
    return config


def export_float_copy(dest: str | Path, name_or_path: str | Path = EMBEDDED) -> Path:
    """Save a float32 safetensors copy of a (GGUF) model and its tokenizer in `dest`; return `dest`.

    Servers that cannot read GGUF (vLLM) serve this folder. The dequantized model
    still carries its GGUF quantization config, which would make the folder
    look quantized: it is dropped before saving. Skipped when `dest` already
    holds a copy (the folder appears whole, by a rename, once saved).
    """
    dest = Path(dest)
    if (dest / "config.json").is_file():
        return dest
    model, tokenizer = load_causal_lm(name_or_path)
    model.config = float_config(model.config)
    model.hf_quantizer = None
    partial = dest.with_name(dest.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    tokenizer.save_pretrained(partial)
    model.save_pretrained(partial)
    partial.rename(dest)  # a folder is there whole or not at all
    logger.info("saved a float copy of %s in %s", name_or_path, dest)
    return dest
