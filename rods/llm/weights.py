"""Loading a causal LM and its tokenizer: a model folder, a GGUF file, or the embedded SmolLM2.

The one loader of rods: the local LLM backend, `rods eval` and the trainer all
load weights here. GGUF weights are dequantized (transformers' `GgufConfig`),
so training and generation see ordinary float tensors. Dequantizing is slow (the
embedded 135M model: about 15 s on two cores, against under 1 s for safetensors),
so the first load of a GGUF file keeps a float safetensors copy in the cache
(`rods.cache`, `float_weights/`), keyed by the file's path, size and modification
time and transformers' version; later loads read the copy. Heavy imports (torch,
transformers) stay inside the functions.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from rods.cache import cache_dir
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
    copy_dir = float_copy_dir(Path(source) / gguf) if gguf else None
    if copy_dir is not None and (copy_dir / "config.json").is_file():
        source, gguf = str(copy_dir), None  # dequantized by an earlier load
    start = time.perf_counter()
    kwargs: dict[str, Any] = {}
    if gguf:
        from transformers import GgufConfig

        kwargs = {"gguf_file": gguf}
    tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
    if gguf:
        kwargs["quantization_config"] = GgufConfig(dequantize=True)
    model = AutoModelForCausalLM.from_pretrained(source, dtype=getattr(torch, dtype), **kwargs)
    logger.info("loaded %s%s in %.1fs", source, f" ({gguf})" if gguf else "", time.perf_counter() - start)
    if gguf:
        dequantized(model)
        if copy_dir is not None and dtype == "float32":
            try:
                save_float_copy(model, tokenizer, copy_dir)
            except OSError as err:  # a read-only or full cache costs time on the next load, nothing else
                logger.warning("could not keep a float copy of %s in %s: %s", gguf, copy_dir, err)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def dequantized(model: Any) -> Any:
    """`model` (loaded from GGUF with `dequantize=True`) without the GGUF quantization config it still carries.

    Its weights are already float; with the config it would save as a quantized folder,
    and it would differ from the same model loaded from its float copy.
    """
    model.config = float_config(model.config)
    model.hf_quantizer = None
    return model


def float_copy_dir(gguf_path: Path) -> Path | None:
    """The cache folder for the float copy of a GGUF file, or None when the file cannot be read."""
    from transformers import __version__ as transformers_version

    try:
        path = gguf_path.resolve()
        stat = path.stat()
    except OSError:
        return None
    key = hashlib.sha256(f"{path}|{stat.st_size}|{stat.st_mtime_ns}|{transformers_version}".encode())
    return cache_dir("float_weights") / f"{path.stem}-{key.hexdigest()[:16]}"


def save_float_copy(model: Any, tokenizer: Any, dest: Path) -> Path:
    """Save a float model and its tokenizer as a folder `dest` that appears whole or not at all.

    `model` must be a float model (`dequantized`). Concurrent writers are safe: each
    writes a private folder and renames it; the first rename wins and the others are
    discarded.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        tokenizer.save_pretrained(partial)
        model.save_pretrained(partial)
        try:
            os.rename(partial, dest)
        except OSError:
            if not (dest / "config.json").is_file():
                raise
            logger.debug("%s was saved by another process first", dest)
        else:
            logger.info("kept a float copy in %s", dest)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return dest


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

    Servers that cannot read GGUF (vLLM) serve this folder. Skipped when `dest`
    already holds a copy.
    """
    dest = Path(dest)
    if (dest / "config.json").is_file():
        return dest
    model, tokenizer = load_causal_lm(name_or_path)
    save_float_copy(model, tokenizer, dest)
    logger.info("saved a float copy of %s in %s", name_or_path, dest)
    return dest
