"""The language-model backend contract: chat in, text or validated JSON out.

Every backend (an OpenAI-compatible endpoint, a local transformers model, the
model-free templates) implements one method, :meth:`LLMBackend._complete`, that
turns a :class:`ChatRequest` into a :class:`Completion`. Everything else lives
here once, so every backend behaves the same:

* a per-call timeout (passed to the backend, which must honour it);
* retries with exponential backoff on transient failures (timeouts, 5xx,
  lost connections: :class:`TransientLLMError`), then :class:`LLMError`;
* a concurrency limit (a semaphore around each request);
* JSON output validated against a JSON Schema or a pydantic model, with a
  repair-and-retry loop that sends the error back to the model;
* token, latency, call and failure accounting, in total and per ``purpose``
  (the synthesis stage asking), in :class:`LLMStats`.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import threading
import time
from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from rods.config import Section
from rods.llm.schema import ANY_OBJECT, JSONReplyError, extract_json, schema_of, validate
from rods.llm.stats import CallStats, LLMStats

logger = logging.getLogger(__name__)

Message = dict[str, Any]


class LLMError(RuntimeError):
    """A chat call failed for good (after retries and JSON repairs).

    Attributes:
        kind: short failure class: "timeout", "server", "connection",
            "bad_request", "invalid_json", "truncated" (the last reply was cut off
            at max_tokens: raise it, or the model loops), "backend".
        purpose: the ``purpose`` of the failed call.
        attempts: requests made for this call, including retries and repairs.
        prompt_tokens, completion_tokens: tokens spent on this call anyway.
        last_text: the last reply text, if any (for invalid JSON).
    """

    def __init__(self, message: str, *, kind: str = "backend", purpose: str = "", attempts: int = 0,
                 prompt_tokens: int = 0, completion_tokens: int = 0, last_text: str | None = None):
        super().__init__(message)
        self.kind = kind
        self.purpose = purpose
        self.attempts = attempts
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self.last_text = last_text


class TransientLLMError(LLMError):
    """A failure worth retrying: timeout, server error (5xx, 429), lost connection."""


class LLMConfig(Section):
    """Behaviour shared by every backend (retries, limits, sampling defaults)."""

    timeout_s: float = Field(60.0, gt=0, description="Wall-clock limit of one request, in seconds.")
    max_retries: int = Field(3, ge=0, description="Retries of a request after a transient failure.")
    backoff_s: float = Field(0.5, ge=0, description="First backoff before a retry; doubles at each retry.")
    backoff_max_s: float = Field(8.0, ge=0, description="Cap on one backoff, in seconds.")
    max_concurrency: int = Field(4, ge=1, description="Requests in flight at once, over all threads.")
    json_repairs: int = Field(2, ge=0, description="Times an invalid JSON reply is sent back for repair.")
    temperature: float = Field(0.7, ge=0, description="Default sampling temperature.")
    max_tokens: int = Field(512, ge=1, description="Default completion length limit, in tokens.")

    @classmethod
    def split(cls, kwargs: dict[str, Any]) -> tuple[LLMConfig, dict[str, Any]]:
        """Separate config fields from the rest of a backend's keyword arguments (the config part validated)."""
        mine = {k: v for k, v in kwargs.items() if k in cls.model_fields}
        return cls.model_validate(mine), {k: v for k, v in kwargs.items() if k not in cls.model_fields}


@dataclass
class ChatRequest:
    """One request to a backend, as :meth:`LLMBackend._complete` receives it."""

    messages: list[Message]
    temperature: float
    max_tokens: int
    timeout_s: float
    json_schema: dict | None = None  # JSON Schema of the reply model, as sent to servers (None: free text)
    schema_name: str = "reply"
    tools: list[dict] | None = None
    tool_choice: str | dict | None = None
    purpose: str = ""
    context: dict | None = None
    seed: int | None = None


@dataclass
class Completion:
    """What a backend returns for one request."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tool_calls: list[dict] = field(default_factory=list)  # [{"id", "name", "arguments": str}]
    finish_reason: str = "stop"
    extra_requests: int = 0  # requests the backend resent itself (e.g. a structured-output fallback)


@dataclass
class LLMReply:
    """The answer to one :meth:`LLMBackend.chat` call.

    ``parsed`` is the validated reply model when one was given, and ``data``
    its JSON form (or the JSON object of a ``json_mode`` call), else None. Token counts and latency cover every request
    the call made (retries and repairs included); ``attempts`` counts them.
    """

    text: str
    data: Any = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    attempts: int = 1
    repairs: int = 0
    tool_calls: list[dict] = field(default_factory=list)
    finish_reason: str = "stop"
    parsed: Any = None


class LLMBackend(ABC):
    """A chat model. Subclasses implement :meth:`_complete`; call :meth:`chat`.

    Thread-safe: ``chat`` may be called from many threads at once; at most
    ``config.max_concurrency`` requests reach the backend together.
    """

    name: str = "backend"

    def __init__(self, config: LLMConfig | None = None):
        self.config = config or LLMConfig()
        self.stats = LLMStats()
        self._slots = threading.BoundedSemaphore(max(1, self.config.max_concurrency))
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    @abstractmethod
    def _complete(self, request: ChatRequest) -> Completion:
        """Send one request. Raise :class:`TransientLLMError` for retryable
        failures, :class:`LLMError` for the others. Honour ``request.timeout_s``."""

    def describe(self) -> str:
        """Short label for provenance, e.g. ``openai:qwen3-8b``."""
        return self.name

    def close(self) -> None:
        """Release resources (worker threads; subclasses add HTTP clients, models)."""
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False)
                self._pool = None

    # ------------------------------------------------------------------ chat

    def chat(
        self,
        messages: list[Message],
        *,
        json_schema: type[BaseModel] | None = None,
        json_mode: bool = False,
        purpose: str = "",
        context: dict | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout_s: float | None = None,
        tools: list[dict] | None = None,
        tool_choice: str | dict | None = None,
        seed: int | None = None,
    ) -> LLMReply:
        """Ask the model; return its reply, JSON-validated when a schema is given.

        Args:
            messages: OpenAI-style chat messages.
            json_schema: the pydantic model the reply must match (its JSON Schema goes to
                the server); invalid replies are sent back for repair ``config.json_repairs`` times.
            json_mode: ask for any JSON object (no schema); ``data`` holds it.
            purpose: the caller's stage name, for accounting and the template backend.
            context: structured inputs of the call (used by the template backend).
            tools, tool_choice: OpenAI tool definitions; calls come back in ``tool_calls``.

        Raises:
            LLMError: the call failed after retries, or the JSON never validated.
        """
        if not messages:
            raise ValueError("chat() needs at least one message")
        schema = schema_of(json_schema) if json_schema is not None else (ANY_OBJECT if json_mode else None)
        name = json_schema.__name__ if json_schema is not None else "reply"
        request = ChatRequest(
            messages=list(messages),
            temperature=self.config.temperature if temperature is None else temperature,
            max_tokens=self.config.max_tokens if max_tokens is None else max_tokens,
            timeout_s=self.config.timeout_s if timeout_s is None else timeout_s,
            json_schema=schema,
            schema_name=name,
            tools=tools,
            tool_choice=tool_choice,
            purpose=purpose,
            context=context,
            seed=seed,
        )
        delta = CallStats(chats=1)
        start = time.perf_counter()
        try:
            reply = self._chat_with_repairs(request, json_schema, delta)
        except LLMError as exc:
            delta.failures += 1
            exc.purpose = purpose
            exc.attempts = delta.requests
            exc.prompt_tokens, exc.completion_tokens = delta.prompt_tokens, delta.completion_tokens
            raise
        finally:
            delta.latency_s = time.perf_counter() - start
            self.stats.record(purpose, delta)
        reply.latency_s = delta.latency_s
        reply.attempts = delta.requests
        reply.prompt_tokens, reply.completion_tokens = delta.prompt_tokens, delta.completion_tokens
        return reply

    async def achat(self, messages: list[Message], **kwargs: Any) -> LLMReply:
        """Async :meth:`chat`: runs in this backend's worker threads (the semaphore still applies)."""
        with self._pool_lock:
            if self._pool is None:
                workers = self.config.max_concurrency + 4  # room for calls sleeping in backoff
                self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=f"llm-{self.name}")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(self.chat, messages, **kwargs))

    # -------------------------------------------------------------- internals

    def _chat_with_repairs(self, request: ChatRequest, model: type[BaseModel] | None,
                           delta: CallStats) -> LLMReply:
        wants_json = request.json_schema is not None
        for round_ in range(self.config.json_repairs + 1):
            done = self._request_with_retries(request, delta)
            if not wants_json or done.tool_calls:
                return LLMReply(text=done.text, tool_calls=done.tool_calls, finish_reason=done.finish_reason,
                                repairs=round_)
            try:
                value = extract_json(done.text)
                parsed = validate(value, model) if model is not None else None
                if model is None and not isinstance(value, dict):
                    raise JSONReplyError(f"$: expected a JSON object, got {type(value).__name__}")
            except JSONReplyError as exc:
                delta.invalid_json += 1
                delta.truncated += done.finish_reason == "length"
                logger.debug("invalid JSON for %r (round %d): %s", request.purpose, round_, exc)
                if round_ == self.config.json_repairs:
                    cut = done.finish_reason == "length"
                    raise LLMError(f"no valid JSON after {round_ + 1} replies"
                                   f"{' (the last cut off at max_tokens)' if cut else ''}: {exc}",
                                   kind="truncated" if cut else "invalid_json", last_text=done.text) from None
                delta.repairs += 1
                request.messages = [*request.messages, {"role": "assistant", "content": done.text},
                                    {"role": "user", "content": repair_prompt(str(exc), request.json_schema)}]
                continue
            data = parsed.model_dump(mode="json", by_alias=True) if parsed is not None else value
            return LLMReply(text=done.text, data=data, parsed=parsed, finish_reason=done.finish_reason,
                            repairs=round_)
        raise AssertionError("unreachable")

    def _request_with_retries(self, request: ChatRequest, delta: CallStats) -> Completion:
        for attempt in range(self.config.max_retries + 1):
            delta.requests += 1
            try:
                with self._slots:
                    done = self._complete(request)
            except TransientLLMError as exc:
                delta.errors[exc.kind] = delta.errors.get(exc.kind, 0) + 1
                if attempt == self.config.max_retries:
                    raise LLMError(f"{exc} (gave up after {attempt + 1} requests)", kind=exc.kind) from exc
                delta.retries += 1
                pause = min(self.config.backoff_max_s, self.config.backoff_s * (2**attempt))
                logger.info("%s: %s; retry %d in %.2fs", self.describe(), exc, attempt + 1, pause)
                time.sleep(pause)
                continue
            except LLMError as exc:
                delta.errors[exc.kind] = delta.errors.get(exc.kind, 0) + 1
                raise
            except Exception as exc:  # a backend bug: log it loudly, count it, keep the caller alive
                logger.exception("%s raised on a %r request", self.name, request.purpose)
                delta.errors["backend"] = delta.errors.get("backend", 0) + 1
                raise LLMError(f"{self.name} backend failed: {exc!r}", kind="backend") from exc
            delta.requests += done.extra_requests
            delta.prompt_tokens += done.prompt_tokens
            delta.completion_tokens += done.completion_tokens
            return done
        raise AssertionError("unreachable")


def json_instruction(schema: dict) -> str:
    """Prompt text asking for JSON, for backends that cannot constrain decoding."""
    if schema == ANY_OBJECT:
        return "Answer with only one JSON object, no prose."
    return f"Answer with only one JSON value, no prose, matching this JSON Schema:\n{json.dumps(schema)}"


def repair_prompt(error: str, schema: dict | None) -> str:
    """The message sent back after an invalid JSON reply."""
    text = f"Your reply could not be used: {error}. Reply again with only one JSON value, no prose"
    if schema and schema != ANY_OBJECT:
        text += f", matching this JSON Schema:\n{json.dumps(schema)}"
    return text + "."
