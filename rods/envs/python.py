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
"""

from __future__ import annotations

from collections.abc import Callable
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
