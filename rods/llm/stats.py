"""Token, latency, call and failure accounting of a backend, per purpose.

The synthesis pipeline reports LLM calls and tokens per accepted task per
stage: each stage passes its name as ``purpose`` and reads these counters.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field, fields
from typing import Any


@dataclass
class CallStats:
    """Counters for one purpose (or all of them)."""

    chats: int = 0  # chat() calls
    requests: int = 0  # requests sent to the backend (retries and repairs included)
    retries: int = 0  # requests repeated after a transient failure
    repairs: int = 0  # JSON repair rounds
    invalid_json: int = 0  # replies that failed JSON extraction or validation
    truncated: int = 0  # of those, replies cut off at max_tokens (no grammar prevents that)
    failures: int = 0  # chat() calls that raised LLMError
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)  # failed requests by kind

    def add(self, other: CallStats) -> None:
        for f in fields(self):
            if f.name == "errors":
                for k, v in other.errors.items():
                    self.errors[k] = self.errors.get(k, 0) + v
            else:
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


class LLMStats:
    """Thread-safe accounting of a backend's calls, in total and per purpose."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_purpose: dict[str, CallStats] = {}

    def record(self, purpose: str, delta: CallStats) -> None:
        with self._lock:
            self._by_purpose.setdefault(purpose, CallStats()).add(delta)

    def purpose(self, name: str) -> CallStats:
        """A copy of the counters for one purpose (zeros if never used)."""
        with self._lock:
            out = CallStats()
            out.add(self._by_purpose.get(name, CallStats()))
            return out

    @property
    def total(self) -> CallStats:
        with self._lock:
            out = CallStats()
            for s in self._by_purpose.values():
                out.add(s)
            return out

    def snapshot(self) -> dict[str, Any]:
        """Plain-dict view: ``{"total": {...}, "by_purpose": {purpose: {...}}}``."""
        total = self.total
        with self._lock:
            by = {k: asdict(v) for k, v in sorted(self._by_purpose.items())}
        return {"total": asdict(total), "by_purpose": by}

    def reset(self) -> None:
        with self._lock:
            self._by_purpose.clear()


def merge_snapshots(snapshots: list[dict[str, Any]]) -> dict[str, Any]:
    """Several `LLMStats.snapshot()`s added up (numbers summed, error counts merged)."""
    if len(snapshots) == 1:
        return snapshots[0]

    def add(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
        out = dict(a)
        for key, value in b.items():
            if isinstance(value, dict):
                out[key] = add(out.get(key, {}), value)
            elif isinstance(value, (int, float)):
                out[key] = out.get(key, 0) + value
        return out

    total: dict[str, Any] = {"total": {}, "by_purpose": {}}
    for snap in snapshots:
        total = add(total, snap)
    return total


def per_accepted(llm: dict[str, Any], accepted: int) -> dict[str, Any]:
    """An LLM stats snapshot plus calls and tokens per accepted task (overall and by stage)."""
    acc = max(1, accepted)
    llm["calls_per_accepted"] = llm["total"].get("chats", 0) / acc
    llm["tokens_per_accepted"] = (llm["total"].get("prompt_tokens", 0) + llm["total"].get("completion_tokens", 0)) / acc
    llm["calls_per_accepted_by_stage"] = {p: s["chats"] / acc for p, s in llm["by_purpose"].items()}
    llm["tokens_per_accepted_by_stage"] = {p: (s["prompt_tokens"] + s["completion_tokens"]) / acc
                                           for p, s in llm["by_purpose"].items()}
    return llm
