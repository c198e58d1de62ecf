"""LoRA adapter folders: recognise one, load it on its base model, merge it, export a model folder.

A LoRA run's checkpoint (``checkpoint-N/``) holds only the adapter
(``adapter_config.json`` + ``adapter_model.safetensors``, peft's format) and the
tokenizer. Its ``base_model_name_or_path`` is the policy as rods names it (a
model folder, a hub id, a ``.gguf`` path or ``embedded``; `rods.train` writes
it), so `rods eval --model checkpoint-N` and `rods export` find the base
without being told. Heavy imports (torch, peft) stay inside the functions.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: The file that makes a folder a peft adapter.
ADAPTER_CONFIG = "adapter_config.json"
#: Files of a trainer checkpoint that an exported folder leaves behind.
TRAINING_STATE = ("optimizer.pt", "scheduler.pt", "rng_state.pth", "trainer_state.json", "training_args.bin")


def is_adapter_dir(path: str | Path) -> bool:
    """True when `path` is a folder holding a peft adapter."""
    return (Path(path) / ADAPTER_CONFIG).is_file()


def adapter_base(path: str | Path) -> str:
    """The base policy an adapter folder was trained on (its ``base_model_name_or_path``).

    Raises:
        ValueError: the adapter does not name its base.
    """
    config = json.loads((Path(path) / ADAPTER_CONFIG).read_text(encoding="utf-8"))
    base = config.get("base_model_name_or_path")
    if not base:
        raise ValueError(f"{path}/{ADAPTER_CONFIG} names no base model (base_model_name_or_path)")
    return str(base)


def load_adapter_model(path: str | Path, *, dtype: str = "float32", merge: bool = True) -> tuple[Any, Any]:
    """``(model, tokenizer)`` of an adapter folder: its base loaded by `rods.llm.weights`, the adapter on top.

    With `merge` the adapter is folded into the base weights (a plain model, as fast as the base);
    without, the `PeftModel` is returned (trainable adapter). The tokenizer is the folder's own when
    it has one (a checkpoint saves it), else the base's.
    """
    from peft import PeftModel
    from transformers import AutoTokenizer

    from rods.llm.weights import load_causal_lm

    base_name = adapter_base(path)
    base, tokenizer = load_causal_lm(base_name, dtype=dtype)
    if (Path(path) / "tokenizer_config.json").is_file():
        tokenizer = AutoTokenizer.from_pretrained(path)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
    model = PeftModel.from_pretrained(base, str(path), is_trainable=not merge)
    if merge:
        model = model.merge_and_unload()
    log.info("loaded adapter %s on %s%s", path, base_name, " (merged)" if merge else "")
    return model, tokenizer


def export_model(src: str | Path, dest: str | Path, *, merge: bool = False) -> Path:
    """Write a clean model folder from a checkpoint (no optimizer or trainer state); returns `dest`.

    An adapter checkpoint becomes, with `merge`, a full float model folder (base + adapter folded in,
    loadable by transformers and vLLM alone); without `merge`, the adapter and tokenizer only. A
    full-weights checkpoint is copied without its training state (`merge` changes nothing).
    """
    from rods.llm.weights import float_config

    src, dest = Path(src), Path(dest)
    if not src.is_dir():
        raise FileNotFoundError(f"no checkpoint folder at {src}")
    if dest.exists() and any(dest.iterdir()):
        raise ValueError(f"{dest} exists and is not empty; choose another output folder")
    dest.mkdir(parents=True, exist_ok=True)
    if is_adapter_dir(src) and merge:
        model, tokenizer = load_adapter_model(src, merge=True)
        model.config = float_config(model.config)
        model.hf_quantizer = None
        model.save_pretrained(dest)
        tokenizer.save_pretrained(dest)
        log.info("merged %s into its base %s: %s", src, adapter_base(src), dest)
        return dest
    for item in src.iterdir():
        if item.name in TRAINING_STATE or item.name.startswith(("rng_state", "global_step")) or item.is_dir():
            continue
        shutil.copy2(item, dest / item.name)
    log.info("exported %s to %s (%s)", src, dest, "adapter" if is_adapter_dir(src) else "full weights")
    return dest
