"""What a seed's value is, before anything re-draws it: kept or distinctive, a sentence, a phrase, filler, the field
of a person or a place; and the walk over a state's slots that every stage of synthesis shares.

What is kept (and therefore not "distinctive"), precisely:

* the environment's vocabulary (`Domain.vocabulary`): the words its code knows
  by name, which the simulator compares against (BFCL's: the short string
  constants of its class sources and its docs' enum values; a Python class's:
  the identifiers of its module, its short string constants, its tools' names,
  parameter names and enum values);
* English function words (``STOPWORDS``), file extensions, words of < 3 letters;
* booleans, None, integers in ``[-10, 10]`` and integral floats in that range.

Everything else (other words, digit runs of >= 3 digits, other numbers) is
distinctive and gets a new value never present in the seed.

`rods.synth.values.ValueRemapper` draws the new values; these say which values it draws and how they are read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from rods.envs.domains import domain_of
from rods.envs.vocabulary import WORD as _WORD

SMALL_INT = 10

STOPWORDS = frozenset(
    """the and for with from into onto that this those these then than have has had was were are
    you your yours our ours its it's not but all any can could would should will shall may might
    about after before over under again also just only very more most some such what when where
    which while who whom why how each other here there them they their his her him she he one two
    three four five six seven eight nine ten out off own same too per via let get got please""".split()
)

EXTENSIONS = frozenset(
    "txt md pdf doc docx csv json jpg jpeg png gif py js java log xml yaml yml html css zip tar gz "
    "xlsx ppt pptx mp3 mp4 wav sh cfg ini bak tmp dat sql".split()
)


def is_kept_word(word: str, vocabulary: frozenset[str]) -> bool:
    """True for a word the remapping keeps (see the module docstring)."""
    if word.isdigit():
        return len(word) < 3 or word in vocabulary
    low = word.lower()
    return len(word) < 3 or low in STOPWORDS or low in EXTENSIONS or low in vocabulary


def vocabulary_of(environment: str) -> frozenset[str]:
    """The words an environment's remapping keeps (`Domain.vocabulary`)."""
    return domain_of(environment).vocabulary(environment)


def is_distinctive(value: Any, vocabulary: frozenset[str]) -> bool:
    """True for a value a variant must not copy from its seed (module docstring); a string is judged
    against its environment's `vocabulary_of` (numbers need none: pass an empty one)."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return not (float(value).is_integer() and abs(value) <= SMALL_INT)
    if isinstance(value, str):
        return any(not is_kept_word(w, vocabulary) for w in _WORD.findall(value))
    return False


#: A name joined of words ("research_notes.txt", "projects-photography"), with its extension.
COMPOUND = re.compile(r"(?P<stem>[A-Za-z]+(?:[_-][A-Za-z]+)+)(?P<ext>\.[A-Za-z0-9]{1,5})?")

#: A sentence: words, numbers and a person's punctuation, no code signs (`_ / = < > { } [ ] \\ |`).
_PROSE = re.compile(r"[A-Za-z0-9 .,;:!?'\"#@&%$()+-]+")


def is_prose(text: Any) -> bool:
    """A sentence a person wrote (three words or more, one line, no code signs, not a proper name): a file's
    text, a message, a post. A statement (`SELECT name FROM t`: it opens with a keyword in capitals), a path,
    a list of ids or a person's name is not."""
    if not is_phrase(text) or PROPER_NAME.fullmatch(text.strip()):
        return False
    words = _WORD.findall(text)
    return sum(w.isalpha() for w in words) >= 3 and len(text.split()) >= 3 \
        and not (len(words[0]) >= 3 and words[0].isupper())


def is_filler(text: Any) -> bool:
    """A text test data holds in place of one a person wrote: one about being a file or sample ("This is a hidden
    file.", "Sample content of file1", "Lorem ipsum ..."). It stays where a seed has it; a variant draws no
    text of its own from it (the fourteenth blind read failed 'This is a hidden file.' written into a roadmap)."""
    return isinstance(text, str) and bool(_FILLER.search(text))


_FILLER = re.compile(r"\b(?:file\d*|files|sample|dummy|placeholder|lorem|ipsum|test(?:ing)?|foo|bar|baz|"
                     r"content|contents|document|text)\b", re.IGNORECASE)


#: Name pieces of a field or parameter that holds a person's name (`author`, `lent_to`, `member`, `first_name`).
PERSON_WORDS = frozenset({"author", "owner", "member", "customer", "person", "first", "last", "surname", "recipient",
                          "sender", "borrower", "passenger", "guest", "employee", "manager", "contact", "lent",
                          "holder", "cardholder", "traveler", "traveller", "patient", "student", "teacher", "friend",
                          "colleague", "assignee", "reviewer", "buyer", "seller"})
#: Name pieces of a field or parameter that holds a place (`city`, `destination`).
PLACE_WORDS = frozenset({"city", "destination", "origin", "location", "address", "place", "town", "country"})
#: A proper name: two or three capitalised words (`Hana Sato`, `Ines de Moreau` is not one).
PROPER_NAME = re.compile(r"[A-Z][a-z]+(?: [A-Z][a-z]+){1,2}")


def is_fraction(text: str) -> bool:
    """'1/2', '3/4': a proper fraction of small numbers (a size or a share), not a date or a code."""
    top, slash, bottom = text.partition("/")
    return bool(slash) and top.isdigit() and bottom.isdigit() and 0 < int(top) < int(bottom) <= 16


def is_phrase(text: Any) -> bool:
    """Two words or more a person wrote, on one line, no code signs: a title, a name, a list of capitalised
    words, a short note or a sentence ("The Kayak Paddle", "Banana Grape Lemon", "Rain data 1")."""
    return isinstance(text, str) and "\n" not in text and _PROSE.fullmatch(text.strip()) is not None \
        and sum(w.isalpha() for w in _WORD.findall(text)) >= 2


def role_of(name: Any) -> str | None:
    """"person", "first", "last" or "place" when a field or parameter name says its values are people's names
    (whole, first or family), or places."""
    if not isinstance(name, str):
        return None
    words = set(re.findall(r"[a-z]+", re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name).lower()))
    if words & {"first", "given"}:
        return "first"
    if words & {"last", "surname", "family"}:
        return "last"
    if words & PERSON_WORDS or (words & {"name"} and words & {"user", "full", "display"}):
        return "person"
    if words & PLACE_WORDS:
        return "place"
    return None


#: A key that names a field: a lower-case identifier, snake_case or camelCase (`copies`, `expiry_date`, `fuelLevel`).
FIELD_KEY = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*|[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+")


def is_field_key(key: Any) -> bool:
    """Whether a key of a record names one of its fields, so a variant keeps it (docs/design.md §4.2).

    A dict whose values are all records or lists is a map (`orders`, a folder's
    contents, `books`): its keys are ids and names, re-drawn like values. In any
    other dict, a key shaped like an identifier is a field name and stays, even
    when the code never reads it by name (a book's `copies`); other keys
    (`Michael`, `12345`, `bk-203`, `notes.txt`) are data.
    """
    return isinstance(key, str) and FIELD_KEY.fullmatch(key) is not None


def leaves(value: Any) -> list[Any]:
    """Scalar leaves of a JSON-like value, dict keys included."""
    out: list[Any] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            out.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, (list, tuple, set)):
            stack.extend(node)
        else:
            out.append(node)
    return out


def field_values(state: Any) -> list[tuple[str, str]]:
    """(field, text) of every string held under a record's field name (`is_field_key`), in lists too."""
    out: list[tuple[str, str]] = []
    stack: list[tuple[Any, str | None]] = [(state, None)]
    while stack:
        node, at = stack.pop()
        if isinstance(node, dict):
            stack.extend((v, k if is_field_key(k) else None) for k, v in node.items())
        elif isinstance(node, (list, tuple)):
            stack.extend((v, at) for v in node)
        elif isinstance(node, str) and at is not None:
            out.append((at, node))
    return out


def state_slots(state: Any, root: str = "") -> Iterator[tuple[str, Any]]:
    """(path, scalar) of every value of a class's state, as a variant re-draws it: an attribute or a record's
    field under its name (`is_field_key`), a map's records and a data-shaped key's value under `*`, a list's items
    under `[]`; the keys of its maps and its data-shaped keys (ids, names) themselves at `.../#key`."""
    stack: list[tuple[str, Any, bool]] = [(root, state, True)]
    while stack:
        path, node, top = stack.pop()
        if isinstance(node, dict):
            by_id = not top and bool(node) and all(isinstance(v, (dict, list)) for v in node.values())
            for k, v in node.items():
                keyed = not top and (by_id or not is_field_key(k))
                if keyed:
                    yield f"{path}/#key", k
                stack.append((f"{path}/{'*' if keyed else k}", v, False))
        elif isinstance(node, (list, tuple, set)):
            stack.extend((f"{path}/[]", v, False) for v in node)
        else:
            yield path, node


def config_values(state: Any) -> list[Any]:
    """The values of a class's state that a variant re-draws: scalar leaves, and the keys of its maps and its
    data-shaped keys (ids, names), not its attributes nor its records' field names (`is_field_key`)."""
    return [value for _, value in state_slots(state)]


def config_shape(state: Any) -> frozenset[tuple[str, str]]:
    """(key path, JSON type) of every value of a class's state, the keys a variant re-draws (map keys, data
    keys: `is_field_key`) written `*`: what a variant's state must share with its seed's."""
    return frozenset((path, _json_kind(value)) for path, value in state_slots(state) if not path.endswith("/#key"))


def _json_kind(value: Any) -> str:
    return "null" if value is None else "bool" if isinstance(value, bool) else \
        "number" if isinstance(value, (int, float)) else type(value).__name__


def keyed_dicts(state: Any) -> list[tuple[Any, dict]]:
    """(key, record) of every dict of a state, the whole state first, each with its key in the map that holds it
    (None in a list, and for the state itself)."""
    out: list[tuple[Any, dict]] = []
    stack: list[tuple[Any, Any]] = [(None, state)]
    while stack:
        key, node = stack.pop()
        if isinstance(node, dict):
            out.append((key, node))
            stack.extend(node.items())
        elif isinstance(node, (list, tuple)):
            stack.extend((None, item) for item in node)
    return out


_NUMBERED = re.compile(r"([A-Za-z]*[-_]?)(\d{2,})")


def numbered_series(state: Any) -> dict[str, tuple[frozenset[int], int]]:
    """Digit run -> (the numbers of its series, their width) for every map of `state` keyed by three or more ids of
    one prefix and one width ('INV-0401' ... 'INV-0413', 'FX-301' ... 'FX-307'): an id re-drawn within its series
    takes a number the series leaves free, beside its neighbours (drawn at random, 'INV-0430' stood among
    0401-0413 and 'FX-178' among the FX-10x)."""
    out: dict[str, tuple[frozenset[int], int]] = {}
    for _, node in keyed_dicts(state):
        groups: dict[tuple[str, int], list[str]] = {}
        for key in node:
            match = _NUMBERED.fullmatch(key) if isinstance(key, str) else None
            if match:
                groups.setdefault((match.group(1), len(match.group(2))), []).append(match.group(2))
        for runs in groups.values():
            if len(runs) >= 3:
                numbers = frozenset(int(r) for r in runs)
                out.update((run, (numbers, len(runs[0]))) for run in runs)
    return out
