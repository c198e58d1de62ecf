"""Language-model backends: one small chat interface, several implementations.

``make_backend('openai' | 'local' | 'template', **kw)`` builds one; all share
:class:`LLMBackend`'s timeout, retries, concurrency limit, JSON validation with
repair, and token/latency accounting (see :mod:`rods.llm.base`).
"""

from rods.llm.base import (
    CallStats,
    ChatRequest,
    Completion,
    LLMBackend,
    LLMConfig,
    LLMError,
    LLMReply,
    LLMStats,
    TransientLLMError,
)
from rods.llm.factory import BACKENDS, make_backend
from rods.llm.schema import JSONReplyError, extract_json, validate

__all__ = [
    "BACKENDS",
    "CallStats",
    "ChatRequest",
    "Completion",
    "JSONReplyError",
    "LLMBackend",
    "LLMConfig",
    "LLMError",
    "LLMReply",
    "LLMStats",
    "TransientLLMError",
    "extract_json",
    "make_backend",
    "validate",
]
