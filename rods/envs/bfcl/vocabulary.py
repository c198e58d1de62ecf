"""What BFCL's classes know by name, and what a call can see that the state does not show.

`vocabulary` holds the words of the short string constants of BFCL's class
sources (city names, zip codes, airport codes, order types, statuses, door
names, default stock symbols ...) and the enum values of the function docs:
the simulators only know those, so a variant keeps them. `visible_names`
lists the entries of the file system's current directory (its names are
relative to a private current directory the public state does not show).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from rods.envs.bfcl.docs import all_docs
from rods.envs.calls import ast_parse
from rods.envs.vocabulary import enum_words, short_constants, words
from rods.tasks.bfcl import bfcl_package_dir

#: Modules of filler data, not vocabulary the code compares against.
FILLER = ("long_context.py",)


@lru_cache(maxsize=1)
def vocabulary() -> frozenset[str]:
    """Words the BFCL simulators know by name (see the module docstring)."""
    found: set[str] = set()
    source = bfcl_package_dir() / "eval_checker" / "multi_turn_eval" / "func_source_code"
    for path in source.glob("*.py"):
        if path.name in FILLER:
            continue
        tree = ast_parse(path.read_text(encoding="utf-8"))  # thread-safe: synthesis runs in threads
        for text in short_constants(tree):
            found |= words(text)
    for docs in all_docs().values():
        for doc in docs:
            enum_words(doc, found)
    return frozenset(found)


def visible_names(cls: str, instance: Any) -> list[tuple[str, bool]] | None:
    """(name, is a directory) of the file system's current directory; None for the other classes."""
    if cls != "GorillaFileSystem":
        return None
    current = getattr(instance, "_current_dir", None)
    return sorted((name, hasattr(node, "contents")) for name, node in (getattr(current, "contents", {}) or {}).items())
