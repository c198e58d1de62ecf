"""A local transformers causal LM as a policy: batched generation or a per-conversation KV cache.

A multi-turn rollout re-sends its whole history every round. On a GPU, batches
with left padding are the fast path; on a CPU, prefill dominates, so by default
each conversation keeps its KV cache between rounds and only what was appended
is prefilled (one prompt at a time). Both give the same greedy replies.
"""

from __future__ import annotations

import copy
import logging
import time
from typing import Any

from rods.rollout.policy import GenerationStats, Messages, Tools

log = logging.getLogger(__name__)


class TransformersPolicy:
    """Batched generation with a local transformers causal LM (left padding).

    Args:
        model: a `PreTrainedModel` (in eval mode for evaluation; the trainer may
            pass its unwrapped model).
        tokenizer: its tokenizer, with a chat template.
        max_new_tokens: reply length cap.
        temperature: 0 for greedy decoding, else sampling with `top_p`.
        batch_size: prompts per `generate` call (prompts are length-sorted first).
        max_prompt_tokens: longer prompts keep their last tokens (default: the
            model's context length minus `max_new_tokens`).
        chat_template_kwargs: extra template variables (e.g. ``enable_thinking``).
        prefix_cache: keep each conversation's KV cache between rounds and
            prefill only the new tokens (one prompt at a time). A multi-turn
            rollout re-sends its whole history every round, so on CPU this is
            many times faster than batching; default: on for a CPU model.
        prefix_cache_size: conversations whose caches are kept (oldest dropped).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        max_new_tokens: int = 512,
        temperature: float = 0.0,
        top_p: float = 1.0,
        batch_size: int = 8,
        max_prompt_tokens: int | None = None,
        chat_template_kwargs: dict[str, Any] | None = None,
        prefix_cache: bool | None = None,
        prefix_cache_size: int = 64,
    ):
        self.model = model
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.batch_size = max(1, batch_size)
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        self.native_tools = "tools" in (getattr(tokenizer, "chat_template", None) or "")
        context = getattr(getattr(model, "config", None), "max_position_embeddings", None) or 32768
        self.max_prompt_tokens = max_prompt_tokens or max(16, context - max_new_tokens)
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.stats = GenerationStats()
        if prefix_cache is None:
            prefix_cache = next(model.parameters()).device.type == "cpu"
        self.prefix_cache = prefix_cache
        self.prefix_cache_size = max(1, prefix_cache_size)
        self._caches: list[tuple[list[int], Any]] = []  # (token ids the cache holds, cache)

    def render(self, messages: Messages, tools: Tools) -> str:
        """The prompt text of one chat, ending with the assistant's generation prompt."""
        return self.tokenizer.apply_chat_template(
            messages,
            tools=(tools or None) if self.native_tools else None,
            add_generation_prompt=True,
            tokenize=False,
            **self.chat_template_kwargs,
        )

    def generate(self, batch: list[tuple[Messages, Tools]]) -> list[str]:
        import torch

        prompts = [self.render(m, t) for m, t in batch]
        encoded = [self.tokenizer(p, add_special_tokens=False)["input_ids"] for p in prompts]
        for i, ids in enumerate(encoded):
            if len(ids) > self.max_prompt_tokens:
                log.warning("prompt of %d tokens cut to its last %d", len(ids), self.max_prompt_tokens)
                encoded[i] = ids[-self.max_prompt_tokens :]
        if self.prefix_cache:
            return self._generate_with_prefix_cache(encoded)
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        replies: list[str] = [""] * len(encoded)
        pad = self.tokenizer.pad_token_id
        device = next(self.model.parameters()).device
        start = time.perf_counter()
        for lo in range(0, len(order), self.batch_size):
            chunk = order[lo : lo + self.batch_size]
            width = max(len(encoded[i]) for i in chunk)
            input_ids = torch.full((len(chunk), width), pad, dtype=torch.long)
            attention = torch.zeros((len(chunk), width), dtype=torch.long)
            for row, i in enumerate(chunk):  # left padding: the prompts end together
                ids = encoded[i]
                input_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
                attention[row, width - len(ids) :] = 1
            with torch.no_grad():
                out = self.model.generate(
                    input_ids=input_ids.to(device),
                    attention_mask=attention.to(device),
                    max_new_tokens=self.max_new_tokens,
                    pad_token_id=pad,
                    **self._sampling(),
                )
            new = out[:, width:]
            for row, i in enumerate(chunk):
                tokens = [t for t in new[row].tolist() if t != pad]
                self.stats.completion_tokens += len(tokens)
                replies[i] = self.tokenizer.decode(tokens, skip_special_tokens=True)
            self.stats.prompt_tokens += sum(len(encoded[i]) for i in chunk)
        self.stats.requests += len(batch)
        self.stats.seconds += time.perf_counter() - start
        return replies

    def _sampling(self) -> dict[str, Any]:
        if self.temperature > 0:
            return {"do_sample": True, "temperature": self.temperature, "top_p": self.top_p}
        return {"do_sample": False}

    def _generate_with_prefix_cache(self, encoded: list[list[int]]) -> list[str]:
        """One prompt at a time, each continuing the KV cache of its longest cached prefix."""
        import torch
        from transformers import DynamicCache

        pad = self.tokenizer.pad_token_id
        device = next(self.model.parameters()).device
        cache_kwarg = _cache_kwarg()
        replies = []
        start = time.perf_counter()
        for ids in encoded:
            cache, reused = self._take_cache(ids)
            if cache is None:
                cache = DynamicCache(config=self.model.config)
            input_ids = torch.tensor([ids], dtype=torch.long, device=device)
            with torch.no_grad():
                out = self.model.generate(
                    input_ids=input_ids,
                    attention_mask=torch.ones_like(input_ids),
                    **{cache_kwarg: cache},
                    max_new_tokens=self.max_new_tokens,
                    pad_token_id=pad,
                    **self._sampling(),
                )
            new = [t for t in out[0, len(ids) :].tolist() if t != pad]
            held = (ids + out[0, len(ids) :].tolist())[: cache.get_seq_length()]
            self._caches.append((held, cache))
            del self._caches[: -self.prefix_cache_size]
            self.stats.prompt_tokens += len(ids)
            self.stats.cached_prompt_tokens += reused
            self.stats.completion_tokens += len(new)
            replies.append(self.tokenizer.decode(new, skip_special_tokens=True))
        self.stats.requests += len(encoded)
        self.stats.seconds += time.perf_counter() - start
        return replies

    def _take_cache(self, ids: list[int]) -> tuple[Any, int]:
        """The kept cache sharing the longest prefix with `ids`, cropped to that prefix.

        A prompt that continues a kept conversation takes its cache over; one
        that only shares its beginning (another task with the same tools, a
        sibling of K rollouts) gets a copy, so the owner keeps its own.
        """
        best, best_len = -1, 0
        for index, (held, _) in enumerate(self._caches):
            n = _common_prefix(held, ids)
            if n > best_len:
                best, best_len = index, n
        best_len = min(best_len, len(ids) - 1)  # generation needs one uncached prompt token
        if best < 0 or best_len < 16:
            return None, 0
        held, cache = self._caches[best]
        # The owner re-sends its history; the reply may re-tokenize differently near its end.
        if best_len >= len(held) - self.max_new_tokens - 8:
            self._caches.pop(best)
        else:
            cache = copy.deepcopy(cache)
        extra = cache.get_seq_length() - best_len
        try:
            if extra > 0:
                cache.crop(-extra)  # a negative count removes that many tokens (all versions)
        except (RuntimeError, ValueError) as err:  # e.g. a sliding-window cache past its window
            log.debug("prefix cache not reusable (%s); prefilling again", err)
            return None, 0
        return cache, best_len


def _cache_kwarg() -> str:
    """`generate`'s name for a caller's KV cache: `cache` since transformers 5, before `past_key_values`."""
    import transformers

    return "cache" if int(transformers.__version__.split(".")[0]) >= 5 else "past_key_values"


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i
