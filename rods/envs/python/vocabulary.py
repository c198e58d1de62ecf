"""A Python environment's vocabulary: the words its code knows, which a variant's values must keep.

The identifiers of the class's module (attribute, field, parameter and class
names: a config must keep them), the short string constants of the class
itself (statuses, kinds, keys), and its tools' names, parameter names and
enum values.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from functools import lru_cache
from typing import Any

from rods.envs.calls import ast_parse, source_of
from rods.envs.vocabulary import enum_words, short_constants, words


@lru_cache(maxsize=32)
def _class_words(klass: type) -> frozenset[str]:
    found: set[str] = set()
    module = inspect.getmodule(klass)
    try:
        source = source_of(module) if module else ""
    except (OSError, TypeError):
        source = ""
    for node in ast.walk(ast_parse(source)):  # identifiers of the module
        for name in (getattr(node, "id", None), getattr(node, "attr", None), getattr(node, "arg", None),
                     getattr(node, "name", None)):
            if isinstance(name, str):
                found |= words(name, split_camel=True)
    for owner in klass.__mro__[:-1]:  # short string constants of the class itself
        try:
            body = ast_parse(textwrap.dedent(source_of(owner)))
        except (OSError, TypeError, SyntaxError):
            continue
        for text in short_constants(body, fstrings=True):
            found |= words(text, split_camel=True)
    return frozenset(found)


def class_vocabulary(klass: type, docs: list[dict[str, Any]]) -> frozenset[str]:
    """The vocabulary of a class whose tools are `docs` (see the module docstring)."""
    found = set(_class_words(klass))
    for doc in docs:
        found |= words(doc["name"], split_camel=True)
        enum_words(doc.get("parameters", {}), found)
        for prop in doc.get("parameters", {}).get("properties", {}):
            found |= words(prop, split_camel=True)
    return frozenset(found)
