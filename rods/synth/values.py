"""New content for a variant: a seeded, consistent remapping of a seed's values.

A variant must not copy its seed's initial config or call arguments, yet the
same relations must hold (a file the seed creates and later reads, a stock the
config lists and a call trades, a price the user quotes). :class:`ValueRemapper`
draws, with a seeded RNG, one new word for every *distinctive* word and one new
number for every *distinctive* number, and applies that one mapping to the
config and to every argument, so equal things stay equal and different things
stay different.

What is kept (and therefore not "distinctive"), precisely:

* the environment's vocabulary: words and digit runs of short string constants
  (at most 3 words, not f-string parts) in the BFCL API class sources (city
  names, zip codes, airport codes, order types, statuses, door names, default
  stock symbols ...) and enum values of the function docs: the simulator only
  knows those. A Python environment's vocabulary (`python_vocabulary`) is the
  identifiers of its class's module (attribute and field names, which a config
  must keep), the short string constants of the class itself, and its tools'
  enum values and parameter names;
* English function words (``STOPWORDS``), file extensions, words of < 3 letters;
* booleans, None, integers in ``[-10, 10]`` and integral floats in that range.

Everything else (other words, digit runs of >= 3 digits, other numbers) is
distinctive and gets a new value never present in the seed.
"""

from __future__ import annotations

import ast
import json
import random
import re
import textwrap
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from rods.envs.calls import ast_parse
from rods.tasks.model import BFCL_ENVIRONMENT

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

NOUNS = """anchor apricot arbor atlas aurora badge bamboo banner basil beacon birch blossom
bramble breeze bridge brook bucket cabin cactus canyon canvas cargo cedar chalk cherry cider
citadel clover cobalt comet compass copper coral cotton crater crystal cypress dahlia delta
denim dune ember falcon fern fiddle fjord flint forge fossil galaxy garnet geyser ginger glacier
granite grove harbor hazel heron hollow horizon indigo iris ivory jasmine juniper kayak kernel
lagoon lantern larch lattice lemon lilac linen lotus lumen magnet mango maple marble meadow
mesa meteor mint mosaic nectar nimbus nutmeg oasis olive onyx orbit orchid otter paddle papaya
pebble pepper pilot pine plume polar poplar prairie prism quartz quill raven reef ridge river
robin saffron sage sapphire satin sequoia shadow shore sierra silver slate sparrow spruce
summit sunset thistle thunder timber topaz torch tulip tundra valley velvet violet walnut
willow winter yarrow zephyr acorn almond amber basin beetle blaze bolt cameo candle carbon
cascade cinder coast cocoa crest dove echo elm fable feather fig flare flora frost gale gem
glade glow hatch hive husk jade jewel kelp kite lark leaf ledge lime lynx marsh mist moss
nova oak opal path peak pearl petal pixel plaza pond quest rain reed rose ruby rust sand seed
shell silk snow spark spice star stone storm swift tide trail vale vine wave wheat wind wren""".split()

NAMES = """Amara Bruno Celia Dante Elio Farah Gideon Hana Ivo Jonas Kira Lorenzo Mira Nico Orla
Priya Quentin Rosa Silas Tamsin Ugo Vera Wendell Xenia Yusuf Zara Anouk Bastian Cosima Dorian
Esme Felix Greta Hugo Ines Jasper Leona Matteo Noor Otto Paloma Rafael Saskia Tobias Una Viggo
Wilma Yara Zoltan Aurelio Beatrix Cyrus Delphine Emeric Fiora Gustav Helka Ilario Juno Kasimir
Lavinia Marek Nadia Oskar Perpetua Ronan Sabine Thaddeus Ulla Valter Wren Yannick Zelda""".split()

_WORD = re.compile(r"[A-Za-z]+|\d+")


@lru_cache(maxsize=1)
def environment_vocabulary() -> frozenset[str]:
    """Words the BFCL simulators know by name: short string constants of their sources."""
    spec = find_spec("bfcl_eval")
    words: set[str] = set()
    if spec and spec.submodule_search_locations:
        root = Path(next(iter(spec.submodule_search_locations)))
        src = root / "eval_checker" / "multi_turn_eval" / "func_source_code"
        for path in src.glob("*.py"):
            if path.name == "long_context.py":  # filler data, not vocabulary the code compares against
                continue
            tree = ast_parse(path.read_text(encoding="utf-8"))  # thread-safe: synthesis runs in threads
            in_fstrings = {id(c) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for c in node.values}
            for node in ast.walk(tree):
                if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in in_fstrings
                        and len(node.value) <= 30 and len(node.value.split()) <= 3):
                    words.update(w.lower() for w in _WORD.findall(node.value))
        for path in (root / "data" / "multi_turn_func_doc").glob("*.json"):
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    _collect_enums(json.loads(line), words)
    return frozenset(words)


def _collect_enums(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "enum" and isinstance(value, list):
                out.update(w.lower() for v in value if isinstance(v, str) for w in _WORD.findall(v))
            else:
                _collect_enums(value, out)
    elif isinstance(node, list):
        for value in node:
            _collect_enums(value, out)


@lru_cache(maxsize=32)
def python_vocabulary(path: str) -> frozenset[str]:
    """The vocabulary of a Python environment class (`module:Class`; see the module docstring)."""
    import inspect

    from rods.envs.classes import api_class
    from rods.envs.schemas import function_docs

    klass = api_class(path)
    words: set[str] = set()

    def add(text: str) -> None:
        words.update(w.lower() for w in _WORD.findall(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)))

    module = inspect.getmodule(klass)
    try:
        source = inspect.getsource(module) if module else ""
    except (OSError, TypeError):
        source = ""
    tree = ast_parse(source)
    for node in ast.walk(tree):  # identifiers of the module: attribute, field, parameter and class names
        for name in (getattr(node, "id", None), getattr(node, "attr", None), getattr(node, "arg", None),
                     getattr(node, "name", None)):
            if isinstance(name, str):
                add(name)
    for owner in klass.__mro__[:-1]:  # short string constants of the class itself (statuses, kinds, keys)
        try:
            body = ast_parse(textwrap.dedent(inspect.getsource(owner)))
        except (OSError, TypeError, SyntaxError):
            continue
        for node in ast.walk(body):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value.split()) <= 3 \
                    and len(node.value) <= 30:
                add(node.value)
    for docs in function_docs([path]).values():
        for doc in docs:
            add(doc["name"])
            _collect_enums(doc.get("parameters", {}), words)
            for prop in doc.get("parameters", {}).get("properties", {}):
                add(prop)
    return frozenset(words)


def is_kept_word(word: str, vocabulary: frozenset[str] | None = None) -> bool:
    """True for a word the remapping keeps (see the module docstring); `vocabulary` defaults to BFCL's."""
    known = environment_vocabulary() if vocabulary is None else vocabulary
    if word.isdigit():
        return len(word) < 3 or word in known
    low = word.lower()
    return len(word) < 3 or low in STOPWORDS or low in EXTENSIONS or low in known


def vocabulary_of(environment: str) -> frozenset[str] | None:
    """The words an environment's remapping keeps: None for BFCL's (the default), else its Python class's."""
    if environment == BFCL_ENVIRONMENT:
        return None
    return python_vocabulary(environment)


def is_distinctive(value: Any, vocabulary: frozenset[str] | None = None) -> bool:
    """True for a value a variant must not copy from its seed (module docstring); `vocabulary` defaults to BFCL's."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return not (float(value).is_integer() and abs(value) <= SMALL_INT)
    if isinstance(value, str):
        return any(not is_kept_word(w, vocabulary) for w in _WORD.findall(value))
    return False


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


class ValueRemapper:
    """One consistent old -> new mapping of words and numbers, drawn from a seeded RNG.

    Args:
        rng: the variant's random source.
        avoid: scalars of the seed; no new value may equal one of them.
        jitter: relative range of new numbers (0.3: within x0.7 .. x1.3).
        keep: exact values to leave alone: content the simulator itself makes at
            load time (BFCL's long-context filler files), which no config can rename.
        vocabulary: the environment's words to keep (default: BFCL's, `environment_vocabulary`).
    """

    def __init__(self, rng: random.Random, avoid: list[Any] = (), jitter: float = 0.3, keep: frozenset = frozenset(),
                 vocabulary: frozenset[str] | None = None):
        self.rng = rng
        self.keep = keep
        self.vocabulary = vocabulary
        self.jitter = jitter
        self.words: dict[str, str] = {}
        self.digits: dict[str, str] = {}
        self.numbers: dict[float, int | float] = {}
        self._avoid_words = {w.lower() for v in avoid if isinstance(v, str) for w in _WORD.findall(v)}
        self._avoid_numbers = {float(v) for v in avoid if isinstance(v, (int, float)) and not isinstance(v, bool)}
        self._used: set[str] = set()
        self._nouns = [w for w in NOUNS if w not in self._avoid_words and (vocabulary is None or w not in vocabulary)]
        self._names = [w for w in NAMES if w.lower() not in self._avoid_words]
        rng.shuffle(self._nouns)
        rng.shuffle(self._names)

    # -------------------------------------------------------------- public

    def remap(self, value: Any) -> Any:
        """A copy of a JSON-like value with every distinctive word and number replaced."""
        if isinstance(value, dict):
            return {self._key(k): self.remap(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.remap(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.remap(v) for v in value)
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return self.number(value)
        return value

    def text(self, text: str) -> str:
        """Replace distinctive words and digit runs inside a string, keeping its shape."""
        if text in self.keep:
            return text
        if text.lstrip("-").isdigit() and len(text.lstrip("-")) >= 3:
            return str(self.number(int(text)))
        return _WORD.sub(lambda m: self._token(m.group(0)), text)

    def number(self, value: int | float) -> int | float:
        if not is_distinctive(value):
            return value
        key = float(value)
        if key not in self.numbers:
            self.numbers[key] = self._new_number(value)
        new = self.numbers[key]
        return int(new) if isinstance(value, int) else float(new)

    def fresh_word(self) -> str:
        """A new distinctive word, never a seed word nor one drawn before (for names a call creates)."""
        return self._new_word("word")

    def fresh_number(self, integer: bool = True) -> int | float:
        """A new distinctive number (11..499, or with two decimals; above 499 when those run out), not a seed number."""
        taken = self._avoid_numbers | {float(v) for v in self.numbers.values()}
        for _ in range(200):
            new = self.rng.randint(11, 499) if integer else round(self.rng.uniform(11, 499), 2)
            if float(new) not in taken:
                self.numbers[float(new)] = new
                return new
        # 11..499 nearly used up (a seed full of numbers, many draws): take a free one above it
        new = next(n for n in range(500, 500 + len(taken) + 1) if float(n) not in taken)
        self.numbers[float(new)] = new
        return new

    # ------------------------------------------------------------- private

    def _key(self, key: Any) -> Any:
        return self.text(key) if isinstance(key, str) else self.number(key) if isinstance(key, (int, float)) else key

    def _token(self, word: str) -> str:
        if is_kept_word(word, self.vocabulary):
            return word
        if word.isdigit():
            if word not in self.digits:
                if len(word) == 4 and 1900 <= int(word) <= 2099:  # a year stays a plausible year
                    self.digits[word] = self._fresh(lambda: str(self.rng.randint(2024, 2035)))
                else:
                    self.digits[word] = self._fresh(lambda: "".join(self.rng.choice("0123456789") for _ in word))
            return self.digits[word]
        low = word.lower()
        if low not in self.words:
            self.words[low] = self._new_word(word)
        new = self.words[low]
        if word.isupper() and len(word) > 1:
            return new.upper()
        if word[0].isupper():
            return new[0].upper() + new[1:]
        return new

    def _new_word(self, word: str) -> str:
        if word.isupper() and len(word) > 1:  # symbols, codes: same length, new letters
            return self._fresh(lambda: "".join(self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in word)).lower()
        pool = self._nouns if self._nouns else self._names
        while pool:
            cand = pool.pop().lower()
            if cand not in self._used and cand not in self._avoid_words and not is_kept_word(cand, self.vocabulary):
                self._used.add(cand)
                return cand
        return self._fresh(lambda: "".join(self.rng.choice("bcdfghklmnprstvz") + self.rng.choice("aeiou")
                                           for _ in range(3)))

    def _fresh(self, draw) -> str:
        for _ in range(100):
            cand = draw()
            if (cand.lower() not in self._used and cand.lower() not in self._avoid_words
                    and not is_kept_word(cand, self.vocabulary)):
                self._used.add(cand.lower())
                return cand
        raise RuntimeError("could not draw a fresh value")

    def _new_number(self, value: int | float) -> int | float:
        taken = self._avoid_numbers | {float(v) for v in self.numbers.values()}
        decimals = _decimals(value)
        for attempt in range(300):
            if attempt >= 100:  # tiny values: step by the last decimal instead
                step = 10 ** -max(decimals, 1) if isinstance(value, float) else 1
                new = value + step * self.rng.randint(1, 9) * (attempt // 100)
                new = round(new, max(decimals, 1)) if isinstance(value, float) else int(new)
            elif isinstance(value, int) and abs(value) >= 100000:  # ids, card numbers: same digit count
                digits = len(str(abs(value)))
                new: int | float = self.rng.randint(10 ** (digits - 1), 10**digits - 1) * (1 if value > 0 else -1)
            else:
                factor = 1 + self.rng.uniform(-self.jitter, self.jitter)
                new = value * factor
                new = int(round(new)) if isinstance(value, int) else round(new, max(decimals, 1))
            if float(new) not in taken and is_distinctive(new) and (new > 0) == (value > 0):
                return new
        raise RuntimeError(f"could not draw a new number for {value!r}")


def _decimals(value: float | int) -> int:
    if isinstance(value, int):
        return 0
    text = repr(value)
    return len(text.split(".")[1]) if "." in text and "e" not in text else 2
