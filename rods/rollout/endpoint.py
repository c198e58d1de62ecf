"""Any OpenAI-compatible chat endpoint (vLLM, SGLang, llama.cpp, ...) as a policy.

Requests of a batch run concurrently on a thread pool. Structured ``tool_calls``
in a response are written back as Hermes ``<tool_call>`` blocks, so text calls
and native calls go through one parser (`rods.rollout.parse`).
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rods.rollout.policy import GenerationStats, Messages

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

    def generate(self, batch: list[tuple[Messages, list[dict[str, Any]]]]) -> list[str]:
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=min(self.concurrency, max(1, len(batch)))) as pool:
            replies = list(pool.map(lambda item: self._one(*item), batch))
        self.stats.requests += len(batch)
        self.stats.seconds += time.perf_counter() - start
        return replies

    def _one(self, messages: Messages, tools: list[dict[str, Any]]) -> str:
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
