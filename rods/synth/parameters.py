"""What a parameter's name and spec say it asks for (docs/design.md §4.3).

A parameter's role is read from the pieces of its name (`file_name` -> file, name; `fuelAmount` -> fuel,
amount), from its JSON type and enum, and from its description where the name may mislead (`cp`'s
`destination` is "the destination name to copy the file or directory to", not a place). The argument
proposer (:mod:`rods.synth.arguments`), the planner and the coherence rules read roles from here.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

#: Parameter-name pieces that ask for a container (directory) or a plain entry (file).
CONTAINER_WORDS = {"dir", "folder", "directory"}
ENTRY_WORDS = {"file"}

#: Parameter-name pieces of a credential.
SECRET_WORDS = {"token", "secret", "password", "key", "pin", "passcode"}
#: Parameter-name pieces that ask for a count of things (a person asks for a few, not for 299).
COUNT_WORDS = {"quantity", "count", "copies", "units", "times", "qty", "pieces"}
#: Parameter-name pieces of how many digits a number is given to (a person asks for 2, not for 34).
PRECISION_WORDS = {"precision", "decimal", "digit"}
#: Parameter-name pieces that say "free text the user writes".
TEXT_WORDS = {"content", "message", "comment", "title", "description", "resolution", "keyword", "pattern", "messages",
              "summary", "note", "body"}
#: ... of those, the ones a person fills with a sentence (a title or a search pattern is a few words).
SENTENCE_WORDS = TEXT_WORDS - {"title", "keyword", "pattern"}
#: Parameter-name pieces too generic to match state keys on.
GENERIC = {"id", "name", "the", "of", "to", "a", "s", "new", "value"}
#: Parameter-name pieces that ask for a name or id: no spaces, no line breaks, short.
NAMING_WORDS = CONTAINER_WORDS | ENTRY_WORDS | {"id", "name", "source", "destination", "symbol", "stock", "user"}

#: The pieces a dict key of the state stands for: a key (`orders/12446#key`) answers an id, a key or a name.
KEY_TOKENS = frozenset({"id", "key", "name"})
_ENUM = re.compile(r"\[Enum\]:\s*(\[[^\]]*\])")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


@lru_cache(maxsize=65536)
def name_words(name: str) -> list[str]:
    """`total_baggages` / `fuelAmount` / `orders/12#key` -> their words in order, lower case."""
    return [w.lower() for w in re.split(r"[^A-Za-z]+", _CAMEL.sub(" ", name)) if w]


def tokens(name: str) -> frozenset[str]:
    """`file_name` / `fuelAmount` / `orders/12#key` -> their word pieces, lower case, plural s dropped."""
    return frozenset(w.rstrip("s") or w for w in name_words(name))


#: Description words that say a parameter names an entry of a file system.
PATH_WORDS = frozenset({"file", "directory", "folder", "path"})
_ZIP = re.compile(r"\bzip ?codes?\b|\bpostal codes?\b", re.I)


def described_as(spec: dict[str, Any]) -> str | None:
    """What a parameter's description says it holds where its name may mislead: "zipcode" (`cityA`, "The
    zipcode of the first city") or "path" (`destination`, "The destination name to copy the file or directory
    to"): a city is no value for either. None when the description says neither."""
    text = str(spec.get("description", ""))
    if _ZIP.search(text):
        return "zipcode"
    if set(re.findall(r"[a-z]+", text.lower())) & PATH_WORDS:
        return "path"
    return None


_NEW = re.compile(r"\b(?:name|title|id) (?:of|for) (?:the|a) new\b", re.I)


def names_a_new_thing(name: str, spec: dict[str, Any]) -> bool:
    """Whether a parameter names the thing its call creates: its name starts with "new" (`new_name`) or its
    description says so (`touch`'s `file_name`: "The name of the new file"). An existing name is no value
    for it: the call fails, or overwrites."""
    words = name_words(name)
    return (bool(words) and words[0] == "new") or bool(_NEW.search(str(spec.get("description", ""))))


def enum_values(spec: dict[str, Any]) -> list[Any]:
    """The enum of a parameter: a JSON-schema `enum`, or BFCL's "[Enum]: [...]" in the description."""
    if isinstance(spec.get("enum"), list):
        return list(spec["enum"])
    items = spec.get("items") if isinstance(spec.get("items"), dict) else {}
    for text in (spec.get("description", ""), items.get("description", "")):
        found = _ENUM.search(text or "")
        if found:
            return re.findall(r'"([^"]*)"', found.group(1))
    return []


def is_count(name: str) -> bool:
    """Whether an integer parameter counts things: a count word (`quantity`), or a plural noun at its end
    (`total_baggages`, `nights`; not `address`, `radius`)."""
    last = (name_words(name) or [""])[-1]
    plural = len(last) > 3 and last.endswith("s") and not last.endswith(("ss", "us", "is"))
    return bool(tokens(name) & COUNT_WORDS) or plural


def fits_type(value: Any, kind: str) -> bool:
    """Whether a scalar can be passed to a parameter of JSON type `kind`."""
    if isinstance(value, bool):
        return kind == "boolean"
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int)
    if kind in ("number", "float"):
        return isinstance(value, (int, float))
    return False
