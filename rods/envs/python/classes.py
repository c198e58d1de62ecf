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
`Task.environment`); `initial_config[path]` loads an instance (`load_instance`):
through the class's `_reset(config, seed)` if it has one, else by calling its
constructor with the config's keys if it takes parameters, else by setting the
public attributes the config names. Calls run under a time limit
(`tool_time_limit`, a class attribute, default 10 seconds);
results that are not text are sent as JSON (`rods.envs.python.running`).
"""

from __future__ import annotations

import importlib
import inspect
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
    """A new instance in the state a task's `initial_config` entry describes.

    Three ways, in this order (docs/design.md §2.2):

    * the class has `_reset(config, seed)`: built with no arguments, then reset;
    * its constructor takes parameters: called with the config's keys as keyword
      arguments, so what it derives from them (indexes, counters) is kept;
    * its constructor takes none: built, then each public attribute the config
      names is set (pydantic-typed ones validated into their type).
    """
    reset = getattr(klass, "_reset", None)
    if callable(reset):
        instance = _construct(klass, {})
        instance._reset(dict(config), seed)
        return instance
    if constructor_parameters(klass):
        return _construct(klass, config)
    instance = _construct(klass, {})
    for key, value in config.items():
        if key.startswith("_") or key not in vars(instance):
            raise ValueError(f"{klass.__name__}: initial_config sets {key!r}, which is not a public attribute")
        current = getattr(instance, key)
        if hasattr(type(current), "model_validate"):  # a pydantic model: validate into its own type
            value = type(current).model_validate(value)
        setattr(instance, key, value)
    return instance


@cache
def constructor_parameters(klass: type) -> tuple[inspect.Parameter, ...]:
    """The parameters of a class's `__init__` after `self` (none for `object`'s)."""
    init = klass.__init__  # type: ignore[misc]
    if init is object.__init__:
        return ()
    try:
        parameters = list(inspect.signature(init).parameters.values())[1:]
    except (TypeError, ValueError):
        return ()
    return tuple(parameters)


def _construct(klass: type, config: Mapping[str, Any]) -> Any:
    """`klass(**config)`, with a clear error when the config does not fit its constructor."""
    parameters = constructor_parameters(klass)
    names = {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    takes_any = any(p.kind == p.VAR_KEYWORD for p in parameters)
    unknown = sorted(k for k in config if k not in names) if not takes_any else []
    missing = sorted(p.name for p in parameters if p.default is p.empty and p.name not in config
                     and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    if unknown:
        raise ValueError(f"{klass.__name__}: initial_config key(s) {unknown} are not parameters of its constructor "
                         f"(it takes {sorted(names)})")
    if missing:
        raise ValueError(f"{klass.__name__}: its constructor needs {missing}, which initial_config does not give")
    try:
        return klass(**config)
    except Exception as err:
        raise ValueError(f"{klass.__name__}: building it from initial_config failed: {type(err).__name__}: {err}") \
            from err


def volatile(klass: type) -> frozenset[str]:
    """The public attributes a class declares volatile (left out of its state)."""
    return frozenset(getattr(klass, VOLATILE_ATTRIBUTE, ()))
