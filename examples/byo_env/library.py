"""A small lending library as a rods environment (docs/guides/environments.md)."""

from rods.envs import tool


class Library:
    """Books by id, lent to members; the public attributes are the state."""

    def __init__(self) -> None:
        self.books: dict[str, dict] = {}  # book id -> {"title", "author", "lent_to"}

    @tool("read")
    def search_books(self, author: str) -> list[dict]:
        """Books by an author, with their ids and who has them."""
        return [{"book_id": k, **b} for k, b in sorted(self.books.items()) if author.lower() in b["author"].lower()]

    @tool("read")
    def book_details(self, book_id: str) -> dict:
        """Title, author and borrower of one book."""
        return {"book_id": book_id, **self.books[book_id]}

    @tool("write")
    def lend_book(self, book_id: str, member: str) -> str:
        """Hand a book to a member."""
        if self.books[book_id]["lent_to"]:
            raise ValueError(f"{book_id} is out with {self.books[book_id]['lent_to']}")
        self.books[book_id]["lent_to"] = member
        return f"{book_id} lent to {member}"

    @tool("write")
    def return_book(self, book_id: str) -> str:
        """Take a lent book back."""
        self.books[book_id]["lent_to"] = None
        return f"{book_id} is back"
