"""A transformers chat model on this machine (default: the embedded SmolLM2-135M).

The model and tokenizer load from a GGUF file (dequantized to float, as the
trainer does) or from any Hugging Face model folder; loaded models are shared
between backend instances. Generation is serialized by a lock (one CPU model,
one generation at a time) and bounded by ``timeout_s`` through transformers'
``max_time``. There is no constrained decoding: when JSON is asked for, the
schema goes into the prompt and the base class validates and repairs.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from rods.llm.base import ChatRequest, Completion, LLMBackend, LLMConfig, LLMError, json_instruction
from rods.llm.hermes import tool_call_bodies
from rods.llm.weights import EMBEDDED, load_causal_lm, weights_location

logger = logging.getLogger(__name__)

_LOAD_LOCK = threading.Lock()


@lru_cache(maxsize=2)
def load_model(name_or_path: str, gguf_file: str | None = None) -> tuple[Any, Any]:
    """``(model, tokenizer)`` in eval mode, loaded once per (source, GGUF file) by `rods.llm.weights`."""
    net, tokenizer = load_causal_lm(name_or_path, gguf_file)
    net.eval()
    return net, tokenizer


class LocalBackend(LLMBackend):
    """Chat with a local transformers model.

    Args:
        model: a GGUF file, a model folder, or None for the embedded SmolLM2 GGUF.
        seed: base seed for sampling (each request's ``seed`` overrides it).
        config: shared behaviour; ``max_concurrency`` is moot (generation is serialized).
    """

    name = "local"

    def __init__(self, model: str | Path | None = None, seed: int = 0, config: LLMConfig | None = None):
        super().__init__(config)
        try:
            self._source, self._gguf = weights_location(EMBEDDED if model is None else model)
        except FileNotFoundError as exc:
            raise FileNotFoundError(f"local backend: {exc}") from None
        self.seed = seed
        self._lock = threading.Lock()

    def describe(self) -> str:
        return f"local:{self._gguf or Path(self._source).name}"

    def _load(self) -> tuple[Any, Any]:
        with _LOAD_LOCK:
            try:
                return load_model(self._source, self._gguf)
            except (OSError, ValueError) as exc:
                raise LLMError(f"cannot load local model {self.describe()}: {exc}", kind="backend") from exc

    def _complete(self, request: ChatRequest) -> Completion:
        import torch

        net, tokenizer = self._load()
        messages = list(request.messages)
        if request.json_schema is not None and not request.tools:
            messages = [*messages, {"role": "system", "content": json_instruction(request.json_schema)}]
        template_kwargs: dict[str, Any] = {"add_generation_prompt": True, "return_tensors": "pt",
                                           "return_dict": True}
        if request.tools:
            template_kwargs["tools"] = request.tools
        try:
            inputs = tokenizer.apply_chat_template(messages, **template_kwargs)
        except Exception as exc:  # noqa: BLE001 - template errors are the caller's bad input
            raise LLMError(f"chat template failed: {exc}", kind="bad_request") from exc
        prompt_len = inputs["input_ids"].shape[1]
        sample = request.temperature > 0
        gen: dict[str, Any] = {
            "max_new_tokens": request.max_tokens,
            "do_sample": sample,
            "max_time": request.timeout_s,
            "pad_token_id": tokenizer.pad_token_id,
        }
        if sample:
            gen["temperature"] = request.temperature
        with self._lock, torch.no_grad():
            torch.manual_seed(self.seed if request.seed is None else request.seed)
            start = time.perf_counter()
            out = net.generate(**inputs, **gen)
            elapsed = time.perf_counter() - start
        new = out[0, prompt_len:]
        text = tokenizer.decode(new, skip_special_tokens=True)
        finish = "length" if len(new) >= request.max_tokens else "stop"
        if elapsed >= request.timeout_s:
            finish = "timeout"
        return Completion(text=text, prompt_tokens=int(prompt_len), completion_tokens=int(len(new)),
                          tool_calls=_tool_calls(text) if request.tools else [], finish_reason=finish)


def _tool_calls(text: str) -> list[dict]:
    """The reply's Hermes ``<tool_call>`` blocks as OpenAI-style calls (unreadable blocks are skipped)."""
    calls = []
    for i, block in enumerate(tool_call_bodies(text)):
        try:
            obj = json.loads(block)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("name"), str):
            calls.append({"id": f"call_{i}", "name": obj["name"], "arguments": json.dumps(obj.get("arguments", {}))})
    return calls
