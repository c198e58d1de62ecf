"""New content for a variant: a seeded, consistent remapping of a seed's values.

A variant must not copy its seed's initial config or call arguments, yet the
same relations must hold (a file the seed creates and later reads, a stock the
config lists and a call trades, a price the user quotes). :class:`ValueRemapper`
draws, with a seeded RNG, one new word for every *distinctive* word and one new
number for every *distinctive* number, and applies that one mapping to the
config and to every argument, so equal things stay equal and different things
stay different. The config keeps its shape: its attributes and the field names
of its records stay, only ids and names that key a map are re-drawn
(`is_field_key`).

See `rods.synth.value_kinds` for what is kept and what is distinctive.

Where the environment's value model (`rods.synth.value_model`) knows a field,
it decides first: a category value stays (it is what the slot holds, not a
copy), a person's or a company's name becomes another of one country's names
(`rods.synth.people`), and every date moves by the variant's one `shift` of
whole weeks (`rods.synth.dates`).

A sentence (`is_prose`: a file's text, a message, a post) is not re-drawn word
by word, which makes word salad ("This is a saffron linen of the document"):
it becomes, whole and consistently, another sentence the environment's human
tasks wrote (`APIGraph.prose`, by class), one that shares no distinctive word
with the seed. A title, a list of capitalised words or a short note under a record's field
(`is_phrase`: "Banana Grape Lemon", "The Kayak Paddle") becomes another text the
human tasks hold under that field (`APIGraph.field_texts`): a title another
title, a file's text another file's. Without such texts it falls back to word
by word.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rods.envs.vocabulary import NAMES, NOUNS, PLACES, SURNAMES, WORD as _WORD
from rods.synth.dates import as_date, shift_date
from rods.synth.people import (
    company_suffixes,
    gender_of,
    gendered_firsts,
    is_person_name,
    locale_of_family,
    locale_of_first,
    name_shaped,
    people_pools,
    titled,
)
from rods.synth.value_kinds import (
    COMPOUND,
    PROPER_NAME,
    is_distinctive,
    is_field_key,
    is_fraction,
    is_kept_word,
    is_phrase,
    is_prose,
    numbered_series,
    role_of,
)

if TYPE_CHECKING:
    from rods.synth.value_model import Slot, ValueModel

#: An ISO date written inside a text ("Lift inspected 2026-08-21").
_ISO_DAY = re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)")


class MergedRecords(ValueError):
    """A map's key re-drawn as another of its keys: one record would overwrite another (a member lost)."""


class ValueRemapper:
    """One consistent old -> new mapping of words and numbers, drawn from a seeded RNG.

    Args:
        rng: the variant's random source.
        avoid: scalars of the seed; no new value may equal one of them.
        jitter: relative range of new numbers (0.3: within x0.7 .. x1.3).
        keep: exact values to leave alone: content the simulator itself makes at
            load time (BFCL's long-context filler files), which no config can rename.
        vocabulary: the environment's words to keep (`vocabulary_of`).
        prose: class -> sentences its human tasks wrote (`APIGraph.prose`): what a
            sentence of the seed becomes (module docstring).
        field_texts: "class/field" -> the titles, names, lists of capitalised words and
            sentences its human tasks hold under that field (`APIGraph.field_texts`):
            what a label of the seed there becomes ("Banana Grape Lemon", a file's
            text, becomes another file's text, not "Glade Apple Bucket").
    """

    def __init__(self, rng: random.Random, vocabulary: frozenset[str], avoid: list[Any] = (), jitter: float = 0.3,
                 keep: frozenset = frozenset(), prose: Mapping[str, Sequence[str]] | None = None,
                 field_texts: Mapping[str, Sequence[str]] | None = None, model: ValueModel | None = None):
        self.rng = rng
        self.model = model
        # dates move together by whole weeks (a weekday stays that weekday, a day stays as far from today), from a
        # stream of their own so that the draws below stay as they were
        side = random.Random(hash(tuple(rng.getstate()[1][:8])))
        self.shift = 7 * side.randint(1, 8) * side.choice((-1, 1))
        self.keep = keep
        self.vocabulary = vocabulary
        self.jitter = jitter
        self.words: dict[str, str] = {}
        self.digits: dict[str, str] = {}
        self.numbers: dict[float, int | float] = {}
        self._avoid_words = {w.lower() for v in avoid if isinstance(v, str) for w in _WORD.findall(v)}
        self._avoid_numbers = {float(v) for v in avoid if isinstance(v, (int, float)) and not isinstance(v, bool)}
        #: One-word texts the seed holds as values (a city, a status): a name that says one ('Boston Logan
        #: Airport') says it of its record, so `_recombined` neither moves it nor brings one in.
        self._one_word_values = {v.lower() for v in avoid if isinstance(v, str) and v.strip() and " " not in v.strip()}
        self._used: set[str] = set()
        self._nouns = [w for w in NOUNS if w not in self._avoid_words]  # `_new_word` skips the vocabulary's
        self._names = [w for w in NAMES if w.lower() not in self._avoid_words]
        rng.shuffle(self._nouns)
        rng.shuffle(self._names)
        # people and places (drawn only when a value is one, after the words above: their streams stay)
        rng.random()  # the draw that once shuffled our own first names: the draws after it stay as they were
        self._surnames, self._places = list(SURNAMES), list(PLACES)
        for pool in (self._surnames, self._places):
            random.Random(f"{rng.random()}").shuffle(pool)
        # people of many countries (Faker's names), each named within one country's names
        pools = people_pools()
        # the countries names are drawn from in turn: those whose lists tell a first name's gender (a Chinese list
        # of romanized first names does not); the others name only someone whose kept first name is theirs
        self._locales = sorted(loc for loc in pools if all(gendered_firsts()[loc].values()))
        side.shuffle(self._locales)
        self._people = {locale: (side.sample(firsts, len(firsts)), side.sample(lasts, len(lasts)))
                        for locale, (firsts, lasts) in pools.items()}
        self._first = [n for locale in self._locales for n in self._people[locale][0][:8]]  # for handles ('@Ana')
        side.shuffle(self._first)
        #: A recast's draws (`rods.synth.recast`), which keep its seed's words true: first names of the seed's
        #: person's gender ("she"), numbers as round as the seed's ("a £50 voucher"). Its own stream, drawn last.
        self.like_seed = False
        #: A recast's values of its task (`rods.synth.touched.touched_values`), or None: with it set, every other
        #: value of the state (a berth's note, a boat's name, a stock's averages) stays as the seed had it; only
        #: dates move with the rest, so their relations hold.
        self.touched: frozenset | None = None
        #: A recast's numbers the calls pass for another thing than the state's fields that hold them
        #: (`rods.synth.touched.coincident`): the state keeps them, the calls re-draw them.
        self.coincident: frozenset[float] = frozenset()
        #: A recast's first names -> the gender its seed's messages speak of them with (`people.said_gender`), for
        #: first names no name list genders.
        self.genders: dict[str, str] = {}
        self._like = random.Random(side.random())
        self._gendered: dict[str, list[str]] = {}
        self._locale: dict[str, str] = {}  # a drawn first or family name -> the country it was drawn from
        self._families: dict[str, str] = {}  # a recast's family name -> the country it is renamed within
        self.texts: dict[str, str] = {}  # whole texts mapped to whole texts: sentences, phrases
        #: Digit runs of numbered map keys -> their series (`value_kinds.numbered_series`), from the states remapped.
        self.series: dict[str, tuple[frozenset[int], int]] = {}
        #: A recast's names the user chose (a file, a folder: `rods.synth.names`) -> the names it gives them.
        self.names: dict[str, str] = {}
        #: People's whole names mapped by `person` (a recast says "Ana" where its seed said "Margaret" alone).
        self.people: dict[str, str] = {}
        self._prose: dict[str, list[str]] = {}
        self._any_prose: list[str] = []
        self._field_texts: dict[str, list[str]] = {}
        #: "class/field" -> every phrase its human tasks hold there, the seed's own too (`_recombined`).
        self._field_phrases: dict[str, list[str]] = {at: sorted(texts) for at, texts in (field_texts or {}).items()}
        if prose or field_texts:  # its own stream, so the draws above do not depend on the texts known
            shuffle = random.Random(f"{rng.random()}").shuffle
            self._prose = {owner: self._own_free(texts, shuffle) for owner, texts in (prose or {}).items()}
            self._any_prose = sorted({t for texts in self._prose.values() for t in texts})
            shuffle(self._any_prose)
            self._field_texts = {at: self._own_free(texts, shuffle) for at, texts in (field_texts or {}).items()}

    # -------------------------------------------------------------- public

    def remap(self, value: Any, owner: str | None = None) -> Any:
        """A copy of a class's state (its `initial_config` entry) with every distinctive value replaced.

        The state's shape stays: its own keys (the class's attributes) and the
        field names of its records are kept, and only the keys of a map (ids,
        names: see `is_field_key`) are re-drawn like values. Its sentences become
        sentences `owner`'s human tasks wrote.
        """
        self.series.update(numbered_series(value))
        return self._value(value, top=True, owner=owner, path=owner or "")

    def _value(self, value: Any, top: bool = False, role: str | None = None, owner: str | None = None,
               at: str | None = None, path: str = "") -> Any:
        if isinstance(value, dict):
            by_id = not top and bool(value) and all(isinstance(v, (dict, list)) for v in value.values())
            out = {}
            for k, v in value.items():
                if self.model is not None and k in self.model.fixed_dates:  # a calendar's day and what it is
                    out[k] = v
                    continue
                field = top or (not by_id and is_field_key(k))
                recast = None if field else self.recast_value(k)  # a recast's record nobody names keeps its id
                keep = field or recast is not None
                new_key = recast if recast is not None else k if keep else self._modelled(k, f"{path}/#key", None)
                new_key = self._key(k, keep=keep) if new_key is None else new_key
                if new_key in out:
                    raise MergedRecords(f"{path}: {k!r} came out as {new_key!r}, the key of another record")
                out[new_key] = self._value(
                    v, role=role_of(k), owner=owner, at=k if is_field_key(k) else None,
                    path=f"{path}/{k if field else '*'}")
            return out
        if isinstance(value, (list, tuple)):
            items = [self._value(v, role=role, owner=owner, at=at, path=f"{path}/[]") for v in value]
            return items if isinstance(value, list) else tuple(items)
        if path and isinstance(value, (int, float)) and not isinstance(value, bool) and value in self.coincident:
            return value  # a state's number the calls pass for another thing (30 PSI beside 30 gallons)
        recast = self.recast_value(value)
        if recast is not None:
            return recast
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            modelled = self._modelled(value, path, role)
            if modelled is not None:
                return modelled
        if isinstance(value, str):
            return self.text(value, role, owner, at)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return self.number(value)
        return value

    def recast_value(self, value: Any) -> Any:
        """For a recast (`touched` set), the value as it holds it, or None to draw it as any variant's: the world
        around its task stays, and a date written inside a kept text moves with the state's dates ("Lift
        inspected 2026-08-21" stays before the new 'today'). A name the user chose takes its new name (`names`);
        what else it touches is drawn as for any variant."""
        if self.touched is None or not isinstance(value, (str, int, float)) or isinstance(value, bool):
            return None
        if isinstance(value, str) and value in self.names:
            return self.names[value]
        if isinstance(value, str) and as_date(value) is not None:
            return None
        if value not in self.touched:
            return _ISO_DAY.sub(lambda m: shift_date(m.group(0), self.shift), value) if isinstance(value, str) \
                else value
        return None

    def _modelled(self, value: Any, path: str, role: str | None) -> Any:
        """The new value of a state slot the environment's `ValueModel` knows, or None to draw as any other: a
        category value stays (another member of its set would change what the state says of the record), a date
        moves by the variant's `shift`, a person's name becomes a person's name."""
        return self._by_slot(self.model.field(path) if self.model is not None else None, value, role)

    def argument(self, value: Any, function: str, param: str, owner: str | None = None) -> Any:
        """A call argument's new value by the same mapping as the state's: by its parameter's slot in the value
        model where it knows it (`function.param`), else as a state value of class `owner` under a field of the
        parameter's name (a recast's gold calls, `rods.synth.recast`: a sentence becomes one of `owner`'s)."""
        if isinstance(value, str) and value in self.keep:
            return value
        recast = self.recast_value(value)
        if recast is not None:
            return recast
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            slot = self.model.parameter(function, param) if self.model is not None else None
            modelled = self._by_slot(slot, value, role_of(param))
            if modelled is not None:
                return modelled
        if isinstance(value, (list, tuple)):
            items = [self.argument(v, function, param, owner) for v in value]
            return items if isinstance(value, list) else tuple(items)
        return self._value(value, role=role_of(param), owner=owner, at=param if is_field_key(param) else None)

    def said_instead(self, text: str, options: Sequence[str]) -> str | None:
        """For a recast, a text another human task passed where the seed passed `text` (a damage note, a reason
        another seed wrote), one sharing no distinctive word with the seed, the same for the same text; None when
        there is none (then `argument` re-draws it)."""
        if text not in self.texts:
            free = self._own_free([o for o in options if o != text and o not in self._used], self._like.shuffle)
            if not free:
                return None
            self.texts[text] = free[0]
            self._used.add(free[0])
        return self.texts[text]

    def _by_slot(self, slot: Slot | None, value: Any, role: str | None) -> Any:
        """`_modelled` for a given slot (a state field's or a parameter's), or None."""
        if slot is None:
            return None
        if slot.kind == "category" and isinstance(value, str):
            return value
        if slot.kind == "date":
            return self.date(value)
        if slot.kind == "company" and isinstance(value, str) and value[:1].isupper():
            return self.company(value)
        if slot.kind == "person" and isinstance(value, str) and role not in ("first", "last") \
                and name_shaped(value) and not value.startswith("@"):
            return self.person(value)
        if slot.kind == "quantity" and slot.year:  # a year stays (dates move by weeks, seasons stay)
            return value
        if slot.kind == "quantity" and isinstance(value, (int, float)) and slot.low is not None \
                and slot.high is not None and slot.low <= value <= slot.high:
            new = within(self.number(value), slot.low, slot.high)
            return self._inside(new, value, slot.low, slot.high) if self.like_seed else new
        return None

    def _inside(self, new: int | float, seed: int | float, low: float, high: float) -> int | float:
        """For a recast, a quantity folded into its range (`within`) that lands on a seed's number (its own, or a
        bound of the range) drawn again inside the range, as round as the seed's: else the gate finds a copy."""
        if not is_distinctive(seed, frozenset()):  # a small count ("double-sided": 2) stays what the words say
            return seed
        for attempt in range(60):
            if float(new) not in self._avoid_numbers or low == high:
                return new
            drawn = self._like.uniform(low, high)
            new = int(round(drawn)) if isinstance(seed, int) else round(drawn, 2)
            new = round_like(new, seed) if attempt < 30 else new  # a range too narrow for its roundness: any
        return new

    def date(self, value: Any) -> Any:
        """A date or day number moved by the variant's `shift` (the same move for every date, so each stays as far
        from today and from the others as in the seed)."""
        if isinstance(value, str):
            if self.model is not None and value in self.model.fixed_dates:  # the calendar's own (a holiday)
                return value
            if value not in self.texts:
                self.texts[value] = shift_date(value, self.shift)
            return self.texts[value]
        if isinstance(value, int) and not isinstance(value, bool):
            self.numbers[float(value)] = value + self.shift
            return value + self.shift
        return value

    def person(self, text: str) -> str:
        """A person's name for a seed's person's: first and family names of one country (Faker's), the same
        person for the same name, and the same new word for a word two names share (a family's surname)."""
        if text in self.texts:
            return self.texts[text]
        title, name = titled(text)
        if title:  # "Dr. Ana Reyes" -> "Dr. " and a name for "Ana Reyes"
            self.texts[text] = f"{title} {self.person(name)}"
            return self.texts[text]
        words = text.strip().split()
        # one country per family: a name whose family name is already renamed takes that name's country (Asuka
        # Nakajima's daughter is no Edaviye Nakajima)
        known = [*(self._families.get(w.lower()) for w in reversed(words[1:])),
                 *(self._locale.get(self.words.get(w.lower(), "")) for w in [words[0], *reversed(words[1:])])]
        locale = next((loc for loc in known if loc), None) or self._next_locale()
        firsts, lasts = self._people[locale]
        new = []
        for i, word in enumerate(words):
            if i and (word in _JOINS or (len(word) <= 3 and word.islower())):  # "and", "&", "van", "de"
                new.append(word)
            elif i == 0 or words[i - 1] in _JOINS:  # a first name, also after "and": "Tomasz and Ewa Novak"
                gendered = self._of_gender(word, locale)
                if self.like_seed and gendered is None and len(words) > 1:
                    # a recast's person whose gender neither the name lists nor the seed's words tell ("Kwame
                    # Mensah just called. ... he wants"): the first name stays, so whatever the words say of them
                    # stays true; the family name makes them someone else, of a country the first name is of
                    # (not 'Hiroshi Bouhuizen')
                    own = self._families.get(words[-1].lower()) or locale_of_first(word)
                    if own in self._people:
                        locale = own
                        firsts, lasts = self._people[locale]
                    new.append(word)
                    continue
                new.append(self._named_from(word, gendered or firsts, locale))
            else:
                new.append(self._named_from(word, lasts, locale))
        self.texts[text] = self.people[text] = " ".join(new)
        return self.texts[text]

    def settle_families(self, names: Iterable[Any], known: frozenset[str] = frozenset()) -> None:
        """A recast's families, settled before anyone is renamed: a family one of whose people keeps a first name
        (`person`: no name list nor the seed's words give its gender) is renamed within that name's country, else
        within its family name's (where neither is known, a country in turn: kept whole, 'Kwame Mensah' was a copy
        of the seed the gate refused). Renamed one by one, 'Hiroshi Watanabe' took a country in turn and his son
        'Kenji Watanabe', whose first name stays, became 'Kenji Cirino'. `known`: the names the value model knows
        as people's (`ValueModel.people`)."""
        for name in names:
            if not isinstance(name, str) or not is_person_name(name, known):
                continue
            words = titled(name)[1].split()
            if len(words) < 2 or words[-1] in _JOINS or self.genders.get(words[0]) or gender_of(words[0]):
                continue
            family = words[-1].lower()
            own = locale_of_first(words[0]) or locale_of_family(words[-1])
            if own in self._people:
                self._families.setdefault(family, own)

    def _of_gender(self, first: str, locale: str) -> list[str] | None:
        """For a recast (`like_seed`), `locale`'s first names of the gender of the seed's `first` as its messages speak
        of them (`genders`) or else as name lists know it (shuffled once), or None (not a recast, or a name of either
        gender and no pronoun)."""
        gender = (self.genders.get(first) or gender_of(first)) if self.like_seed else None
        if gender is None:
            return None
        key = f"{locale}:{gender}"
        if key not in self._gendered:
            self._gendered[key] = self._like.sample(gendered_firsts()[locale][gender],
                                                    len(gendered_firsts()[locale][gender]))
        return self._gendered[key] or None

    def _next_locale(self) -> str:
        """The country of the next person named: the countries in turn, one per name drawn so far."""
        return self._locales[len(self._locale) % len(self._locales)]

    def company(self, text: str) -> str:
        """A company's name for a seed's company's: a family name of one country and the ending the seed's name
        has (`Ltd`, `GmbH`), or another companies have; the same company for the same name."""
        if text not in self.texts:
            words = text.strip().split()
            endings = company_suffixes()
            ending = words[-1] if len(words) > 1 and words[-1] in endings else self.rng.choice(endings)
            locale = self._locales[len(self.texts) % len(self._locales)]
            self.texts[text] = f"{self._draw_name(self._people[locale][1], locale).capitalize()} {ending}"
        return self.texts[text]

    def _named_from(self, word: str, pool: list[str], locale: str) -> str:
        """One word of a name, mapped consistently to a name of `pool` (one country's)."""
        low = word.lower()
        if low not in self.words:
            self.words[low] = self._draw_name(pool, locale)
        return self.words[low][0].upper() + self.words[low][1:]

    def _draw_name(self, pool: list[str], locale: str) -> str:
        """A name of `pool` not drawn before and not the seed's, lower case, remembered as `locale`'s."""
        found = next((n for n in pool if n.lower() not in self._used and n.lower() not in self._avoid_words), None)
        name = (found or self._draw(self._surnames)).lower()
        self._used.add(name)
        self._locale[name] = locale
        return name

    def text(self, text: str, role: str | None = None, owner: str | None = None, at: str | None = None) -> str:
        """Replace distinctive words and digit runs inside a string, keeping its shape. A person's name (`role`
        "person", or a proper name under it) gets a first name and family names, a handle ("@Julia") a first
        name; a place, a city; a sentence,
        another sentence of `owner`'s (else any class's) human tasks; another phrase (`is_phrase`) under a
        field `at`, another text its human tasks hold under that field."""
        if text in self.keep:
            return text
        if text in self.texts:
            return self.texts[text]
        if self.touched is not None and as_date(text) is None and not _ISO_DAY.search(text):
            # a recast's own value: a person by a person, anything else (an id, a card's 'crd6789', an address) with
            # new numbers and its words as they were (its letters re-drawn made 'prototypes9167', 'website_001')
            if is_person_name(text, self.model.people if self.model is not None else frozenset()):
                return self.person(text)
            new = self._renumbered(text, every=_numbered_phrase(text))
            # short runs too where nothing else would change and the value is the seed's own ('test_image1.jpg':
            # kept, it was a copy of the seed's); a seat 'C4' says nothing of its own and stays a seat the hall has
            if new == text and is_distinctive(text, self.vocabulary):
                return self._renumbered(text, every=True)
            return new
        if role is None and is_distinctive(text, self.vocabulary):
            new = self._whole(text, owner, at)
            if new is not None:
                self.texts[text] = new
                return new
        if text.lstrip("-").isdigit() and len(text.lstrip("-")) >= 3:
            return str(self.number(int(text)))
        if role in ("first", "last") and re.fullmatch(r"[A-Z][a-z]+", text.strip()):
            return self._named(text.strip(), self._first if role == "first" else self._surnames)
        handle = re.fullmatch(r"@([A-Z][A-Za-z]+)", text.strip())
        if handle and role in (None, "person", "first"):  # "@Julia", "@InsightfulTeam": a person's handle, a name
            word = handle.group(1)  # a camel-case team name is no word of the text: its own key ("@insightfulteam")
            return "@" + self._named(word if word[1:].islower() else "@" + word, self._first)
        if role == "person" and name_shaped(text) and " " in text.strip():
            return self.person(text)
        if role == "place" and PROPER_NAME.fullmatch(text.strip()):
            return " ".join(self._named(word, self._places) for word in text.strip().split(" "))
        compound = self._compound(text)
        if compound is not None:
            return compound
        return _WORD.sub(lambda m: self._token(m.group(0)), text)

    def _renumbered(self, text: str, every: bool) -> str:
        """For a recast, a value with new numbers of as many digits and its words as they were: runs of three digits
        or more, and in a phrase (`every`: an address, "14 Larch Street") every run (its words re-drawn made "14
        Quizzes Events"); a year stays, or moves one year where it is the value's only number (a recast moves its
        world by weeks: 'notes_2024.txt' came out as 'notes_2035.txt', a booking in 2030), one digit stays one of
        1-4. One or two digits of an id stay (a seat
        'C4' is a seat the hall has), unless nothing else would change (`text`: 'test_image1.jpg')."""
        def digits(match: re.Match) -> str:
            run = match.group(0)
            if run in self.digits and text.strip() == run:  # a house number alone, re-drawn in its address
                return self.digits[run]
            if len(run) < 3 and not every:
                return run
            if len(run) == 4 and 1900 <= int(run) <= 2099:  # a year: its world moved weeks, not years
                if len(re.findall(r"\d+", text)) > 1:
                    return run
                if run not in self.digits:  # the value's only number: the next or the last year, not a copy
                    self.digits[run] = str(int(run) + self.rng.choice((-1, 1)))
                return self.digits[run]
            if run not in self.digits and run in self.series:
                self.digits[run] = self._in_series(run)
            if run not in self.digits:
                # the first digit of a longer run stays (an area code's, a card's issuer's, a floor's), a house
                # number's is drawn; one digit is an ordinal more often than not (a quarter, a term, a file's
                # number): it stays small ('Quarter1_Reports' came out as 'Quarter6_Reports'); a run led by a
                # trunk zero keeps its next digit too (a UK mobile's '07911' came out as '06...')
                kept = run[:2] if run[0] == "0" and len(run) >= 4 else ""
                first = run[0] if len(run) >= 3 else "1234" if len(run) == 1 else "123456789"
                # no number the seed holds: a member 'M-0131' re-drawn as 'M-0143' took another member's key
                taken = {run, *self.digits.values()} | self._avoid_words
                for attempt in range(100):
                    pool = first if attempt < 50 else "123456789"  # 1-4 all taken: any digit
                    head = kept or self.rng.choice(pool)
                    new = head + "".join(self.rng.choice("0123456789") for _ in run[len(head):])
                    if new not in taken:
                        break
                self.digits[run] = new
            return self.digits[run]

        # a fraction ('1/2 HP', a '3/4' violin) is a size, not a code, and an address's postal code goes with its
        # city, which the words keep ('San Francisco, CA 94016' came out as 'CA 91425'): they stay
        def kept_or_new(match: re.Match) -> str:
            if match["postal"] or match["area"] or (match["fraction"] and is_fraction(match["fraction"])):
                return match.group(0)
            if match["fraction"] and re.fullmatch(r"(0?[1-9]|1[0-2])/(\d{2}|20\d{2})", match["fraction"]):
                return match.group(0)  # a month and year ('12/26', '12/2028': a card's expiry): a date, kept
            return re.sub(r"\d+", digits, match.group(0))

        # a phone number's area code goes with its place too ('509-555-0178' of a Spokane mother: '509-...')
        self.texts[text] = re.sub(r"(?P<fraction>(?<![\d/])\d{1,2}/(?:20\d{2}|\d{1,2})(?![\d/]))"
                                  r"|(?P<postal>(?<=[A-Z]{2} )\d{5}(?:-\d{4})?\b)"
                                  r"|(?P<area>(?<![\d-])\(?\d{3}(?=\)?[ .-]?\d{3}[ .-]\d{4}(?!\d)))|\d+",
                                  kept_or_new, text)
        return self.texts[text]

    def _compound(self, text: str) -> str | None:
        """A name joined of two or more distinctive words, by one new word of its own with the kept parts:
        'research_notes.txt' -> 'assignments.txt', 'projects_photography' -> 'forecasts' (word by word:
        'assignments_weddings.txt', a mash-up three blind readers failed). The word is drawn for this name alone,
        so it is no other name's ('projects' and 'projects_photography' stay two folders). None for any other
        text."""
        found = COMPOUND.fullmatch(text)
        if found is None or found["stem"].isupper():  # a code ('BOS-LOGAN') keeps its shape, word by word
            return None
        parts = re.split(r"([_-])", found["stem"])
        words = parts[::2]
        distinctive = [i for i, w in enumerate(words) if not is_kept_word(w, self.vocabulary)]
        if len(distinctive) < 2:
            return None
        one = distinctive[0]
        word = self._new_word(words[one])  # a word of its own: no other name's (a folder 'projects' stays apart)
        word = word[0].upper() + word[1:] if words[one][:1].isupper() else word
        marks = [*parts[1::2], ""]
        kept = [(word if i == one else w, mark) for i, (w, mark) in enumerate(zip(words, marks))
                if i == one or i not in distinctive]
        new = "".join(w + mark for w, mark in kept[:-1]) + kept[-1][0] + (found["ext"] or "")
        self.texts[text] = new
        return new

    def _whole(self, text: str, owner: str | None, at: str | None) -> str | None:
        """A text people wrote in place of the whole of `text`: for a phrase under a field, another text held under
        the same field, else one made of that field's words (`_recombined`); for a sentence, another sentence;
        None when there is none (then word by word). A title is a title before it is a sentence."""
        if at and is_phrase(text):
            drawn = _draw_unused(self._field_texts.get(f"{owner}/{at}", []), self._used)
            drawn = drawn if drawn is not None else self._recombined(text, f"{owner}/{at}")
            if drawn is not None:
                return drawn
        return self.sentence(owner) if is_prose(text) else None

    def _recombined(self, text: str, at: str) -> str | None:
        """A new phrase for a field: the phrase with one word before its last (a name's head noun stays) taken from
        another of the field's phrases at the same place counted from the end: stations 'Market Square' and 'Canal
        Street' give 'Canal Square', titles 'Budget review' and 'Design critique' give 'Design review'; a word
        that is a value of its own elsewhere in the state (the city in 'Boston Logan Airport') stays. Word by
        word, station names and titles became random nouns ('Rentals scans transcripts') in issue 39's reads.
        None when the field has too few phrases to make a new one."""
        phrases = self._field_phrases.get(at, [])
        words = text.split()
        if len(phrases) < 3 or len(words) < 2:
            return None
        split = [p.split() for p in phrases if p != text]
        related = self._one_word_values
        places = [i for i, w in enumerate(words[:-1]) if w.isalpha() and w.lower() not in related]
        self.rng.shuffle(places)
        for i in places:
            back = len(words) - i
            options = sorted({p[-back] for p in split if len(p) >= back and p[-back].isalpha()
                              and p[-back].lower() not in related} - {words[i]})
            self.rng.shuffle(options)
            if self.like_seed:  # a recast's title keeps its words' case ('The Spirit', not 'the Spirit') and takes
                # no person's first name ('Tomasz Square' beside Tomasz Nowak)
                options = [w[:1].upper() + w[1:] if words[i][:1].isupper() else w for w in options
                           if gender_of(w[:1].upper() + w[1:]) is None]
            for word in options:
                new = " ".join([*words[:i], word, *words[i + 1:]])
                if new not in phrases and new not in self._used:
                    self._used.add(new)
                    return new
        return None

    def sentence(self, owner: str | None = None) -> str | None:
        """A sentence not used before, from `owner`'s human tasks (else any class's), or None when none is left."""
        for pool in (self._prose.get(owner, []) if owner else [], self._any_prose):
            found = _draw_unused(pool, self._used)
            if found is not None:
                return found
        return None

    def _own_free(self, texts: Sequence[str], shuffle: Callable[[list], None]) -> list[str]:
        """Texts that share no distinctive word with the seed, shuffled."""
        free = sorted({t for t in texts if not any(w in self._avoid_words and not is_kept_word(w, self.vocabulary)
                                                   for w in _lower_words(t))})
        shuffle(free)
        return free

    def name(self, role: str) -> str:
        """A fresh person's name ("Amara Novak"), first or family name, or place ("Porto") for a new value."""
        if role == "person":
            locale = self._next_locale()
            firsts, lasts = self._people[locale]
            return f"{self._draw_name(firsts, locale).capitalize()} {self._draw_name(lasts, locale).capitalize()}"
        if role in ("first", "last"):
            return self._draw(self._first if role == "first" else self._surnames).capitalize()
        return self._draw(self._places).capitalize()

    def _named(self, word: str, pool: list[str]) -> str:
        """One word of a name, mapped consistently to a word of `pool` (a word seen before keeps its mapping)."""
        low = word.lower()
        if low not in self.words:
            self.words[low] = self._draw(pool)
        return self.words[low][0].upper() + self.words[low][1:]

    def _draw(self, pool: list[str]) -> str:
        while pool:
            cand = pool.pop().lower()
            if cand not in self._used and cand not in self._avoid_words:
                self._used.add(cand)
                return cand
        return self._new_word("word")

    def number(self, value: int | float) -> int | float:
        if not is_distinctive(value, frozenset()) or (self.model is not None and float(value) in self.model.rates):
            return value  # a small count, or a rate of the environment's own table (a full plot's £96)
        key = float(value)
        if key not in self.numbers:
            drawn = self._new_number(value)
            self.numbers[key] = self._round_like(drawn, value) if self.like_seed else drawn
        new = self.numbers[key]
        return int(new) if isinstance(value, int) else float(new)

    def _round_like(self, number: int | float, seed: int | float) -> int | float:
        """`number` as round as the seed's (`round_like`), a step further while that is a seed's number or another
        number's new one (two budgets of the seed, 18,000 and 20,000, both rounded to 20,000: the user asked
        for the limit already set)."""
        rounded = round_like(number, seed)
        taken = self._avoid_numbers | {float(v) for v in self.numbers.values()}
        for _ in range(20):
            if float(rounded) not in taken:
                return rounded
            rounded = round_like(rounded + (rounded - number or 1), seed)
        return number

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

    def _key(self, key: Any, keep: bool) -> Any:
        if keep or not isinstance(key, (str, int, float)):
            return key
        return self.text(key) if isinstance(key, str) else self.number(key)

    def _token(self, word: str) -> str:
        if is_kept_word(word, self.vocabulary) or (self.model is not None and word in self.model.id_letters):
            return word
        if word.isdigit():
            if word not in self.digits:
                if word in self.series:  # a record's number among its neighbours'
                    self.digits[word] = self._in_series(word)
                elif len(word) == 4 and 1900 <= int(word) <= 2099:  # a year stays a plausible year
                    self.digits[word] = self._fresh_year()
                else:
                    # the first digit stays: an area code's, a card's issuer's, a floor's (unit B-207 stays on floor 2)
                    self.digits[word] = self._fresh(lambda: word[0] + "".join(self.rng.choice("0123456789")
                                                                              for _ in word[1:]))
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

    def _in_series(self, run: str) -> str:
        """A new number for a numbered record's `run`, of its width: one its series leaves free between its first
        and last, else the next after its last, never one the seed or another draw holds."""
        numbers, width = self.series[run]
        taken = {run, *self.digits.values()} | self._avoid_words
        free = [n for n in range(min(numbers), max(numbers) + 1)
                if n not in numbers and str(n).zfill(width) not in taken]
        if free:
            new = str(self.rng.choice(free)).zfill(width)
        else:
            new = next(str(n).zfill(width) for n in itertools.count(max(numbers) + 1)
                       if str(n).zfill(width) not in taken)
        self._used.add(new)
        return new

    def _fresh_year(self) -> str:
        """A year not drawn before: one of 2024-2035, else (a state full of years: an allotment society's members
        joined in 1987, 1994, ...) any of 1950-2099."""
        try:
            return self._fresh(lambda: str(self.rng.randint(2024, 2035)))
        except RuntimeError:
            return self._fresh(lambda: str(self.rng.randint(1950, 2099)))

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
            if float(new) not in taken and is_distinctive(new, frozenset()) and (new > 0) == (value > 0):
                return new
        raise RuntimeError(f"could not draw a new number for {value!r}")


#: The steps a number people give is a multiple of (a voucher of 50 is one of tens, not of 37.10).
_STEPS = (0.05, 0.1, 0.5, 1, 5, 10, 50, 100, 500, 1000, 5000)


def round_like(number: int | float, seed: int | float) -> int | float:
    """A new number as round as the seed's: a multiple of the largest step below it that the seed's is a multiple
    of (50 -> tens, 2.5 -> halves), never the seed's own (the gate refuses a copy); others as they are."""
    steps = [s for s in _STEPS if s < abs(seed) and abs(seed / s - round(seed / s)) < 1e-9]
    step = max(steps, default=0)
    if step <= (1 if isinstance(seed, int) else 0.05):
        return number
    rounded = round(number / step) * step
    if rounded == seed or (rounded <= 0 < seed):
        rounded = seed + step if number >= seed else seed - step
    return int(round(rounded)) if isinstance(seed, int) else round(float(rounded), 2)


def within(number: int | float, low: float, high: float) -> int | float:
    """A new number kept in the range the seeds show for its field (a battery's 92% moved to 119% comes back
    as 65%, not above 100): reflected at the bound it passed, then clamped."""
    if low == high:
        return number
    folded = 2 * high - number if number > high else 2 * low - number if number < low else number
    folded = min(max(folded, low), high)
    return int(round(folded)) if isinstance(number, int) else round(folded, max(_decimals(number), 1))


#: Words that join two people's names in one ("Tomasz and Ewa Novak", "Kenji & Aiko Watanabe").
_JOINS = frozenset({"and", "&", "und", "et", "y", "e"})


def _numbered_phrase(text: str) -> bool:
    """A phrase of words with a number in it ("14 Larch Street", "Flat 2, 9 Elm Road"): two words of three letters
    or more and a run of digits; no id ("STU-40263") and no date in it."""
    return bool(re.search(r"\d", text)) and len(re.findall(r"[A-Za-z]{3,}", text)) >= 2 and " " in text.strip() \
        and as_date(text) is None and not _ISO_DAY.search(text)


@lru_cache(maxsize=8192)
def _lower_words(text: str) -> tuple[str, ...]:
    """The words of a text, lower case (every plan checks the same known texts against its seed)."""
    return tuple(w.lower() for w in _WORD.findall(text))


def _draw_unused(pool: list[str], used: set[str]) -> str | None:
    """The next text of a shuffled pool not used before (marked used), or None when the pool runs out."""
    while pool:
        cand = pool.pop()
        if cand not in used:
            used.add(cand)
            return cand
    return None


def _decimals(value: float | int) -> int:
    if isinstance(value, int):
        return 0
    text = repr(value)
    return len(text.split(".")[1]) if "." in text and "e" not in text else 2
