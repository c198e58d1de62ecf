"""Free-text arguments (an SQL statement, a commit message) drawn from the seeds' own examples (docs/design.md §4.9).

A parameter whose values are free text cannot be filled with a state value or
a fresh word: `read_query(query=...)` needs a statement the server accepts and
that finds something in *this* state. The seeds of the environment show how
such a text looks. A variant's text is one of those examples with its
*literals* re-drawn:

* a literal is a quoted string (`'lamp'`, `"main"`) or a stand-alone number
  (`15`, `13.5`); everything else (keywords, table and column names, the
  words of a sentence) is the example's skeleton and stays;
* where the seed's state just before the example's call held the literal, its
  place there (the state path with list positions generalized,
  `sqlite/products/rows/*/1`) says what it is: the new literal is a value found
  at that place in the live state (another product name), so a query still
  finds rows;
* a literal the state did not hold (a new customer's name, a new price) gets
  a fresh value: a string's distinctive words re-drawn by the plan's
  `ValueRemapper`, a distinctive number jittered;
* the skeleton's distinctive words are re-drawn too, with one mapping per
  plan, unless they are in capitals (a language's keywords by convention) or
  the seed's environment held them before its calls (table and column names,
  file names): a name the seed made (the table it created, then filled) gets
  one new name in every call of the variant, and a commit message new words.

Nothing here knows SQL or git: the literal syntax is that of most languages
for data, and the state says what each literal means. Examples are read once
per seed (its ground truth run on a fresh environment) and only for the
function and parameter asked for.
"""

from __future__ import annotations

import json
import random
import re
import threading
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from rods.envs.contract import RolloutEnvironment, environment_for
from rods.synth.value_kinds import is_distinctive
from rods.synth.values import ValueRemapper
from rods.tasks.model import Task

#: A quoted string ('' and \" escapes) or a number not glued to a word, a dot or a digit run.
LITERAL = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"\\]|\\.)*\"|(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")

_WORDS = re.compile(r"[A-Za-z_][\w]*")
#: A list position in a state path (a step of digits only).
_POSITION = re.compile(r"(?:^|/)\d+(?=/|$)")

#: Chance of drawing a literal from the live state where the seed's came from the state (else a fresh one).
FROM_STATE = 0.85


def is_free_text(value: Any) -> bool:
    """A string of several words: a statement or a sentence, not a name or an id."""
    return isinstance(value, str) and len(value.split()) >= 2


def place(path: str) -> str:
    """A state path with list positions generalized: `/rows/3/1` -> `/rows/*/1`, `/messages/0` -> `/messages/*`.

    The last position of a list inside a list is a field of a record (a table row's column), so it stays.
    """
    if not _POSITION.search(path):  # most paths of a keyed database hold no position
        return path
    steps = path.split("/")
    last = len(steps) - 1
    return "/".join("*" if s.isdigit() and not (i == last and steps[i - 1].isdigit()) else s
                    for i, s in enumerate(steps))


@dataclass(frozen=True)
class Literal:
    """One literal of an example: where it sits in the text, its value, its quote, its places in the state."""

    start: int
    end: int
    value: str | int | float
    quote: str  # "'" or '"' for a string, "" for a number
    places: frozenset[str]


@dataclass(frozen=True)
class Example:
    """A seed's free-text argument, its literals, and the words its environment already held (kept)."""

    text: str
    literals: tuple[Literal, ...]
    known: frozenset[str] = frozenset()


def literals_of(text: str, places: dict[Any, set[str]]) -> tuple[Literal, ...]:
    """The literals of a text; `places` maps a state value to the places it sits at."""
    out = []
    for m in LITERAL.finditer(text):
        token = m.group(0)
        if token[0] in "'\"":
            quote = token[0]
            value: str | int | float = token[1:-1].replace(quote * 2, quote) if quote == "'" else token[1:-1]
        else:
            quote, value = "", float(token) if "." in token else int(token)
        out.append(Literal(m.start(), m.end(), value, quote, frozenset(places.get(_key(value), ()))))
    return tuple(out)


def _key(value: Any) -> Any:
    """Values compared across types the way a text says them (3 and 3.0 are one literal)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def state_places(env: RolloutEnvironment, owner: str) -> dict[str, list[Any]]:
    """Place -> the scalar values at it, in one class's state (`rods.synth.arguments.snapshot_leaves`)."""
    from rods.synth.arguments import snapshot_leaves

    out: dict[str, list[Any]] = defaultdict(list)
    for path, value in snapshot_leaves(env, owner):
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            out[place(path)].append(value)
    return out


def _values_at(places: dict[str, list[Any]]) -> dict[Any, set[str]]:
    where: dict[Any, set[str]] = defaultdict(set)
    for at, values in places.items():
        for value in values:
            where[_key(value)].add(at)
    return where


def words_of(places: dict[str, list[Any]]) -> frozenset[str]:
    """The words (lower case) of every string and every path step of a state: the names it already has."""
    words = {w.lower() for at in places for w in _WORDS.findall(at)}
    words |= {w.lower() for values in places.values() for v in values if isinstance(v, str) for w in _WORDS.findall(v)}
    return frozenset(words)


_EXAMPLES: dict[str, dict[tuple[str, str], list[Example]]] = {}
_PARAMETERS: dict[str, frozenset[tuple[str, str]]] = {}
_LOCK = threading.Lock()


def _seed_key(seed: Task) -> str:
    return json.dumps([seed.id, seed.initial_config, seed.ground_truth], sort_keys=True, default=str)


def free_text_parameters(seed: Task) -> frozenset[tuple[str, str]]:
    """(function, parameter) pairs the seed's ground truth passes free text to (parsed once per seed)."""
    from rods.synth.profile import parse_ground_truth

    key = _seed_key(seed)
    with _LOCK:
        cached = _PARAMETERS.get(key)
    if cached is None:
        cached = frozenset((c.name, p) for turn in parse_ground_truth(seed) for c in turn
                           for p, v in c.arguments.items() if is_free_text(v))
        with _LOCK:
            _PARAMETERS[key] = cached
    return cached


def examples_of(seed: Task) -> dict[tuple[str, str], list[Example]]:
    """(function, parameter) -> the seed's free-text examples, read once per seed content."""
    from rods.synth.api_graph import function_docs
    from rods.synth.profile import parse_ground_truth

    key = _seed_key(seed)
    with _LOCK:
        cached = _EXAMPLES.get(key)
    if cached is not None:
        return cached
    calls = [c for turn in parse_ground_truth(seed) for c in turn]
    out: dict[tuple[str, str], list[Example]] = defaultdict(list)
    if free_text_parameters(seed):
        owners = {name: doc["class"] for name, doc in function_docs(seed.involved_classes).items()}
        env = environment_for(seed)
        known = {owner: words_of(state_places(env, owner)) for owner in env.involved_classes}
        try:
            for call in calls:
                texts = {p: v for p, v in call.arguments.items() if is_free_text(v)}
                owner = owners.get(call.name)
                if texts and owner is not None:
                    places = _values_at(state_places(env, owner)) if any(LITERAL.search(t) for t in texts.values()) \
                        else {}
                    for param, text in texts.items():
                        out[(call.name, param)].append(Example(text, literals_of(text, places), known[owner]))
                env.execute(call)
        finally:
            env.close()
    with _LOCK:
        _EXAMPLES[key] = dict(out)
    return _EXAMPLES[key]


class FreeText:
    """Free-text values for one plan, from the examples of the given seeds (the plan's own seed first)."""

    def __init__(self, seeds: list[Task], remapper: ValueRemapper, rng: random.Random):
        self.seeds = seeds
        self.remapper = remapper
        self.rng = rng
        self._found: dict[tuple[str, str], tuple[list[Example], list[Example]]] = {}
        self._live: tuple[Any, str, dict[str, list[Any]]] | None = None

    def examples(self, function: str, param: str) -> tuple[list[Example], list[Example]]:
        """(the plan's seed's examples, every seed's) of a parameter; seeds that do not show it are not run."""
        if (function, param) not in self._found:
            shown = [s for s in self.seeds if (function, param) in free_text_parameters(s)]
            own = examples_of(shown[0])[(function, param)] if shown and shown[0] is self.seeds[0] else []
            everyone = [e for s in {s.id: s for s in shown}.values() for e in examples_of(s)[(function, param)]]
            self._found[(function, param)] = (own, everyone)
        return self._found[(function, param)]

    def value(self, function: str, param: str, env: RolloutEnvironment, owner: str | None) -> str | None:
        """A new text for `function(param=...)` in the live state, or None if no seed shows one."""
        own, everyone = self.examples(function, param)
        if not everyone:
            return None
        example = self.rng.choice(own if own and self.rng.random() < 0.5 else everyone)
        live: dict[str, list[Any]] = {}
        if owner is not None and any(lit.places for lit in example.literals):
            if self._live is None or self._live[0] is not env or self._live[1] != owner:  # once per position
                self._live = (env, owner, state_places(env, owner))
            live = self._live[2]
        for _ in range(4):  # a text equal to its example copies the seed: draw again
            text = self.derive(example, live)
            if text != example.text or not is_distinctive(text, self.remapper.vocabulary):
                return text
        return self._words(example.text, frozenset())  # every distinctive word new

    def derive(self, example: Example, live: dict[str, list[Any]]) -> str:
        """The example with each literal re-drawn and the names its seed made renamed (module docstring)."""
        out, at = [], 0
        for lit in example.literals:
            out.append(self._words(example.text[at:lit.start], example.known))
            out.append(self._render(self._literal(lit, live), lit.quote))
            at = lit.end
        out.append(self._words(example.text[at:], example.known))
        return "".join(out)

    def _words(self, skeleton: str, known: frozenset[str]) -> str:
        """Words of the skeleton re-drawn (one mapping per plan), except capitals and names the state held."""
        return _WORDS.sub(lambda m: m.group(0) if m.group(0).isupper() or m.group(0).lower() in known
                          else self.remapper.text(m.group(0)), skeleton)

    def _literal(self, lit: Literal, live: dict[str, list[Any]]) -> Any:
        kind = type(lit.value)  # a quoted literal takes strings, an integer integers, a decimal decimals
        found = sorted({v for at in lit.places for v in live.get(at, ()) if type(v) is kind}, key=repr)
        if found and self.rng.random() < FROM_STATE:
            return self.rng.choice(found)
        if isinstance(lit.value, str):
            return self.remapper.text(lit.value)
        return self.remapper.number(lit.value)

    @staticmethod
    def _render(value: Any, quote: str) -> str:
        if not quote:
            return str(value) if not isinstance(value, str) else value
        text = str(value)
        return quote + (text.replace("'", "''") if quote == "'" else text.replace('"', '\\"')) + quote
