"""Any OpenAI-compatible chat endpoint: vLLM, SGLang, llama.cpp, OpenAI.

Structured output: when a JSON Schema is requested the backend first asks the
server for ``response_format={"type": "json_schema", ...}``; if the server
rejects that, it falls back to JSON mode with the schema attached (what
llama-cpp-python understands), then plain JSON mode, then plain text with the
schema in the prompt, and remembers the level that worked. The base class validates
the reply either way and runs the repair loop, so weak servers still work.

Timeouts, 5xx, 429, lost connections and unreadable response bodies are
retried (with backoff, by :class:`~rods.llm.base.LLMBackend`); other HTTP
errors fail at once with :class:`~rods.llm.base.LLMError`.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

import openai

from rods.llm.base import (
    ChatRequest,
    Completion,
    LLMBackend,
    LLMConfig,
    LLMError,
    TransientLLMError,
    json_instruction,
)
from rods.llm.schema import ANY_OBJECT

logger = logging.getLogger(__name__)

#: Structured-output levels, strongest first. "json_object_schema" is JSON mode
#: with the schema attached (``{"type": "json_object", "schema": ...}``), which
#: llama-cpp-python turns into a grammar; others accept or reject it.
LEVELS = ("json_schema", "json_object_schema", "json_object", "none")


class OpenAIBackend(LLMBackend):
    """Chat through the ``openai`` client against ``base_url``.

    Args:
        base_url: the endpoint, e.g. ``http://127.0.0.1:8000/v1``
            (default: ``$OPENAI_BASE_URL``, else OpenAI's).
        model: the served model name; None asks ``/v1/models`` for the first one.
        api_key: default ``$OPENAI_API_KEY``, else ``"EMPTY"`` (local servers ignore it).
        structured: "auto" (try the ``LEVELS`` in order, keeping the first the
            server accepts) or one of ``LEVELS`` to fix the level.
        config: shared behaviour (timeout, retries, concurrency, ...).
        request_kwargs: further fields of every chat request (``top_p``,
            ``extra_body``, ...); a request's own fields take precedence.
    """

    name = "openai"

    def __init__(self, base_url: str | None = None, model: str | None = None, api_key: str | None = None,
                 structured: str = "auto", config: LLMConfig | None = None,
                 request_kwargs: dict[str, Any] | None = None, **client_kwargs: Any):
        super().__init__(config)
        if structured != "auto" and structured not in LEVELS:
            raise ValueError(f"structured must be 'auto' or one of {LEVELS}, not {structured!r}")
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        self.client = openai.OpenAI(
            base_url=self.base_url,
            api_key=api_key or os.environ.get("OPENAI_API_KEY") or "EMPTY",
            max_retries=0,  # retries are ours, counted and backed off in the base class
            timeout=self.config.timeout_s,
            **client_kwargs,
        )
        self.request_kwargs = dict(request_kwargs or {})
        self._model = model
        self._level = LEVELS.index(structured) if structured != "auto" else 0
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        """The model name sent with each request (asked from the server once if not given)."""
        with self._lock:
            if self._model is None:
                try:
                    models = self.client.models.list(timeout=self.config.timeout_s)
                    self._model = models.data[0].id
                except (openai.OpenAIError, IndexError) as exc:
                    raise LLMError(f"cannot list models at {self.base_url}: {exc}; pass model=",
                                   kind="connection") from exc
            return self._model

    @property
    def structured_level(self) -> str:
        """The structured-output level currently used for schema requests."""
        return LEVELS[self._level]

    def describe(self) -> str:
        return f"openai:{self.model}"

    def close(self) -> None:
        super().close()
        self.client.close()

    def _complete(self, request: ChatRequest) -> Completion:
        model = self.model
        resent = 0
        while True:
            level = self._level
            kwargs = self._kwargs(request, model, level)
            try:
                response = self.client.chat.completions.create(**kwargs)
            except openai.APITimeoutError as exc:
                raise TransientLLMError(f"no answer from {self.base_url} within {request.timeout_s}s",
                                        kind="timeout") from exc
            except openai.APIConnectionError as exc:
                raise TransientLLMError(f"cannot reach {self.base_url}: {exc}", kind="connection") from exc
            except openai.APIStatusError as exc:
                if self._downgrade(level, kwargs, exc):
                    resent += 1
                    continue
                if exc.status_code >= 500 or exc.status_code in (408, 409, 429):
                    raise TransientLLMError(f"HTTP {exc.status_code} from {self.base_url}: {_detail(exc)}",
                                            kind="server") from exc
                raise LLMError(f"HTTP {exc.status_code} from {self.base_url}: {_detail(exc)}",
                               kind="bad_request") from exc
            except (openai.APIResponseValidationError, ValueError) as exc:
                raise TransientLLMError(f"unreadable response from {self.base_url}: {exc}",
                                        kind="malformed") from exc
            done = _to_completion(response, self.base_url)
            done.extra_requests = resent
            return done

    def _kwargs(self, request: ChatRequest, model: str, level: int) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "model": model,
            "messages": request.messages,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "timeout": request.timeout_s,
        }
        for key, value in self.request_kwargs.items():
            kwargs.setdefault(key, value)
        if request.seed is not None:
            kwargs["seed"] = request.seed
        if request.purpose:
            kwargs["extra_headers"] = {"X-Rods-Purpose": request.purpose}  # for logs and test servers
        if request.tools:
            kwargs["tools"] = request.tools
            if request.tool_choice is not None:
                kwargs["tool_choice"] = request.tool_choice
        elif request.json_schema is not None:
            generic = request.json_schema == ANY_OBJECT
            if LEVELS[level] == "json_schema" and not generic:
                kwargs["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": _safe_name(request.schema_name), "schema": request.json_schema},
                }
            elif LEVELS[level] == "json_object_schema" and not generic:
                kwargs["response_format"] = {"type": "json_object", "schema": request.json_schema}
            elif LEVELS[level] != "none":
                kwargs["response_format"] = {"type": "json_object"}
            if LEVELS[level] not in ("json_schema", "json_object_schema") and not generic:
                # The server will not see the schema: put it in the prompt.
                kwargs["messages"] = [*request.messages,
                                      {"role": "system", "content": json_instruction(request.json_schema)}]
        return kwargs

    def _downgrade(self, level: int, kwargs: dict[str, Any], exc: openai.APIStatusError) -> bool:
        """After the server rejected a structured request, step down one level; True to resend.

        A rejection is a 400/422, or any error whose message names ``response_format``
        (llama-cpp-python answers an unknown format with HTTP 500).
        """
        if "response_format" not in kwargs or level >= len(LEVELS) - 1:
            return False
        if exc.status_code not in (400, 422) and "response_format" not in _detail(exc):
            return False
        with self._lock:
            if self._level == level:
                self._level = level + 1
        logger.warning("%s rejected response_format %s (%s); using %s", self.base_url,
                       kwargs["response_format"]["type"], _detail(exc), LEVELS[self._level])
        return True


def _to_completion(response: Any, where: str | None) -> Completion:
    if isinstance(response, str) or not getattr(response, "choices", None):
        raise TransientLLMError(f"response from {where} has no choices", kind="malformed")
    choice = response.choices[0]
    message = choice.message
    calls = [
        {"id": c.id, "name": c.function.name, "arguments": c.function.arguments or "{}"}
        for c in (message.tool_calls or [])
        if getattr(c, "function", None) is not None
    ]
    usage = response.usage
    return Completion(
        text=message.content or "",
        prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
        completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        tool_calls=calls,
        finish_reason=choice.finish_reason or "stop",
    )


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
        return str(inner)[:300]
    return str(exc)[:300]


def _safe_name(name: str) -> str:
    cleaned = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in name)
    return cleaned[:64] or "reply"
