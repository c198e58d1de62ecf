"""How a seed's messages carry a recast's values: every mention of a remapped value said anew (docs/design.md §4.12).

`Mentions.of` collects, from the (seed value, variant value) pairs of a recast
(`rods.synth.recast`), the forms in which the seed's messages may say each
changed value: whole values in their case, a person's first or family name
alone and a possessive, numbers with their decimals and thousands' commas, a
date in the usual English prose forms moved by the same whole weeks, the digits
of an id where its shape is kept. `Mentions.apply` rewrites a text in one pass,
longest form first, and returns what it left of the old values in forms nothing
maps (a numeric date that could be day- or month-first, a number spelled out,
an id's digits alone): `recast_question` rejects a message with any such
leftover (``recast:leftover_value``) rather than mix old and new values.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from rods.llm.outcomes import plural
from rods.synth.dates import as_date
from rods.synth.gate import Rejected
from rods.synth.people import titled
from rods.synth.value_kinds import is_distinctive


def quoted_in(value: str, text: str) -> bool:
    """Whether `text` writes `value` in quotes ('john')."""
    return re.search(rf"['\"‘“`]{re.escape(value)}['\"’”`]", text) is not None


def value_key(value: Any) -> tuple[str, Any] | None:
    """A scalar as a mapping key: strings and numbers apart ("102" is not 102), None for anything else."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, (int, float)):
        return ("n", float(value))
    return None




#: English prose forms of a date (`d` day, `o` ordinal day, `B` month, `b` its abbreviation, `Y` year): the forms
#: a person writes, each said of the new date in the same form.
DATE_FORMS = ("{d} {B}", "{d} {b}", "{o} {B}", "{o} {b}", "{B} {d}", "{b} {d}", "{B} {o}", "{b} {o}", "{o} of {B}",
              "{d} {B} {Y}", "{d} {b} {Y}", "{o} {B} {Y}", "{d} {B}, {Y}", "{B} {d}, {Y}", "{B} {d} {Y}",
              "{b} {d}, {Y}", "{b} {d} {Y}", "{B} {o}, {Y}", "{B} {o} {Y}", "{o} of {B} {Y}", "{o} of {B}, {Y}",
              "the {o}",
              # with its weekday, which tells two dates of one day-of-month apart ("this Saturday (the 17th)" of the
              # lesson on Saturday 2025-05-17, not of a payment on Thursday 2025-04-17: "the 8th" of the wrong one)
              "{A} (the {o})", "{A} the {o}", "{A} {o}", "{A} {d} {B}", "{A} {o} {B}", "{A} {o} of {B}",
              "{A}, {d} {B}", "{A}, {B} {d}", "{A} {B} {d}", "{A}, {B} {o}", "{A} {B} {o}")
#: A month of a year, said of a date's month: moved with it where the date moves to another month, and the month's
#: name left alone is a leftover ("the 13th of next month, which is November" of a date moved into December).
MONTH_FORMS = ("{B} of {Y}", "{B} {Y}", "{B}, {Y}")
#: How far (characters) from a month's name another day of it is taken as said of that month.
DAY_REACH = 80
#: Numeric forms of a date that could be day-first or month-first: found, never guessed at (a leftover).
NUMERIC_DATES = ("{d}/{m}/{Y}", "{m}/{d}/{Y}", "{dd}/{mm}/{Y}", "{mm}/{dd}/{Y}", "{d}.{m}.{Y}", "{Y}/{mm}/{dd}",
                 "{d}/{m}", "{m}/{d}")

_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
        "seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def spelled(n: int) -> list[str]:
    """An integer 0..999 in English words ("twenty-five", "twenty five", "one hundred and five"); [] above."""
    if not 0 <= n < 1000:
        return []
    if n < 20:
        return [_ONES[n]]
    if n < 100:
        tens, ones = divmod(n, 10)
        return [_TENS[tens]] if not ones else [f"{_TENS[tens]}-{_ONES[ones]}", f"{_TENS[tens]} {_ONES[ones]}"]
    hundreds, rest = divmod(n, 100)
    head = [f"{_ONES[hundreds]} hundred", *(["a hundred"] if hundreds == 1 else [])]
    if not rest:
        return head
    return [f"{h}{sep}{r}" for h in head for sep in (" and ", " ") for r in spelled(rest)]


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _date_parts(day: dt.date, sept: bool = False) -> dict[str, Any]:
    abbr = "Sept" if sept and day.month == 9 else calendar.month_abbr[day.month]
    return {"d": day.day, "o": _ordinal(day.day), "B": calendar.month_name[day.month], "b": abbr, "Y": day.year,
            "m": day.month, "dd": f"{day.day:02d}", "mm": f"{day.month:02d}", "A": calendar.day_name[day.weekday()]}


def _number_forms(old: int | float, new: int | float) -> list[tuple[str, str]]:
    """How a number may be written (its decimals, thousands' commas) and the new number in the same way: a new
    number that does not fit the written decimals is written with its own (at least two: an amount)."""
    whole = float(old).is_integer()
    decimals = [0] if isinstance(old, int) else [0, 1, 2] if whole else [_places(old)]
    if not whole and decimals[0] == 1:
        decimals.append(2)
    out = []
    for places in decimals:
        fits = round(float(new), places) == float(new)
        own = places if fits else max(2, _places(new))
        for commas in (False, True) if abs(old) >= 1000 else (False,):
            sep = "," if commas else ""
            out.append((f"{old:{sep}.{places}f}", f"{new:{sep}.{own}f}"))
    return out


def _places(number: int | float) -> int:
    """The decimals a number is written with (`repr`'s, at most 6)."""
    text = f"{float(number):.6f}".rstrip("0")
    return len(text.split(".")[1])


#: A number written in a text: not part of a word, an id ("PF-102"), a time ("19:30"), a date or a larger number.
_NUMBER_BEFORE, _NUMBER_AFTER = r"(?<![\w.,:/])(?<!\w-)", r"(?![\w]|[.,:/]\d)"


#: Where a sentence opens (a word written capitalised there only because it opens it).
_INITIAL = r"(?:^|(?<=[.!?] )|(?<=\n))"


def _pattern(form: str, number: bool = False, digits: bool = False) -> str:
    if digits:  # an id's or a phone number's run of digits, whatever stands between them: "(555) 904-2218"
        return rf"(?<![A-Za-z0-9]){re.escape(form)}(?![A-Za-z0-9])"
    return (_NUMBER_BEFORE + re.escape(form) + _NUMBER_AFTER) if number else rf"(?<!\w){re.escape(form)}(?!\w)"


@dataclass
class Mentions:
    """How a seed's messages may say its remapped values, and what a recast says instead (module docstring).

    `forms`: a written form -> the new value written the same way (exact case); `numbers`: the forms that are
    numbers (their boundaries differ: "102" in "PF-102" is no number); `tells`: patterns of old values in forms
    nothing maps, found in what the substitution left: a leftover.
    """

    forms: dict[str, str] = field(default_factory=dict)
    numbers: set[str] = field(default_factory=set)
    digits: set[str] = field(default_factory=set)
    initial: set[str] = field(default_factory=set)
    tells: list[re.Pattern] = field(default_factory=list)
    #: A run of digits of a value -> the runs it became where the value kept its shape ("555-904-2218").
    _runs: dict[str, set[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, pairs: Iterable[tuple[Any, Any]], people: dict[str, str], vocabulary: frozenset[str],
           text: str) -> Mentions:
        """The mentions of the changed distinctive values among `pairs` (seed value, variant value; the first
        pair of a value wins), of the people the remapper renamed (`people`: whole name -> whole name, so a
        first or family name alone follows it), that `text` (the seed's messages) may hold."""
        out = cls()
        low = text.lower()
        for old, new in pairs:
            if old == new or value_key(old) is None or value_key(new) is None:
                continue
            if isinstance(old, str) and isinstance(new, str) and (
                    is_distinctive(old, vocabulary) or as_date(old) or quoted_in(old, text)):
                # a date moves even where its year is a word the environment keeps; a value the user quotes
                # ('john', a username the vocabulary holds as a word) is that value, whatever its words
                out._text(old, new, low)
            elif not isinstance(old, str) and not isinstance(new, str) and is_distinctive(old, frozenset()):
                out._number(old, new, low)
        kept = {_squashed(old) for old, new in pairs if old == new and isinstance(old, str)
                and re.search(r"\d", old) and re.search(r"[A-Za-z]", old)}
        out._keep_within(kept, text)
        for run, news in out._runs.items():  # after the whole values: a run means its value only where one is
            if len(news) == 1 and run in text:
                out._add(run, next(iter(news)), kind="digits")
        for old, new in people.items():
            (_, name0), (_, name1) = titled(old), titled(new)
            words0, words1 = name0.split(), name1.split()
            if len(words0) == len(words1):
                for w0, w1 in zip(words0, words1):
                    if w0 != w1 and len(w0) >= 3 and w0[:1].isupper() and w0 in text:
                        out._person(w0, w1)
            if old in text:
                out._person(old, new)
        return out

    def _keep_within(self, kept: set[str], text: str) -> None:
        """A number written with the word beside it as part of a value the recast keeps ("the 100 lb gloss" of
        the stock 'gloss_100lb', "size 10" of 'size10') stays as written there: that mention is the kept
        value's, not the number's (it said "50 lb gloss" of a stock that stayed 'gloss_100lb')."""
        for form in [f for f in self.numbers if f in text] if kept else []:
            number = rf"{_NUMBER_BEFORE}{re.escape(form)}{_NUMBER_AFTER}"
            for around in (rf"{number}[ _-]?[A-Za-z]+", rf"(?<![A-Za-z])[A-Za-z]+[ _-]?{number}"):
                for match in re.finditer(around, text):
                    if any(_squashed(match.group(0)) in k for k in kept):
                        self._add(match.group(0), match.group(0))

    def _add(self, old: str, new: str, kind: str = "text") -> None:
        if old and old not in self.forms:
            self.forms[old] = new
            {"number": self.numbers, "digits": self.digits, "initial": self.initial}.get(kind, set()).add(old)

    def _person(self, old: str, new: str) -> None:
        """A name, and its possessive where the new name needs another: "James'" -> "Ana's"; a family name also as
        a family ("the Novaks", "the Ezes'")."""
        self._add(old, new)
        if old.endswith("s") and not new.endswith("s"):
            self._add(f"{old}'", f"{new}'s")
        if " " not in old and old[-1:].isalpha():
            family0, family1 = _family(old), _family(new)
            self._add(family0, family1)
            self._add(f"{family0}'", f"{family1}'")

    def _text(self, old: str, new: str, low: str) -> None:
        day0, day1 = as_date(old), as_date(new)
        if day0 is not None and day1 is not None and day0 != day1:
            self._date(day0, day1)
            self._days_near(day0, day1, low)
        runs0, runs1 = re.findall(r"\d+", old), re.findall(r"\d+", new)
        for run in set(r for r in runs0 if len(r) >= 3) - set(runs1):  # an id's digits alone
            if run in low:
                self.tells.append(re.compile(rf"(?<!\d){run}(?!\d)"))
                if re.sub(r"\d+", "0", old) == re.sub(r"\d+", "0", new):  # the same shape: runs align
                    for r0, r1 in zip(runs0, runs1):
                        if r0 == run:
                            self._runs.setdefault(r0, set()).add(r1)
        if old.lower() not in low:
            return
        self._add(old, new)
        if any(not c.isalpha() for c in old):  # an id, a name of words: any case is the same value
            self._add(old.lower(), new.lower())
            self._add(old.upper(), new.upper())
            self.tells.append(re.compile(_pattern(old, False), re.IGNORECASE))
        elif old.islower():  # a word that opens a sentence (not one in the middle: 'simona', a folder, is no Simona)
            self._add(old.capitalize(), new[:1].upper() + new[1:], kind="initial")
        if old[-1:].islower() and new[-1:].isalpha() and plural(old) != old:  # "12 of the claw hammers"
            self._add(plural(old), plural(new))
        self.tells.append(re.compile(_pattern(old, False)))

    def _date(self, old: dt.date, new: dt.date) -> None:
        for sept in (False, True):
            parts0, parts1 = _date_parts(old, sept), _date_parts(new, sept)
            for form in DATE_FORMS:
                self._add(form.format(**parts0), form.format(**parts1))
        for form in NUMERIC_DATES:
            self.tells.append(re.compile(_pattern(form.format(**_date_parts(old)), True)))
        if (old.year, old.month) != (new.year, new.month):  # "next month, which is November": the month moved too
            parts0, parts1 = _date_parts(old), _date_parts(new)
            for form in MONTH_FORMS:
                self._add(form.format(**parts0), form.format(**parts1))
            self.tells.append(re.compile(rf"(?<!\w){parts0['B']}(?!\w)"))

    def _days_near(self, old: dt.date, new: dt.date, low: str) -> None:
        """Another day of the date's month that the words write near its name moves with the date ("two days after
        the 14th of November" of the 16th: moved two weeks, "the 28th"); one that would leave the new date's month
        is a leftover."""
        month = calendar.month_name[old.month].lower()
        last = calendar.monthrange(old.year, old.month)[1]
        for m in re.finditer(r"(?<![\w.])(\d{1,2})(?:st|nd|rd|th)(?!\w)", low):
            k = int(m.group(1))
            near = low[max(0, m.start() - DAY_REACH):m.end() + DAY_REACH]
            if k == old.day or not 1 <= k <= last or not re.search(rf"(?<!\w){month}(?!\w)", near):
                continue
            moved = dt.date(old.year, old.month, k) + (new - old)
            if (moved.year, moved.month) == (new.year, new.month):
                self._add(_ordinal(k), _ordinal(moved.day))
            self.tells.append(re.compile(rf"(?<![\w.]){_ordinal(k)}(?!\w)"))

    def _number(self, old: int | float, new: int | float, low: str) -> None:
        if float(old).is_integer():  # a number spelled out: found, not rewritten
            self.tells += [re.compile(rf"(?<![\w-]){re.escape(words)}(?![\w-])", re.IGNORECASE)
                           for words in spelled(int(abs(old))) if words in low]
        if str(int(abs(old))) not in low and f"{int(abs(old)):,}" not in low:
            return
        for form, written in _number_forms(old, new):
            self._add(form, written, kind="number")
            self.tells.append(re.compile(_pattern(form, True)))

    def apply(self, text: str) -> tuple[str, list[str]]:
        """`text` with every mention replaced, in one pass (longest form first), and the old values' forms left
        in it (found outside the replaced spans)."""
        present = sorted((f for f in self.forms if f in text), key=lambda f: (-len(f), f))
        if present:
            found = re.compile("|".join((_INITIAL if f in self.initial else "")
                                        + _pattern(f, f in self.numbers, f in self.digits) for f in present))
            spans = [(m.start(), m.end(), self.forms[m.group(0)]) for m in found.finditer(text)]
        else:
            spans = []
        new, masked, at = [], [], 0
        for start, end, written in spans:
            new += [text[at:start], written]
            masked += [text[at:start], "\0" * (end - start)]
            at = end
        new.append(text[at:])
        masked.append(text[at:])
        rest = "".join(masked)
        return "".join(new), sorted({m.group(0) for tell in self.tells for m in tell.finditer(rest)})


def recast_question(question: list[list[dict[str, Any]]], mentions: Mentions) -> list[list[dict[str, Any]]]:
    """The seed's `question` (turns of messages) with each message's mentions replaced; a message with an old
    value left raises `Rejected("recast:leftover_value")`, one that is itself a value (a call writes the
    user's question down) `Rejected("recast:message_is_value")`."""
    out = []
    for turn in question:
        messages = []
        for message in turn:
            if _bare(message["content"]) in {_bare(f) for f in mentions.forms}:
                raise Rejected("recast:message_is_value")  # a call writes the user's words down: they would change
            text, left = mentions.apply(message["content"])
            if left:
                raise Rejected("recast:leftover_value")
            messages.append({**message, "content": text})
        out.append(messages)
    return out


def _family(name: str) -> str:
    """A family name said of the family: "Novak" -> "Novaks", "Eze" -> "Ezes", "Walsh" -> "Walshes"."""
    return f"{name}es" if re.search(r"(s|x|z|ch|sh)$", name) else f"{name}s"


def _squashed(text: str) -> str:
    """Letters and digits only, lower case: 'gloss_100lb' and "100 lb" alike."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _bare(text: str) -> str:
    return text.strip().rstrip(".!?").strip().lower()


def message_text(question: list[list[Any]]) -> str:
    """Every message of a question, one text (what `Mentions.of` looks for values in)."""
    return "\n".join(m["content"] if isinstance(m, dict) else m.content for turn in question for m in turn)
