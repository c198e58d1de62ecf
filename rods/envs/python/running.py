"""Running a Python class's tool: a time limit per call, and results as text (JSON for non-text)."""

from __future__ import annotations

import ctypes
import dataclasses
import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

#: Seconds a tool call may run before it is stopped (a class may set `tool_time_limit`).
DEFAULT_TIME_LIMIT = 10.0


class ToolTimeout(RuntimeError):
    """A tool ran past its time limit and was stopped."""


def call_with_time_limit(method: Callable[..., Any], args: tuple, kwargs: dict, limit: float) -> Any:
    """Run a tool in a worker thread; past `limit` seconds, stop it and raise `ToolTimeout`.

    The thread is stopped by raising `ToolTimeout` inside it (takes effect at its
    next Python instruction; a tool blocked inside C code is abandoned, daemon).
    """
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = method(*args, **kwargs)
        except BaseException as err:  # handed to the caller's thread
            outcome["error"] = err

    worker = threading.Thread(target=run, name=f"rods-tool-{getattr(method, '__name__', 'call')}", daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(worker.ident or 0), ctypes.py_object(ToolTimeout))
        worker.join(1.0)
        raise ToolTimeout(f"{getattr(method, '__name__', 'tool')} ran past its time limit of {limit:g} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def time_limit(klass: type) -> float:
    return float(getattr(klass, "tool_time_limit", DEFAULT_TIME_LIMIT))


def result_text(value: Any) -> str:
    """A tool's return value as the model reads it: text as is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(to_json(value), ensure_ascii=False)


def to_json(value: Any, _path: frozenset[int] = frozenset()) -> Any:
    """Plain JSON data for any state or result: pydantic models and dataclasses dumped,
    objects as their public attributes, sets sorted, a reference back up the tree cut."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if id(value) in _path:
        return f"<cycle: {type(value).__name__}>"
    inner = _path | {id(value)}
    if isinstance(value, Mapping):
        return {str(k): to_json(v, inner) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v, inner) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((to_json(v, inner) for v in value), key=lambda v: json.dumps(v, sort_keys=True, default=str))
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")  # already plain JSON data
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_json({f.name: getattr(value, f.name) for f in dataclasses.fields(value)}, inner)
    if hasattr(value, "__dict__") and not callable(value):
        return {k: to_json(v, inner) for k, v in vars(value).items() if not k.startswith("_")}
    return repr(value)
