"""Python environments: a user's class as an environment (docs/design.md §2.2).

A class becomes an environment as it is: its public methods are the tools
(names, type hints and docstrings give the schema), its public attributes (or
pydantic models among them) are the state, and each rollout gets its own
instance. `@tool("read")` / `@tool("write")` says whether a tool may change
the state; an undecorated public method is a tool whose effect is seen in
executions.

    class Notes:
        def __init__(self) -> None:
            self.notes: dict[str, str] = {}

        @tool("write")
        def add_note(self, title: str, text: str) -> str:
            '''Save a note under a title.'''
            self.notes[title] = text
            return "saved"

A task names such an environment by its import path (`"package.module:Notes"`,
`Task.environment`); `initial_config[path]` loads an instance: through the
class's `_reset(config, seed)` if it has one, else by setting the public
attributes it names (pydantic-typed ones validated). Calls run under a time
limit (`tool_time_limit`, a class attribute, default `DEFAULT_TIME_LIMIT`
seconds); results that are not text are sent as JSON.
"""

from __future__ import annotations

import ctypes
import dataclasses
import importlib
import inspect
import json
import threading
import typing
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, TypeVar, overload

from rods.envs.protocol import EFFECTS, Effect

F = TypeVar("F", bound=Callable[..., Any])

#: The attribute `tool` sets on a method.
EFFECT_ATTRIBUTE = "__rods_effect__"


@overload
def tool(effect: F) -> F: ...
@overload
def tool(effect: Effect = "unknown") -> Callable[[F], F]: ...


def tool(effect: Any = "unknown") -> Any:
    """Mark a method as a tool that reads (`"read"`) or may write (`"write"`) the state.

    Usable bare (`@tool`, effect seen in executions) or with the effect (`@tool("read")`).
    """
    if callable(effect):
        return tool("unknown")(effect)
    if effect not in EFFECTS:
        raise ValueError(f"@tool effect must be one of {EFFECTS}, not {effect!r}")

    def mark(fn: F) -> F:
        setattr(fn, EFFECT_ATTRIBUTE, effect)
        return fn

    return mark


def declared_effect(method: Any) -> Effect:
    """The effect `@tool` declared on a (bound or plain) method, else "unknown"."""
    fn = getattr(method, "__func__", method)
    effect: Effect = getattr(fn, EFFECT_ATTRIBUTE, "unknown")
    return effect


#: Seconds a tool call may run before it is stopped (a class may set `tool_time_limit`).
DEFAULT_TIME_LIMIT = 10.0
#: A class attribute naming public attributes that are not part of the state (timestamps, caches).
VOLATILE_ATTRIBUTE = "volatile_state"


@cache
def load_class(path: str) -> type:
    """The class an import path `package.module:ClassName` names; a clear error if there is none."""
    module_name, _, name = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ValueError(f"environment {path!r}: cannot import module {module_name!r}: {err}") from err
    klass = getattr(module, name, None)
    if not isinstance(klass, type):
        raise ValueError(f"environment {path!r}: {module_name} has no class {name!r}")
    return klass


@cache
def tool_methods(klass: type) -> tuple[str, ...]:
    """The tools of a class: its public plain methods (inherited ones too, `object`'s excluded)."""
    names = []
    for name in dir(klass):
        if name.startswith("_"):
            continue
        attr = inspect.getattr_static(klass, name)
        if inspect.isfunction(attr):
            names.append(name)
    return tuple(names)


def load_instance(klass: type, config: Mapping[str, Any], seed: int | None = None) -> Any:
    """A new instance in the state a task's `initial_config` entry describes."""
    instance = klass()
    reset = getattr(instance, "_reset", None)
    if callable(reset):
        reset(dict(config), seed)
        return instance
    for key, value in config.items():
        if key.startswith("_") or key not in vars(instance):
            raise ValueError(f"{klass.__name__}: initial_config sets {key!r}, which is not a public attribute")
        current = getattr(instance, key)
        if hasattr(type(current), "model_validate"):  # a pydantic model: validate into its own type
            value = type(current).model_validate(value)
        setattr(instance, key, value)
    return instance


def volatile(klass: type) -> frozenset[str]:
    """The public attributes a class declares volatile (left out of its state)."""
    return frozenset(getattr(klass, VOLATILE_ATTRIBUTE, ()))


# -- schemas ------------------------------------------------------------------


def tool_docs(klass: type) -> list[dict[str, Any]]:
    """The tools of a class as function docs (BFCL's doc shape, JSON-schema types, plus "effect")."""
    return [_tool_doc(klass, name) for name in tool_methods(klass)]


def _tool_doc(klass: type, name: str) -> dict[str, Any]:
    from pydantic import TypeAdapter

    fn = inspect.getattr_static(klass, name)
    doc = _parse_docstring(fn)
    try:
        hints = typing.get_type_hints(fn)
    except Exception as err:  # an unresolvable annotation is the class author's error: name it
        raise ValueError(f"{klass.__name__}.{name}: cannot read its type hints: {err}") from err
    properties: dict[str, Any] = {}
    required: list[str] = []
    defs: dict[str, Any] = {}
    for param in list(inspect.signature(fn).parameters.values())[1:]:  # skip self
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        schema: dict[str, Any] = {}
        if param.name in hints:
            schema = TypeAdapter(hints[param.name]).json_schema(ref_template="#/$defs/{model}")
            defs.update(schema.pop("$defs", {}))
        if doc["params"].get(param.name):
            schema["description"] = doc["params"][param.name]
        if param.default is param.empty:
            required.append(param.name)
        else:
            schema.setdefault("default", _json_default(param.default))
        properties[param.name] = schema
    parameters: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    if defs:
        parameters["$defs"] = defs
    return {
        "name": name,
        "description": doc["description"] or name.replace("_", " "),
        "parameters": parameters,
        "effect": declared_effect(fn),
    }


def _parse_docstring(fn: Any) -> dict[str, Any]:
    import docstring_parser

    parsed = docstring_parser.parse(inspect.getdoc(fn) or "")
    text = "\n\n".join(p for p in (parsed.short_description, parsed.long_description) if p)
    return {"description": text.strip(), "params": {p.arg_name: (p.description or "").strip() for p in parsed.params}}


def _json_default(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


# -- running a tool -------------------------------------------------------------


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
