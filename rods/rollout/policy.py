"""Policies: whatever turns chat messages into the assistant's next reply text.

A `Policy` answers a batch of ``(messages, tools)`` pairs with one reply text
each. Tool calls come back as text in the Hermes format, whatever the source:
`OpenAIPolicy` writes the endpoint's structured ``tool_calls`` as
``<tool_call>`` blocks, so one parser (`rods.rollout.parse`) reads them all.

`run_episodes` steps many episodes (K rollouts of each task) side by side:
every round asks the policy for the next reply of every unfinished episode in
one batch.
"""

from __future__ import annotations

import copy
import json
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from rods.rollout.episode import DEFAULT_MAX_STEPS, Episode
from rods.rollout.prompt import ToolDocs, ToolFormat
from rods.rollout.trajectory import Trajectory
from rods.tasks import Task

log = logging.getLogger(__name__)

Messages = list[dict[str, Any]]
Tools = list[dict[str, Any]]


@runtime_checkable
class Policy(Protocol):
    """Anything that writes the next assistant reply for a batch of chats.

    `native_tools` says whether the policy passes `tools` to the model itself
    (a chat template or endpoint with tool support); when false, episodes
    write the tool descriptions into the messages.
    """

    native_tools: bool

    def generate(self, batch: list[tuple[Messages, Tools]]) -> list[str]: ...


@dataclass
class GenerationStats:
    """Counts of one policy's work so far (for throughput figures)."""

    requests: int = 0
    prompt_tokens: int = 0
    #: Prompt tokens served from a kept KV cache instead of being prefilled again.
    cached_prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    by_round: list[float] = field(default_factory=list)


# -- a local transformers model --------------------------------------------------


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


# -- an OpenAI-compatible endpoint ----------------------------------------------------


class OpenAIPolicy:
    """Replies from an OpenAI-compatible chat endpoint (vLLM, SGLang, llama.cpp, ...).

    Requests of a batch run concurrently on a thread pool. The reply text is
    the message content followed by one Hermes ``<tool_call>`` block per
    structured tool call, so text calls and native calls are read alike.

    Args:
        base_url: e.g. ``http://127.0.0.1:8000/v1``.
        model: the served model name.
        native_tools: send ``tools`` with each request (else episodes describe
            the tools in the prompt).
        concurrency: requests in flight at once.
        client: an `openai.OpenAI` client to use instead of building one.
    """

    def __init__(
        self,
        base_url: str | None,
        model: str,
        api_key: str = "EMPTY",
        *,
        concurrency: int = 8,
        max_tokens: int = 512,
        temperature: float = 0.0,
        top_p: float | None = None,
        native_tools: bool = True,
        timeout: float = 300.0,
        max_retries: int = 2,
        extra_body: dict[str, Any] | None = None,
        client: Any = None,
    ):
        if client is None:
            from openai import OpenAI

            client = OpenAI(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries)
        self.client = client
        self.model = model
        self.concurrency = max(1, concurrency)
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.top_p = top_p
        self.native_tools = native_tools
        self.extra_body = dict(extra_body or {})
        self.stats = GenerationStats()

    def generate(self, batch: list[tuple[Messages, Tools]]) -> list[str]:
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=min(self.concurrency, max(1, len(batch)))) as pool:
            replies = list(pool.map(lambda item: self._one(*item), batch))
        self.stats.requests += len(batch)
        self.stats.seconds += time.perf_counter() - start
        return replies

    def _one(self, messages: Messages, tools: Tools) -> str:
        request: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(messages),
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }
        if self.top_p is not None:
            request["top_p"] = self.top_p
        if self.native_tools and tools:
            request["tools"] = tools
        if self.extra_body:
            request["extra_body"] = self.extra_body
        response = self.client.chat.completions.create(**request)
        if response.usage is not None:
            self.stats.prompt_tokens += response.usage.prompt_tokens or 0
            self.stats.completion_tokens += response.usage.completion_tokens or 0
        if not response.choices:
            return ""
        return reply_text(response.choices[0].message)


def reply_text(message: Any) -> str:
    """An OpenAI response message as text: content, then one Hermes block per tool call."""
    parts = [message.content or ""]
    for call in getattr(message, "tool_calls", None) or []:
        function = call.function
        raw = function.arguments if function.arguments is not None else "{}"
        try:
            arguments: Any = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError:
            arguments = raw  # left as a string: the parser reports it as an error
        block = json.dumps({"name": function.name, "arguments": arguments}, ensure_ascii=False)
        parts.append(f"<tool_call>\n{block}\n</tool_call>")
    return "\n".join(p for p in parts if p)


def to_openai_messages(messages: Messages) -> Messages:
    """Episode messages in the shape the Chat Completions API accepts.

    Tool-call arguments become JSON strings; a tool message that answers no
    structured call (tools described in the prompt, or an unreadable call)
    becomes a user message wrapping the result in ``<tool_response>`` tags.
    """
    out: Messages = []
    open_ids: set[str] = set()
    for message in messages:
        role = message.get("role")
        if role == "assistant" and message.get("tool_calls"):
            calls = []
            for call in message["tool_calls"]:
                args = call["function"]["arguments"]
                calls.append(
                    {
                        "id": call["id"],
                        "type": "function",
                        "function": {
                            "name": call["function"]["name"],
                            "arguments": args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
                        },
                    }
                )
            open_ids = {c["id"] for c in calls}
            out.append({"role": "assistant", "content": message.get("content") or "", "tool_calls": calls})
        elif role == "tool" and message.get("tool_call_id") in open_ids:
            out.append({"role": "tool", "tool_call_id": message["tool_call_id"], "content": message["content"]})
        elif role == "tool":
            out.append({"role": "user", "content": f"<tool_response>\n{message['content']}\n</tool_response>"})
        else:
            open_ids = set()
            out.append({"role": role, "content": message.get("content") or ""})
    return out


# -- stepping many episodes together -------------------------------------------------


def run_episodes(
    tasks: Sequence[Task],
    policy: Policy,
    k: int = 1,
    *,
    max_steps_per_turn: int = DEFAULT_MAX_STEPS,
    tool_format: ToolFormat = "hermes",
    tools_in_prompt: bool | None = None,
    system_prompt: str | None = None,
    on_step_cap: Literal["end_turn", "force_quit"] = "end_turn",
    tool_docs: ToolDocs = "full",
    progress: Callable[[int, int], None] | None = None,
) -> list[Trajectory]:
    """Roll out every task `k` times; trajectories come back task-major (task 0's K first).

    Each round sends the next reply request of every unfinished episode to the
    policy in one batch. `tools_in_prompt` defaults to ``not policy.native_tools``.
    `progress(finished, total)` is called after every round.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    in_prompt = (not getattr(policy, "native_tools", True)) if tools_in_prompt is None else tools_in_prompt
    episodes = [
        Episode(
            task,
            max_steps_per_turn=max_steps_per_turn,
            system_prompt=system_prompt,
            tool_format=tool_format,
            tools_in_prompt=in_prompt,
            on_step_cap=on_step_cap,
            tool_docs=tool_docs,
            sample_index=i,
        )
        for task in tasks
        for i in range(k)
    ]
    rounds = 0
    while active := [e for e in episodes if not e.done]:
        started = time.perf_counter()
        replies = policy.generate([(e.messages, e.tools) for e in active])
        if len(replies) != len(active):
            raise RuntimeError(f"policy returned {len(replies)} replies for {len(active)} requests")
        for episode, reply in zip(active, replies):
            episode.advance(reply)
        rounds += 1
        log.debug("round %d: %d replies in %.1fs", rounds, len(active), time.perf_counter() - started)
        if progress is not None:
            progress(sum(e.done for e in episodes), len(episodes))
    log.info("%d episodes finished in %d rounds", len(episodes), rounds)
    return [e.trajectory() for e in episodes]
