"""Python environments for the validation and loading tests (importable as `validation_envs:<Class>`).

`Desk` is written as users write classes: its constructor takes the initial
state as keyword arguments and derives more from it (who borrowed what, the
next member id), errors come back as `{"error": ...}` objects or exceptions,
and it declares one convention of its own (`rods_error`). `Lottery` and
`Stamper` are not deterministic, in their results and in their state.
"""

from __future__ import annotations

import random
from typing import Any

from rods.envs import tool


class Desk:
    """A library desk: books by id, members by id, who borrowed what."""

    def __init__(self, books: dict[str, dict[str, Any]] | None = None, members: dict[str, str] | None = None) -> None:
        self.books = books or {}  # book id -> {"title", "lent_to": member id or None}
        self.members = members or {}  # member id -> name
        # derived: per member, the books they have; the next member id
        self.borrowed = {m: sorted(b for b, v in self.books.items() if v["lent_to"] == m) for m in self.members}
        self._next_member = 1 + max((int(m.split("-")[1]) for m in self.members), default=0)

    @staticmethod
    def rods_error(result: str) -> str | None:
        """The desk's own convention: a refusal is text starting with "refused:"."""
        return result.removeprefix("refused:").strip() if result.startswith("refused:") else None

    @tool("read")
    def book_details(self, book_id: str) -> dict[str, Any]:
        """Title and borrower of one book."""
        if book_id not in self.books:
            return {"error": f"no book {book_id!r}"}
        return {"book_id": book_id, **self.books[book_id]}

    @tool("write")
    def lend_book(self, book_id: str, member_id: str) -> str:
        """Hand a book to a member."""
        book = self.books[book_id]
        if book["lent_to"]:
            raise ValueError(f"{book_id} is out with {book['lent_to']}")
        book["lent_to"] = member_id
        self.borrowed[member_id].append(book_id)
        return f"{book_id} lent to {member_id}"

    @tool("write")
    def add_member(self, name: str) -> dict[str, str]:
        """Register a new member; returns the id they were given."""
        member_id = f"m-{self._next_member}"
        self._next_member += 1
        self.members[member_id] = name
        self.borrowed[member_id] = []
        return {"member_id": member_id}

    @tool("write")
    def renew(self, book_id: str, weeks: int = 2) -> str:
        """Keep a lent book longer."""
        if weeks > 4:
            return "refused: at most 4 weeks"
        return f"{book_id} renewed for {weeks} weeks"


#: The desk's state in a task's `initial_config`.
DESK_STATE = {
    "books": {"b1": {"title": "Salt Road", "lent_to": None}, "b2": {"title": "Tidal Clocks", "lent_to": "m-2"}},
    "members": {"m-1": "Hana Sato", "m-2": "Omar Haddad"},
}


class Lottery:
    """Draws numbers from an unseeded generator: two replays give different results."""

    def __init__(self) -> None:
        self.draws = 0

    @tool("write")
    def draw(self) -> int:
        """Draw a number."""
        self.draws += 1
        return random.randrange(10**9)


class Stamper:
    """Says "stamped" and keeps an unseeded random stamp: two replays end in different states."""

    def __init__(self) -> None:
        self.stamps: list[int] = []

    @tool("write")
    def stamp(self) -> str:
        """Stamp the page."""
        self.stamps.append(random.randrange(10**9))
        return "stamped"
