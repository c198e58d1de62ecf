"""A second synthesis strategy: recast a seed, its plan and its words kept, its world new (docs/design.md §4.12).

A re-planned variant (`rods.synth.planner.Planner.plan`) composes a new call
sequence and writes its requests from parts; blind reads found almost none of
those coherent. A *recast* keeps what people wrote, the seed's own plan and
words, and changes the world they are about:

* **state**: the seed's initial config through the planner's `ValueRemapper`
  (people renamed as people, dates moved by whole weeks, ids re-drawn in their
  format, categories kept), as every variant's;
* **calls**: the seed's gold calls, the same function at every position, their
  arguments through the same mapping (`paired` reads it off the two states);
  an argument the seed took from an earlier call's result is bound to that
  result (`PlannedCall.bindings`), so the ids the simulator makes still flow;
* **words**: every user message of the seed, each mention of a remapped value
  replaced by its new value (`Mentions`): whole values, longest first, word-bounded,
  as written (an id in lower case, a number with its decimals and commas, a date
  in the usual English prose forms moved by the same weeks, a person's first
  or family name alone, a possessive). A message that still holds an old value
  in a form nothing here maps (a date written 04/25, a number spelled out, an
  id's digits alone) is not emitted: the variant is rejected
  (``recast:leftover_value``), never written with old and new values mixed.

A recast has its seed's profile by construction (same functions, flows and
turns) and passes every check a variant passes: execution, coherence, the
judge and the gate (`rods.synth.pipeline`).
"""

from __future__ import annotations

import calendar
import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from rods.envs.calls import ToolCall
from rods.llm.outcomes import plural, singular
from rods.synth.dates import as_date
from rods.synth.executor import Execution, Executor
from rods.synth.findings import is_empty, reads_what_it_made, tells_nothing
from rods.synth.gate import Rejected
from rods.synth.people import titled
from rods.synth.plan import Plan, PlannedCall
from rods.synth.profile import Trace, linkable, parse_ground_truth, produced_values, result_value, value_paths
from rods.synth.values import ValueRemapper, is_distinctive, is_phrase
from rods.tasks.model import Task

Scalar = str | int | float


def _key(value: Any) -> tuple[str, Any] | None:
    """A scalar as a mapping key: strings and numbers apart ("102" is not 102), None for anything else."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, (int, float)):
        return ("n", float(value))
    return None


def paired(old: Any, new: Any) -> Iterator[tuple[Any, Any]]:
    """(seed value, variant value) of every scalar and map key of two values of one shape: a state and its
    remapped copy (the remapper keeps a dict's order), or a seed's argument and the variant's."""
    if isinstance(old, dict) and isinstance(new, dict):
        if len(old) == len(new):
            for (k0, v0), (k1, v1) in zip(old.items(), new.items()):
                yield k0, k1
                yield from paired(v0, v1)
        else:  # a key dropped or added (two keys drawn alike): pair what is there by name
            for k in old.keys() & new.keys():
                yield from paired(old[k], new[k])
    elif isinstance(old, (list, tuple)) and isinstance(new, (list, tuple)):
        if len(old) == len(new):
            for a, b in zip(old, new):
                yield from paired(a, b)
    elif _key(old) is not None and _key(new) is not None:
        yield old, new


def mapping(pairs: Iterable[tuple[Any, Any]]) -> dict[tuple[str, Any], Any]:
    """Seed value -> variant value, the first pair of a value winning."""
    out: dict[tuple[str, Any], Any] = {}
    for old, new in pairs:
        key = _key(old)
        if key is not None:
            out.setdefault(key, new)
    return out


def state_mapping(seed_config: dict[str, Any], config: dict[str, Any]) -> dict[tuple[str, Any], Any]:
    """Seed value -> variant value over two initial configs (class by class, `paired`)."""
    return mapping(pair for cls, value in seed_config.items() for pair in paired(value, config.get(cls)))


# ----------------------------------------------------------------------------------- calls


def _source(value: Any, j: int, trace: Trace, produced: list[set]) -> tuple[int, tuple] | None:
    """Where the seed's call j took `value` from: (the latest earlier call that produced it, its path in that
    call's result), as `rods.synth.profile.incoming_edges` finds flows; None for a value of the state, the
    user's own, or one a call made without returning it (then the state's mapping carries it)."""
    if _key(value) is None or not linkable(value):
        return None
    for i in range(j - 1, -1, -1):
        if value in produced[i]:
            paths = [p for p, v in value_paths(result_value(trace.results[i]))
                     if _key(v) is not None and isinstance(v, str) == isinstance(value, str) and v == value]
            return (i, paths[0]) if paths else None
    return None


def said_texts(seeds: Iterable[Task]) -> dict[str, list[str]]:
    """"function.param" -> the phrases the environment's seeds passed there (a damage note, a refund's reason):
    what a recast passes in place of its seed's own, rather than its words re-drawn one by one."""
    out: dict[str, set[str]] = {}
    for seed in seeds:
        try:
            calls = [c for turn in parse_ground_truth(seed) for c in turn]
        except ValueError:
            continue
        for call in calls:
            for param, value in call.arguments.items():
                if is_phrase(value):
                    out.setdefault(f"{call.name}.{param}", set()).add(value)
    return {key: sorted(texts) for key, texts in out.items()}


def recast_calls(trace: Trace, remapper: ValueRemapper, state: dict[tuple[str, Any], Any],
                 owners: dict[str, str] | None = None, texts: dict[str, list[str]] | None = None
                 ) -> list[PlannedCall]:
    """The seed's calls as fixed plan positions: each argument mapped as the state was (`state`: seed value ->
    variant value, from `paired`), a read's search term as the part of a state value it is (`part_of`), else by
    `ValueRemapper.argument` (a phrase the user gives as another seed gave it there: `texts`, from `said_texts`;
    `owners`: function -> its class, whose sentences a sentence becomes); one taken from an earlier result bound
    to it (`bindings`: "param", "param[k]" for a list's item, "#i" for a positional argument)."""
    produced = [produced_values(r, c) for r, c in zip(trace.results, trace.created)]

    said: dict[tuple[str, Any], Any] = {}  # a value an earlier call was given -> its new value: one mapping

    def new(value: Any, function: str, param: str, reads: bool = False) -> Any:
        key = _key(value)
        if key is not None and key in state:
            return state[key]
        if key is not None and key in said:
            return said[key]
        if isinstance(value, list):
            return [new(v, function, param, reads) for v in value]
        part = None
        if isinstance(value, str) and reads and is_distinctive(value, remapper.vocabulary):
            part = part_of(value, state)
        if part is None and is_phrase(value) and is_distinctive(value, remapper.vocabulary):
            part = remapper.said_instead(value, (texts or {}).get(f"{function}.{param}", []))
        out = part if part is not None else remapper.argument(value, function, param, (owners or {}).get(function))
        if key is not None:
            said[key] = out
        return out

    calls = []
    for j, call in enumerate(trace.calls):
        bindings: dict[str, tuple[int, tuple]] = {}
        for slot, value in [*call.arguments.items(), *((f"#{i}", v) for i, v in enumerate(call.args))]:
            items = [(f"{slot}[{k}]", v) for k, v in enumerate(value)] if isinstance(value, list) else [(slot, value)]
            for key, item in items:
                source = _source(item, j, trace, produced)
                if source is not None:
                    bindings[key] = source
        reads = bool(trace.changed) and not trace.changed[j]  # a search's terms (a write's new names are no part)
        calls.append(PlannedCall(
            call.name, {p: new(v, call.name, p, reads) for p, v in call.arguments.items()},
            tuple(new(v, call.name, "", reads) for v in call.args), bindings, turn=trace.turn_of[j],
            original=call.name, changed=trace.changed[j] if trace.changed else None))
    return calls


def part_of(term: str, state: dict[tuple[str, Any], Any]) -> str | None:
    """A search term made of words of a state value the remapper changed ('cordless drill' of 'Cordless Drill
    Driver 18V', 'nitrile gloves' of 'Nitrile Work Gloves'): the words at the same places of its new value, in
    the term's case (a company's first words, 'Greenfield' of 'Greenfield Facilities Management', its new name's
    first words without its ending: 'Pons' of 'Pons S.L.U.'); words next to each other first, a value whose
    words there changed first. None when the term is words of no such value."""
    words = [singular(w.lower()) for w in term.split()]
    if not words:
        return None
    found: str | None = None
    for contiguous in (True, False):
        for (kind, old), new in state.items():
            if kind != "s" or not isinstance(new, str) or old == new or len(old) <= len(term):
                continue
            olds, news = old.split(), new.split()
            places = _places_of(words, [singular(w.lower().strip(",.;:()")) for w in olds], contiguous)
            if places is None or not news or not _aligned(olds, news):
                continue
            if len(olds) != len(news):  # a company renamed with a name of another length: its first words
                if places != list(range(len(places))):
                    continue
                places = list(range(min(len(places), max(1, len(news) - 1))))
            part = " ".join(news[i].strip(",.;:()") for i in places)
            part = part.lower() if term.islower() else part
            if part.lower() != term.lower():
                return part
            found = found or part
    return found or _words_of_new(words, term, state)


def _words_of_new(words: list[str], term: str, state: dict[tuple[str, Any], Any]) -> str | None:
    """A search term within a text drawn whole anew ('budget analysis' of a file's sentence): as many words of the
    new text, of letters, nearest the term's place in the old one, so a search of it still finds the text."""
    for (kind, old), new in state.items():
        if kind != "s" or not isinstance(new, str) or old == new:
            continue
        olds = [singular(w.lower().strip(",.;:()!?'\"")) for w in old.split()]
        at = _places_of(words, olds, True)
        if at is None:
            continue
        news = [w.strip(",.;:()!?'\"") for w in new.split()]
        starts = sorted(range(len(news) - len(words) + 1), key=lambda i: abs(i - at[0]))
        for i in starts:
            window = news[i:i + len(words)]
            if all(w.isalpha() and len(w) >= 3 for w in window):
                part = " ".join(window)
                return part.lower() if term.islower() else part
    return None


def _aligned(olds: list[str], news: list[str]) -> bool:
    """Whether a value's words and its new value's stand word for word: names (capitalised words each, renamed
    word by word, or a company's of another length), or a phrase that kept half its words where they were (a
    title with one word swapped); a sentence drawn whole in its place is not."""
    if all(w[:1].isupper() for w in [*olds, *news]):
        return True
    return len(olds) == len(news) and 2 * sum(a == b for a, b in zip(olds, news)) >= len(olds)


def _places_of(words: list[str], within: list[str], contiguous: bool) -> list[int] | None:
    """Where `words` stand in `within`: next to each other, or in order with others between; None if not."""
    if contiguous:
        return next((list(range(i, i + len(words))) for i in range(len(within) - len(words) + 1)
                     if within[i:i + len(words)] == words), None)
    places, at = [], 0
    for word in words:
        at = next((i for i in range(at, len(within)) if within[i] == word), -1)
        if at < 0:
            return None
        places.append(at)
        at += 1
    return places


def _item(call: ToolCall, key: str) -> Any:
    """The argument a binding key names ("param", "param[k]", "#i"), or None."""
    name, _, item = key.partition("[")
    if name.startswith("#"):
        value = call.args[int(name[1:])] if int(name[1:]) < len(call.args) else None
    else:
        value = call.arguments.get(name)
    if item and isinstance(value, list):
        k = int(item.rstrip("]"))
        value = value[k] if k < len(value) else None
    return value


def rebind(planned: list[PlannedCall], results: list[str], seed_calls: list[ToolCall],
           state: dict[tuple[str, Any], Any]) -> bool:
    """Move each binding to where its value's new one sits in its source's result, where that is known (a value
    of the state) and the seed's path holds another: a list the variant's result orders anew (by a name, an id)
    puts the record the words name elsewhere. Whether any binding moved (then the plan runs again)."""
    moved = False
    for call, own in zip(planned, seed_calls):
        for key, (src, path) in call.bindings.items():
            expected = state.get(_key(_item(own, key)))  # type: ignore[arg-type]
            if expected is None or _key(expected) is None or src >= len(results):
                continue
            leaves = value_paths(result_value(results[src]))
            if any(p == path and _key(v) == _key(expected) for p, v in leaves):
                continue
            there = next((p for p, v in leaves if _key(v) == _key(expected)), None)
            if there is not None:
                call.bindings[key] = (src, there)
                moved = True
    return moved


def moved_flows(seed_calls: list[ToolCall], calls: list[ToolCall], planned: list[PlannedCall],
                state: dict[tuple[str, Any], Any]) -> list[str]:
    """Bound arguments that reached another value than the state's mapping gives their seed value (no place of
    their source's result holds it: `rebind`), so the call would act on another record than the one the words
    name. "function(key)" per such argument."""
    out = []
    for own, ran, plan in zip(seed_calls, calls, planned):
        for key in plan.bindings:
            seed_value = _item(own, key)
            expected = state.get(_key(seed_value)) if _key(seed_value) is not None else None  # type: ignore[arg-type]
            if expected is not None and _key(expected) != _key(_item(ran, key)):
                out.append(f"{own.name}({key})")
    return out


def seed_dates(values: Iterable[Any]) -> set[dt.date]:
    """The dates among a seed's values (its state's and its calls'), ISO-written."""
    return {day for v in values if (day := as_date(v)) is not None}


def run(executor: Executor, plan: Plan, trace: Trace, state: dict[tuple[str, Any], Any]) -> Execution:
    """A recast's plan run; a binding whose value its source's result holds elsewhere is moved there (`rebind`)
    and the plan run again (each run moves the bindings of one call at least)."""
    execution = executor.run(plan)
    for _ in plan.calls:
        if not rebind(plan.calls, execution.results, trace.calls, state):
            break
        execution = executor.run(plan)
    return execution


def hollow_reads(seed: Trace, trace: Trace) -> list[int]:
    """Positions where a recast's read (`trace`) tells nothing (an empty result, its own words back:
    `tells_nothing`) or nothing in what the task just made (`reads_what_it_made`) where its seed's read told
    something: the words ask for an answer the new world does not have (two files whose new texts are alike)."""

    def hollow(t: Trace, j: int) -> bool:
        made = zip(t.calls[:j], t.changed[:j], t.created_at[:j])
        return is_empty(t.results[j]) or tells_nothing(t.calls[j], t.results[j]) or \
            reads_what_it_made(t.calls[j], t.results[j], made)

    return [j for j in range(min(len(seed.calls), len(trace.calls)))
            if not seed.changed[j] and hollow(trace, j) and not hollow(seed, j)]


def free_shift(dates: Iterable[dt.date], drawn: int) -> int:
    """A move of whole weeks that puts no date of the seed on another of its dates (weekly performances moved by
    two weeks would copy the seed's later ones: the gate refuses a copied value): the drawn one if it does, else
    the nearest that does, up to a year away; the drawn one if none does."""
    days = set(dates)
    for weeks in sorted(range(-52, 53), key=lambda w: (abs(7 * w - drawn), -w * drawn)):
        shift = 7 * weeks
        if weeks and not any(d + dt.timedelta(days=shift) in days for d in days):
            return shift
    return drawn


# ----------------------------------------------------------------------------------- words

#: English prose forms of a date (`d` day, `o` ordinal day, `B` month, `b` its abbreviation, `Y` year): the forms
#: a person writes, each said of the new date in the same form.
DATE_FORMS = ("{d} {B}", "{d} {b}", "{o} {B}", "{o} {b}", "{B} {d}", "{b} {d}", "{B} {o}", "{b} {o}", "{o} of {B}",
              "{d} {B} {Y}", "{d} {b} {Y}", "{o} {B} {Y}", "{d} {B}, {Y}", "{B} {d}, {Y}", "{B} {d} {Y}",
              "{b} {d}, {Y}", "{b} {d} {Y}", "{B} {o}, {Y}", "{B} {o} {Y}", "{o} of {B} {Y}", "{o} of {B}, {Y}",
              "the {o}")
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
            "m": day.month, "dd": f"{day.day:02d}", "mm": f"{day.month:02d}"}


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
            if old == new or _key(old) is None or _key(new) is None:
                continue
            if isinstance(old, str) and isinstance(new, str) and (is_distinctive(old, vocabulary) or as_date(old)):
                out._text(old, new, low)  # a date moves even where its year is a word the environment keeps
            elif not isinstance(old, str) and not isinstance(new, str) and is_distinctive(old, frozenset()):
                out._number(old, new, low)
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

    def _add(self, old: str, new: str, kind: str = "text") -> None:
        if old and old not in self.forms:
            self.forms[old] = new
            {"number": self.numbers, "digits": self.digits, "initial": self.initial}.get(kind, set()).add(old)

    def _person(self, old: str, new: str) -> None:
        """A name, and its possessive where the new name needs another: "James'" -> "Ana's"."""
        self._add(old, new)
        if old.endswith("s") and not new.endswith("s"):
            self._add(f"{old}'", f"{new}'s")

    def _text(self, old: str, new: str, low: str) -> None:
        day0, day1 = as_date(old), as_date(new)
        if day0 is not None and day1 is not None and day0 != day1:
            self._date(day0, day1)
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


def _bare(text: str) -> str:
    return text.strip().rstrip(".!?").strip().lower()


def message_text(question: list[list[Any]]) -> str:
    """Every message of a question, one text (what `Mentions.of` looks for values in)."""
    return "\n".join(m["content"] if isinstance(m, dict) else m.content for turn in question for m in turn)


def as_seed(plan: Plan, trace: Trace, config: dict[str, Any]) -> Plan:
    """A recast's plan with its seed's own config and values: the seed, judged as its recasts are."""
    calls = [replace(c, arguments=dict(own.arguments), args=tuple(own.args)) for c, own in zip(plan.calls, trace.calls)]
    return replace(plan, calls=calls, initial_config=config)


def argument_pairs(seed_calls: list[ToolCall], calls: list[ToolCall]) -> list[tuple[Any, Any]]:
    """(seed argument, variant argument) of every call position, lists and records item by item."""
    out: list[tuple[Any, Any]] = []
    for old, new in zip(seed_calls, calls):
        out += paired(json.loads(json.dumps(list(old.args))), json.loads(json.dumps(list(new.args))))
        out += paired(json.loads(json.dumps(old.arguments)), json.loads(json.dumps(new.arguments)))
    return out
