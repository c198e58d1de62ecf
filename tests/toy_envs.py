"""Small Python environments for the tests (importable as `toy_envs:<Class>` through pytest's pythonpath)."""

from __future__ import annotations

import threading
import time
from typing import ClassVar, Literal

from pydantic import BaseModel

from rods.envs import Environment, ToolSpec, tool
from rods.envs.protocol import ERROR_PREFIX


class Book(BaseModel):
    notes: dict[str, str] = {}


class Notebook:
    """Notes under titles; a pydantic model holds them."""

    tool_time_limit: ClassVar[float] = 0.5
    volatile_state: ClassVar[tuple[str, ...]] = ("last_seen",)

    def __init__(self) -> None:
        self.book = Book()
        self.last_seen = 0.0

    @tool("write")
    def add_note(self, title: str, text: str) -> str:
        """Save a note under a title.

        Args:
            title: the note's title
            text: what the note says
        """
        if title in self.book.notes:
            raise ValueError(f"a note called {title!r} exists")
        self.book.notes[title] = text
        return "saved"

    @tool("read")
    def list_notes(self, order: Literal["asc", "desc"] = "asc") -> list[str]:
        """The titles of all notes."""
        self.last_seen = time.time()
        return sorted(self.book.notes, reverse=order == "desc")

    @tool("read")
    def read_note(self, title: str) -> Book:
        """One note, as a one-note book."""
        return Book(notes={title: self.book.notes[title]})

    def spin(self) -> int:
        """Never returns (for the time limit)."""
        n = 0
        while True:
            n += 1

    def _secret(self) -> str:
        return "private"


class Counter:
    """A counter loaded through `_reset`, with a seeded start."""

    def __init__(self) -> None:
        self.value = 0
        self.seed: int | None = None

    def _reset(self, config: dict, seed: int | None) -> None:
        self.value = int(config.get("start", 0))
        self.seed = seed

    @tool("write")
    def increment(self, by: int = 1) -> int:
        """Add to the counter."""
        self.value += by
        return self.value


class Shelf(Environment):
    """An environment that only speaks the protocol and cannot be pickled (hosted by replay)."""

    starts = 0  # environments built in this process (each replay builds one)

    def __init__(self) -> None:
        self._items: dict[str, int] = {}
        self._lock = threading.Lock()  # unpicklable on purpose
        Shelf.starts += 1

    def tools(self) -> list[ToolSpec]:
        put = {"type": "object", "properties": {"item": {"type": "string"}, "count": {"type": "integer"}},
               "required": ["item", "count"]}
        return [ToolSpec("put", "Put items on the shelf.", put, "write", "Shelf"),
                ToolSpec("count", "How many of an item.", {"type": "object", "properties": {
                    "item": {"type": "string"}}, "required": ["item"]}, "read", "Shelf")]

    def reset(self, initial_config, seed=None) -> None:
        self._items = dict(initial_config.get("toy_envs:Shelf", {}).get("items", {}))

    def call(self, name, arguments) -> str:
        if name == "put":
            if arguments.get("count", 0) <= 0:
                return ERROR_PREFIX + "count must be positive"
            self._items[arguments["item"]] = self._items.get(arguments["item"], 0) + arguments["count"]
            return "ok"
        if name == "count":
            return str(self._items.get(arguments["item"], 0))
        return ERROR_PREFIX + f"name '{name}' is not defined"

    def snapshot(self):
        return {"items": dict(sorted(self._items.items()))}
