"""Environments that each break one rule `rods envs check` checks (importable as `broken_envs:<Class>`).

Each is the small lending library of `examples/byo_env` with one mistake a user
could make; `Library` is the one without a mistake, to show the checks pass on it.
"""

from __future__ import annotations

import datetime
import random
from collections.abc import Mapping
from typing import Any, ClassVar

from rods.envs import Environment, ToolSpec, tool
from rods.envs.protocol import ERROR_PREFIX

BOOKS = {
    "bk-1": {"title": "The Salt Road", "author": "Ines Moreau", "lent_to": None},
    "bk-2": {"title": "Tidal Clocks", "author": "Kofi Mensah", "lent_to": None},
}


class Library:
    """Books by id, lent to members (the checks' control: no mistake)."""

    def __init__(self) -> None:
        self.books: dict[str, dict] = {}

    @tool("read")
    def book_details(self, book_id: str) -> dict:
        """Title, author and borrower of one book."""
        return {"book_id": book_id, **self.books[book_id]}

    @tool("write")
    def lend_book(self, book_id: str, member: str) -> str:
        """Hand a book to a member."""
        if self.books[book_id]["lent_to"]:
            raise ValueError(f"{book_id} is out")
        self.books[book_id]["lent_to"] = member
        return f"{book_id} lent to {member}"


class ReadThatWrites(Library):
    """`book_details` is marked read but counts views in the public state."""

    def __init__(self) -> None:
        super().__init__()
        self.views: dict[str, int] = {}

    @tool("read")
    def book_details(self, book_id: str) -> dict:
        """Title, author and borrower of one book."""
        self.views[book_id] = self.views.get(book_id, 0) + 1
        return {"book_id": book_id, **self.books[book_id]}


class DatedLoans(Library):
    """Remembers due dates as `datetime.date` objects: the snapshot can hold only their repr."""

    def __init__(self) -> None:
        super().__init__()
        self.due: dict[str, datetime.date] = {}

    @tool("write")
    def lend_book(self, book_id: str, member: str) -> str:
        """Hand a book to a member for two weeks."""
        result = super().lend_book(book_id, member)
        self.due[book_id] = datetime.date(2024, 5, 1) + datetime.timedelta(days=14)
        return result


class Ratings(Library):
    """Keeps an unrated book's score as NaN, which JSON cannot hold and which is not equal to itself."""

    def __init__(self) -> None:
        super().__init__()
        self.scores: dict[str, float] = {"bk-1": float("nan")}


class LuckyDraw(Library):
    """Draws a session token at construction from the process's random numbers: no two loads agree."""

    def __init__(self) -> None:
        super().__init__()
        self.session = random.Random().getrandbits(64)


class RandomIds(Library):
    """Gives new members ids from unseeded random numbers: the same calls end in different states."""

    def __init__(self) -> None:
        super().__init__()
        self.members: dict[str, str] = {}

    @tool("write")
    def add_member(self, name: str) -> str:
        """Register a member; their new id."""
        member_id = f"m-{random.Random().randrange(10**6)}"
        self.members[member_id] = name
        return member_id


class QuietMisses(Library):
    """Answers a missing book with a sentence instead of an error: its failures read as successes."""

    @tool("read")
    def book_details(self, book_id: str) -> Any:
        """Title, author and borrower of one book."""
        if book_id not in self.books:
            return f"Book {book_id} not found."
        return {"book_id": book_id, **self.books[book_id]}

    @tool("write")
    def lend_book(self, book_id: str, member: str) -> str:
        """Hand a book to a member."""
        if book_id not in self.books:
            return "Error: no such book."
        return super().lend_book(book_id, member)


class PrivateLoans(Library):
    """`lend_book` is marked write but records loans in a private attribute: the state never changes."""

    def __init__(self) -> None:
        super().__init__()
        self._loans: dict[str, str] = {}

    @tool("write")
    def lend_book(self, book_id: str, member: str) -> str:
        """Hand a book to a member."""
        self._loans[book_id] = member
        return f"{book_id} lent to {member}"


class Reminders(Library):
    """Keeps a reminder per loan as a function: the state cannot be copied once a book is lent."""

    def __init__(self) -> None:
        super().__init__()
        self.reminders: dict[str, Any] = {}

    @tool("write")
    def lend_book(self, book_id: str, member: str) -> str:
        """Hand a book to a member, with a reminder to bring it back."""
        result = super().lend_book(book_id, member)
        self.reminders[book_id] = lambda: f"{member}, please return {book_id}"
        return result


class Singleton(Library):
    """One instance per process (`__new__` hands it out again): every copy, fork or rollout is the same object."""

    _instance: ClassVar[Singleton | None] = None

    def __new__(cls) -> Singleton:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance


class Catalogue:
    """Built from its books; the constructor derives an author index and the next id (constructor-style)."""

    def __init__(self, books: dict[str, dict] | None = None) -> None:
        self.books = dict(books or {})
        self._by_author: dict[str, list[str]] = {}
        for book_id, book in sorted(self.books.items()):
            self._by_author.setdefault(book["author"], []).append(book_id)
        self._next_id = len(self.books) + 1

    @tool("read")
    def books_by(self, author: str) -> list[str]:
        """The ids of an author's books."""
        return self._by_author.get(author, [])

    @tool("write")
    def add_book(self, title: str, author: str) -> str:
        """Add a book; its new id."""
        book_id = f"bk-{self._next_id}"
        self._next_id += 1
        self.books[book_id] = {"title": title, "author": author, "lent_to": None}
        self._by_author.setdefault(author, []).append(book_id)
        return book_id


class ResetCatalogue(Catalogue):
    """A `_reset` hook that sets the books but forgets what the constructor derives from them."""

    def _reset(self, config: dict[str, Any], seed: int | None) -> None:
        self.books = dict(config.get("books", {}))


# -- protocol-only environments (hosted by replay) -----------------------------------------------------------

COUNTER_TOOLS = [
    ToolSpec("increment", "Add one to a counter.",
             {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}, effect="write"),
    ToolSpec("read_counter", "A counter's value.",
             {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}, effect="read"),
]


class Counters(Environment):
    """Named counters, kept by each instance (a protocol environment without a mistake)."""

    def tools(self) -> list[ToolSpec]:
        return list(COUNTER_TOOLS)

    def reset(self, initial_config: Mapping[str, Any], seed: int | None = None) -> None:
        self.counts = dict(dict(initial_config.get(type(self).key(), {})).get("counts", {}))

    @classmethod
    def key(cls) -> str:
        return f"broken_envs:{cls.__name__}"

    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        if name not in ("increment", "read_counter"):
            return f"{ERROR_PREFIX}no tool {name}"
        if "name" not in arguments:
            return f"{ERROR_PREFIX}{name} needs a name"
        if name == "increment":
            self.counts[arguments["name"]] = self.counts.get(arguments["name"], 0) + 1
        return str(self.counts.get(arguments["name"], 0))

    def snapshot(self) -> Any:
        return {"counts": dict(self.counts)}


class SharedCounter(Counters):
    """Counters kept in a class attribute: every instance (every fork, every rollout) shares one dict."""

    shared: ClassVar[dict[str, int]] = {}

    def reset(self, initial_config: Mapping[str, Any], seed: int | None = None) -> None:
        self.counts = self.shared  # the class's dict, not a copy
        self.counts.clear()
        self.counts.update(dict(initial_config.get(self.key(), {})).get("counts", {}))


class Forgiving(Counters):
    """Runs a call with a missing argument anyway (a default of its own) and says it went well."""

    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        return super().call(name, {"name": "default", **arguments})


class StringSchema(Counters):
    """Declares a tool whose parameters are a string schema, not an object."""

    def tools(self) -> list[ToolSpec]:
        return [*COUNTER_TOOLS, ToolSpec("note", "Keep a note.", {"type": "string"}, effect="write")]
