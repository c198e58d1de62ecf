"""What `rods envs check` (`rods.envs.check`) runs and reads: calls drawn from tool schemas, results that read as
errors, where two states differ, and state that JSON cannot hold.

Nothing here runs a tool. Drawn calls take their values from the state where a
parameter's name matches a field or an id-keyed map of it (`book_id` -> the keys
of `books`), so they reach the code past its lookups, and from nowhere
(`probe-1234`) half of the time, so they also reach its "not found" paths.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from typing import Any

# -- calls drawn from schemas ------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _norm(name: str) -> str:
    """A name with case and separators dropped (`bookId`, `book_id` -> `bookid`)."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


@dataclass
class StateValues:
    """A state's scalar values by the field that holds them, and the keys of its id-keyed maps by map name."""

    by_field: dict[str, list[Any]] = field(default_factory=dict)
    ids: dict[str, list[Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, snapshot: Any) -> StateValues:
        """The values of a snapshot (JSON data): a key that holds a record or a list is an id of its map
        (`orders/o1001`), a key that holds a scalar names a field (`balance`), as `json_leaves` reads them."""
        values = cls()
        stack: list[tuple[str, Any]] = [("", snapshot)]
        while stack:
            name, node = stack.pop()
            if isinstance(node, dict):
                for key, value in node.items():
                    if isinstance(value, dict | list):
                        values.ids.setdefault(_norm(name), []).append(key)
                        stack.append((str(key), value))
                    else:
                        values.by_field.setdefault(_norm(str(key)), []).append(value)
            elif isinstance(node, list):
                for value in node:
                    if isinstance(value, dict | list):
                        stack.append((name, value))
                    else:
                        values.by_field.setdefault(_norm(name), []).append(value)
        return values

    def for_parameter(self, name: str, kind: str) -> list[Any]:
        """Values of the state a parameter could mean: its own field's, else the ids of a map named after it."""
        key = _norm(name)
        found = list(self.by_field.get(key, []))
        stem = re.sub(r"(ids?|names?|numbers?|keys?)$", "", key) or key
        for owner, ids in self.ids.items():
            if owner and (owner.rstrip("s") == stem.rstrip("s") or owner == key):
                found += ids
        return [v for v in found if _fits(v, kind)]


def _fits(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    return kind == "string" and isinstance(value, str)


def _kind(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    return kind if isinstance(kind, str) else "string"


def draw_value(schema: Any, name: str, rng: random.Random, values: StateValues, fresh: bool, depth: int = 0) -> Any:
    """One value for a parameter: from its enum, else the state (unless `fresh`), else made up for its type."""
    schema = schema if isinstance(schema, Mapping) else {}
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    for union in ("anyOf", "oneOf"):
        options = [o for o in schema.get(union) or [] if isinstance(o, Mapping) and o.get("type") != "null"]
        if options:
            return draw_value(rng.choice(options), name, rng, values, fresh, depth)
    kind = _kind(schema)
    known = [] if fresh else values.for_parameter(name, kind)
    if known:
        return rng.choice(known)
    if kind == "integer":
        return rng.randint(0, 9)
    if kind == "number":
        return round(rng.uniform(0, 100), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "array":
        return [] if depth > 2 else [draw_value(schema.get("items"), name, rng, values, fresh, depth + 1)]
    if kind == "object":
        if depth > 2:
            return {}
        return draw_arguments(schema, rng, values, fresh, depth + 1)
    return f"probe-{rng.randrange(10_000)}"


def draw_arguments(schema: Mapping[str, Any], rng: random.Random, values: StateValues, fresh: bool,
                   depth: int = 0) -> dict[str, Any]:
    """Arguments for an object schema: every required parameter, each optional one a third of the time."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    return {name: draw_value(sub, name, rng, values, fresh, depth)
            for name, sub in properties.items() if name in required or rng.random() < 1 / 3}


# -- results that read as errors ----------------------------------------------------------------------------

#: Words an error message uses.
ERROR_WORDS = re.compile(
    r"\b(errors?|exception|traceback|not found|invalid|failed|failure|does not exist|doesn't exist|no such"
    r"|not allowed|not permitted|denied|unable to|cannot|can't|could not|couldn't|insufficient|unauthori[sz]ed"
    r"|forbidden)\b",
    re.IGNORECASE,
)
#: Keys of a JSON result whose text is a message about the call, not data (`message`, `error_detail`, `status`).
MESSAGE_KEYS = re.compile(r"error|exception|message|msg|^(status|details?|reason|result|outcome)$", re.IGNORECASE)
#: An error message says so at once: an error word further into a text is taken for data (a manual's prose).
LEAD = 120


def _strings(value: Any) -> Iterable[str]:
    """Every string of a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def _messages(value: Any, top: bool = True) -> Iterable[str]:
    """The texts of a result that speak about the call: a plain result, a JSON string, the strings of a JSON
    list, and the values under message keys (`MESSAGE_KEYS`) at any depth; never the data under other keys."""
    if isinstance(value, str):
        if top:
            yield value
    elif isinstance(value, list):
        for item in value:
            yield from _messages(item, top)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item) if MESSAGE_KEYS.search(str(key)) else _messages(item, top=False)


def state_strings(snapshot: Any) -> set[str]:
    """The strings of a state (keys and values) that hold an error word: data a result may echo."""
    return {s for s in _strings(snapshot) if ERROR_WORDS.search(s)}


def error_words(result: str, echoed: Iterable[str] = ()) -> str | None:
    """The error word a result opens a message with (`_messages`, first `LEAD` characters), outside the strings
    it echoes (the state's, the call's), or None.

    A JSON result is read string by string, so escaping cannot hide an echoed string.
    """
    if not ERROR_WORDS.search(result):
        return None
    try:
        parsed = json.loads(result)
    except (ValueError, RecursionError):
        parsed = result
    echoed = sorted({e for e in echoed if e}, key=len, reverse=True)
    for text in _messages(parsed):
        for known in echoed:
            if known in text:
                text = text.replace(known, " " * len(known))
        found = ERROR_WORDS.search(text[:LEAD])
        if found:
            return found.group(0)
    return None


# -- comparing and reading states ---------------------------------------------------------------------------

_ABSENT = object()


def first_difference(a: Any, b: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """(path, value in a, value in b) of the first place two JSON states differ, or None if they are equal.

    Equal parts are skipped by `==` (C speed), so only the path to the difference is walked.
    """
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in [*a, *(k for k in b if k not in a)]:
            x, y = a.get(key, _ABSENT), b.get(key, _ABSENT)
            if x is _ABSENT or y is _ABSENT or x != y:
                return first_difference(x, y, f"{path}/{key}")
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return first_difference(x, y, f"{path}/{i}")
        return None
    return None if a == b else (path or "/", a, b)


def short(value: Any, limit: int = 60) -> str:
    """A value in a message: JSON, cut to `limit` characters."""
    if value is _ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, default=repr) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def texts_apart(a: str, b: str, width: int = 40) -> str:
    """Where two texts part, in a message: `'...abc' / '...abd'` from a few characters before the first difference."""
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(0, at - 10)
    cut = (lambda t: ("..." if start else "") + t[start:start + width] + ("..." if len(t) > start + width else ""))
    return f"{cut(a)!r} / {cut(b)!r}"


def clip(text: str, limit: int = 100) -> str:
    """A call's text in a message, cut to `limit` characters."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_difference(a: Any, b: Any) -> str:
    """Where two states differ, in a few words (`/books/bk-1/lent_to: null -> 'Ann'`)."""
    found = first_difference(a, b)
    if found is None:
        return "no difference"
    path, x, y = found
    return f"{path}: {short(x)} -> {short(y)}"


def not_json(value: Any, path: str = "", _seen: frozenset[int] = frozenset()) -> list[tuple[str, str]]:
    """(path, why) for each part of a live state that JSON cannot hold faithfully.

    Plain data, tuples and sets, dataclasses, pydantic models and objects (read as their public
    attributes) are fine; what the snapshot could only hold as its `repr` (dates, functions,
    objects without attributes), an enum member (its attributes are all private), a NaN or an
    infinity (unequal to itself, or not JSON) and a dict key that is not text or a number are not.
    """
    if value is None or isinstance(value, bool | int | str):
        return []
    if isinstance(value, float):
        return [] if math.isfinite(value) else [(path or "/", f"{value}, not a JSON number")]
    if id(value) in _seen:  # a reference back up the tree (a parent link): the snapshot cuts it
        return []
    seen = _seen | {id(value)}
    if isinstance(value, Mapping):
        found = [(f"{path}/{k!r}", f"a {type(k).__name__} key") for k in value
                 if not isinstance(k, str | int) or isinstance(k, bool)]
        return found + [p for k, v in value.items() for p in not_json(v, f"{path}/{k}", seen)]
    if isinstance(value, list | tuple | set | frozenset):
        return [p for i, v in enumerate(value) for p in not_json(v, f"{path}/{i}", seen)]
    if isinstance(value, Enum):
        return [(path or "/", f"an enum member {value!r}")]
    if hasattr(value, "model_dump"):  # pydantic: its own JSON form
        return []
    if hasattr(value, "__dict__") and not callable(value) and not isinstance(value, type):
        return [p for k, v in vars(value).items() if not k.startswith("_") for p in not_json(v, f"{path}.{k}", seen)]
    return [(path or "/", f"a {type(value).__name__} (the snapshot holds only its repr)")]
