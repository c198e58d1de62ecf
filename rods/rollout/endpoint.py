"""Any OpenAI-compatible chat endpoint (vLLM, SGLang, llama.cpp, ...) as a policy.

The requests go through `rods.llm.OpenAIBackend`, so policies and synthesis
share one client construction and one retry policy (transient failures retried
with backoff, others failing at once with `rods.llm.LLMError`). Requests of a
batch run concurrently on a thread pool. Structured ``tool_calls`` in a
response are written back as Hermes ``<tool_call>`` blocks, so text calls and
native calls go through one parser (`rods.rollout.parse`).
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rods.llm.base import LLMConfig
from rods.llm.hermes import tool_call_block
from rods.llm.openai_backend import OpenAIBackend
from rods.rollout.policy import GenerationStats, Messages


class OpenAIPolicy:
    """Replies from an OpenAI-compatible chat endpoint (vLLM, SGLang, llama.cpp, ...).

    The reply text is the message content followed by one Hermes
    ``<tool_call>`` block per structured tool call, so text calls and native
    calls are read alike.

    Args:
        base_url: e.g. ``http://127.0.0.1:8000/v1``.
        model: the served model name (None: the server's first, from ``GET /v1/models``).
        native_tools: send ``tools`` with each request (else episodes describe
            the tools in the prompt).
        concurrency: requests in flight at once.
        timeout / max_retries: per request, as `rods.llm.LLMConfig` applies them.
        extra_body: extra JSON fields of every request (e.g. chat-template switches).
    """

    def __init__(
        self,
        base_url: str | None,
        model: str | None = None,
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
    ):
        self.concurrency = max(1, concurrency)
        request: dict[str, Any] = {}
        if top_p is not None:
            request["top_p"] = top_p
        if extra_body:
            request["extra_body"] = dict(extra_body)
        config = LLMConfig(timeout_s=timeout, max_retries=max_retries, max_concurrency=self.concurrency,
                           temperature=temperature, max_tokens=max_tokens)
        self.backend = OpenAIBackend(base_url, model, api_key, config=config, request_kwargs=request)
        self.native_tools = native_tools
        self.stats = GenerationStats()

    @property
    def model(self) -> str:
        """The served model's name (asked from the server once when none was given)."""
        return self.backend.model

    def generate(self, batch: list[tuple[Messages, list[dict[str, Any]]]]) -> list[str]:
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=min(self.concurrency, max(1, len(batch)))) as pool:
            replies = list(pool.map(lambda item: self._one(*item), batch))
        self.stats.requests += len(batch)
        self.stats.seconds += time.perf_counter() - start
        return replies

    def _one(self, messages: Messages, tools: list[dict[str, Any]]) -> str:
        reply = self.backend.chat(
            to_openai_messages(messages), tools=tools if (self.native_tools and tools) else None, purpose="rollout"
        )
        self.stats.prompt_tokens += reply.prompt_tokens
        self.stats.completion_tokens += reply.completion_tokens
        return reply_text(reply.text, reply.tool_calls)

    def close(self) -> None:
        self.backend.close()


def reply_text(content: str, tool_calls: list[dict[str, Any]]) -> str:
    """An endpoint's reply as text: the content, then one Hermes block per structured call.

    `tool_calls` are ``{"name", "arguments"}`` with the arguments as the
    endpoint sent them (a JSON string); unreadable arguments are kept as a
    string, which the parser reports as an error.
    """
    parts = [content or ""]
    for call in tool_calls:
        raw = call.get("arguments")
        raw = "{}" if raw is None else raw
        try:
            arguments: Any = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError:
            arguments = raw
        parts.append(tool_call_block(call["name"], arguments))
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
