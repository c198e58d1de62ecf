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
  replaced by its new value (`rods.synth.mentions`): whole values, longest first, word-bounded,
  as written (an id in lower case, a number with its decimals and commas, a date
  in the usual English prose forms moved by the same weeks, a person's first
  or family name alone, a possessive). A message that still holds an old value
  in a form nothing here maps (a date written 04/25, a number spelled out, an
  id's digits alone) is not emitted: the variant is rejected
  (``recast:leftover_value``), never written with old and new values mixed.

Which of the seed's values change is `rods.synth.touched`'s to say. A recast
has its seed's profile by construction (same functions, flows and turns) and
passes every check a variant passes: execution, coherence, the judge and the
gate (`rods.synth.pipeline`).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from functools import cache
from typing import Any

import holidays

from rods.envs.calls import ToolCall
from rods.llm.outcomes import singular
from rods.synth.dates import as_date
from rods.synth.executor import Execution, Executor
from rods.synth.findings import is_empty, reads_what_it_made, tells_nothing
from rods.synth.mentions import value_key
from rods.synth.people import folded, follow_renames, is_person_name, plain
from rods.synth.plan import Plan, PlannedCall
from rods.synth.profile import Trace, linkable, parse_ground_truth, produced_values, result_value, value_paths
from rods.synth.touched import written_in
from rods.synth.value_kinds import SMALL_INT, is_distinctive, is_kept_word, is_phrase, is_prose
from rods.synth.values import ValueRemapper
from rods.tasks.model import Task

Scalar = str | int | float


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
    elif value_key(old) is not None and value_key(new) is not None:
        yield old, new


def mapping(pairs: Iterable[tuple[Any, Any]]) -> dict[tuple[str, Any], Any]:
    """Seed value -> variant value, the first pair of a value winning."""
    out: dict[tuple[str, Any], Any] = {}
    for old, new in pairs:
        key = value_key(old)
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
    if value_key(value) is None or not linkable(value):
        return None
    for i in range(j - 1, -1, -1):
        if value in produced[i]:
            paths = [p for p, v in value_paths(result_value(trace.results[i]))
                     if value_key(v) is not None and isinstance(v, str) == isinstance(value, str) and v == value]
            return (i, paths[0]) if paths else None
    return None


def follow_runs(seed_config: Any, config: Any) -> Any:
    """A recast's remapped state with what it kept of an id's digits following the id: a value that holds a run of
    four or more digits (not a year; standing alone, as in '-8970') that a re-drawn id of the same shape no longer
    holds takes the id's new run ('primary_8970' became 'primary_0982', and its card number ending 8970 now ends
    0982). Else a reader finds a card whose id no longer matches its number."""
    runs: dict[str, str] = {}
    for old, new in paired(seed_config, config):
        if not (isinstance(old, str) and isinstance(new, str)) or old == new:
            continue
        if re.sub(r"\d+", "0", old) != re.sub(r"\d+", "0", new):
            continue
        for run0, run1 in zip(re.findall(r"\d+", old), re.findall(r"\d+", new)):
            if len(run0) >= 4 and run0 != run1 and not re.fullmatch(r"(?:19|20)\d\d", run0):
                runs.setdefault(run0, run1)
    if not runs:
        return config
    pattern = re.compile(r"(?<![0-9A-Za-z])(?:" + "|".join(map(re.escape, runs)) + r")(?![0-9A-Za-z])")

    def follow(value: Any) -> Any:
        if isinstance(value, dict):
            return {follow(k): follow(v) for k, v in value.items()}
        if isinstance(value, list):
            return [follow(v) for v in value]
        if isinstance(value, str):
            return pattern.sub(lambda m: runs[m.group(0)], value)
        return value

    return follow(config)


def follow_people(value: Any, people: dict[str, str]) -> Any:
    """A recast's remapped state with what its kept values say of the people it renamed renamed too: a customer's
    email, a company named after its owner, a note naming a guest (`rods.synth.people.follow_renames`); map keys
    (usernames) too. Else a reader finds 'Robert Boucher' of 'Webb & Sons Roofing' writing as marcus@."""
    if not people:
        return value
    if isinstance(value, dict):
        return {follow_people(k, people): follow_people(v, people) for k, v in value.items()}
    if isinstance(value, list):
        return [follow_people(v, people) for v in value]
    if isinstance(value, str) and value not in people.values():
        return follow_renames(value, people)
    return value


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
                 owners: dict[str, str] | None = None, texts: dict[str, list[str]] | None = None,
                 failing: frozenset[tuple[int, int]] = frozenset(), told: str = "") -> list[PlannedCall]:
    """The seed's calls as fixed plan positions: each argument mapped as the state was (`state`: seed value ->
    variant value, from `paired`), a read's search term as the part of a state value it is (`part_of`), else by
    `ValueRemapper.argument` (a phrase the user gives as another seed gave it there: `texts`, from `said_texts`;
    `owners`: function -> its class, whose sentences a sentence becomes); one taken from an earlier result bound
    to it (`bindings`: "param", "param[k]" for a list's item, "#i" for a positional argument). A call at a
    (turn, index) of `failing` (`Task.expected_error_calls`) is meant to fail, as its seed's was. A phrase the
    messages (`told`) tell in their own words stays: another seed's would contradict them (a grinding fan's
    work order described as a dripping sink)."""
    produced = [produced_values(r, c) for r, c in zip(trace.results, trace.created)]

    said: dict[tuple[str, Any], Any] = {}  # a value an earlier call was given -> its new value: one mapping

    def new(value: Any, function: str, param: str, reads: bool = False) -> Any:
        key = value_key(value)
        if key is not None and key in state:
            return same_type(value, state[key])
        if key is not None and key in said:
            return same_type(value, said[key])
        typed = typed_as(value, state)
        if typed is not None:
            return typed
        if isinstance(value, list):
            return [new(v, function, param, reads) for v in value]
        if isinstance(value, str) and value in remapper.names:
            return remapper.names[value]
        if isinstance(value, str) and is_prose(value) and any(c.isdigit() for c in value):
            said[key] = out = numbers_followed(value, state)  # a post of the state's numbers tells the new state's
            return out
        part = None
        if isinstance(value, str) and reads and is_distinctive(value, remapper.vocabulary):
            part = part_of(value, state)
        if part is None and is_phrase(value) and is_distinctive(value, remapper.vocabulary) \
                and not _names_someone(value, function, param, remapper) \
                and not tells_of(told, value, remapper.vocabulary):
            part = remapper.said_instead(value, (texts or {}).get(f"{function}.{param}", []))
        out = part if part is not None else remapper.argument(value, function, param, (owners or {}).get(function))
        if key is not None:
            said[key] = out
        return out

    calls = []
    fails = meant_to_fail(trace, failing)
    for j, call in enumerate(trace.calls):
        bindings: dict[str, tuple[int, tuple]] = {}
        rounded: dict[str, int] = {}
        for slot, value in [*call.arguments.items(), *((f"#{i}", v) for i, v in enumerate(call.args))]:
            items = [(f"{slot}[{k}]", v) for k, v in enumerate(value)] if isinstance(value, list) else [(slot, value)]
            for key, item in items:
                source = _source(item, j, trace, produced)
                if source is None and value_key(item) not in state and not (told and written_in(item, told)):
                    source, places = worked_out(item, j, trace)
                    if source is not None:
                        rounded[key] = places
                if source is not None:
                    bindings[key] = source
        reads = bool(trace.changed) and not trace.changed[j]  # a search's terms (a write's new names are no part)
        calls.append(PlannedCall(
            call.name, {p: new(v, call.name, p, reads) for p, v in call.arguments.items()},
            tuple(new(v, call.name, "", reads) for v in call.args), bindings, turn=trace.turn_of[j],
            original=call.name, changed=trace.changed[j] if trace.changed else None,
            fails=fails[j], rounded=rounded))
    for call in calls:  # once every person is renamed: what a call says of them (a new applicant's email) follows
        call.arguments = {p: follow_people(v, remapper.people) for p, v in call.arguments.items()}
        call.args = tuple(follow_people(v, remapper.people) for v in call.args)
    return calls


def typed_as(value: Any, state: dict[tuple[str, Any], Any]) -> str | None:
    """A value a call passes that is a state's text typed otherwise (without its accents, in lower case: a clerk's
    find_patient(name='Lucia Fernandez') of 'Lucía Fernández'): the state's new text typed the same way; None when
    no state text is typed so. Mapped as a value of its own, the clerk searched for somebody nobody knew."""
    if not isinstance(value, str) or len(value) < 3:
        return None
    typed = folded(value)
    for (kind, old), new in state.items():
        if kind == "s" and isinstance(old, str) and isinstance(new, str) and old != value and folded(old) == typed:
            if plain(value) == value:  # typed without accents: the new name is too
                new = plain(new)
            return new.lower() if value.islower() else new.upper() if value.isupper() else new
    return None


def meant_to_fail(trace: Trace, failing: frozenset[tuple[int, int]]) -> list[bool]:
    """Per call of the seed's trace, whether it is at a (turn, index in turn) of `failing`
    (`Task.expected_error_calls`): a call its seed marks as meant to fail."""
    return [(turn, trace.turn_of[:j].count(turn)) in failing for j, turn in enumerate(trace.turn_of)]


#: A number written in a text, whole: not a part of a word, a code or a longer number.
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:\.\d+)?(?![\w]|[.,]\d)")


def numbers_followed(text: str, state: dict[tuple[str, Any], Any]) -> str:
    """A text with each number the state mapping changes written as its new value ("Rear Left Tire: 30 PSI" of a
    tire whose 30 became 40 says 40), the rest as it was."""
    def swap(match: re.Match) -> str:
        old = float(match.group())
        new = state.get(("n", old))
        if not isinstance(new, (int, float)) or isinstance(new, bool) or float(new) == old:
            return match.group()
        return str(int(new)) if float(new).is_integer() and "." not in match.group() else str(new)
    return _NUMBER.sub(swap, text)


def same_type(old: Any, new: Any) -> Any:
    """`new` as a number of `old`'s type where it is that number exactly: numbers are mapped by value (3 and 3.0
    are one key), so a count of 3 guests took the type of a price of 3.0 the state kept ('guests=3.0')."""
    if isinstance(new, bool) or isinstance(old, bool):
        return new
    if isinstance(old, int) and isinstance(new, float) and new.is_integer():
        return int(new)
    if isinstance(old, float) and isinstance(new, int) and not isinstance(new, bool):
        return float(new)
    return new


def worked_out(value: Any, j: int, trace: Trace) -> tuple[tuple[int, tuple] | None, int]:
    """Where the seed's call j took a number it worked out from an earlier result, rounded ('fill 43.85
    gallons' of 43.852 that a conversion of 166 litres returned; 40.0 of 39.63, "to the nearest integer"):
    (the latest such call, the path in its result) and the decimals it was rounded to, or (None, 0). A recast
    rounds its own result alike, so the amount follows the litres the user now says. Only a number that a
    small count or a flag could not be taken for: one with decimals, or above `SMALL_INT`."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None, 0
    places = len(repr(float(value)).partition(".")[2].rstrip("0"))
    if places > 4 or (places == 0 and abs(value) <= SMALL_INT):
        return None, 0
    for i in range(j - 1, -1, -1):
        for path, number in value_paths(result_value(trace.results[i])):
            if isinstance(number, (int, float)) and not isinstance(number, bool) and number != value \
                    and round(number, places) == value:
                return (i, path), places
    return None, 0


def tells_of(text: str, phrase: str, vocabulary: frozenset[str]) -> bool:
    """Whether `text` (the messages) tells what `phrase` says: two or more of the phrase's own words (four
    letters or more, not the environment's vocabulary) are in it, by their first five letters ('grinding' and
    'grinds', 'running' and 'runs' aside)."""
    said = {w.lower()[:5] for w in re.findall(r"[A-Za-z]{4,}", text)}
    own = {w.lower()[:5] for w in re.findall(r"[A-Za-z]{4,}", phrase) if not is_kept_word(w, vocabulary)}
    return len(own & said) >= 2


def _names_someone(value: Any, function: str, param: str, remapper: ValueRemapper) -> bool:
    """Whether an argument names a person or a company (by its slot in the value model, or its shape): renamed as
    such, never swapped for what another seed passed there (a new player 'Yusuf Demir' became another seed's
    'Amara Okafor' while the words still said Yusuf)."""
    model = remapper.model
    slot = model.parameter(function, param) if model is not None else None
    return (slot is not None and slot.kind in ("person", "company")) or \
        is_person_name(value, model.people if model is not None else frozenset())


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
            if key in call.rounded:
                continue
            expected = state.get(value_key(_item(own, key)))  # type: ignore[arg-type]
            if expected is None or value_key(expected) is None or src >= len(results):
                continue
            leaves = value_paths(result_value(results[src]))
            if any(p == path and value_key(v) == value_key(expected) for p, v in leaves):
                continue
            there = next((p for p, v in leaves if value_key(v) == value_key(expected)), None)
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
        for key in plan.bindings.keys() - plan.rounded.keys():  # a rounded amount is worked out, not the state's
            seed_value = _item(own, key)
            expected = state.get(value_key(seed_value)) if value_key(seed_value) is not None else None  # type: ignore[arg-type]
            if expected is not None and value_key(expected) != value_key(_item(ran, key)):
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


def free_shift(dates: Iterable[dt.date], drawn: int, weeks: int = 4) -> int:
    """A move of one to `weeks` whole weeks that puts no date of the seed on another of its dates (weekly
    performances moved by two weeks would name the seed's later ones): the drawn one if it does, else the nearest
    that does; the drawn one if none does (a move is kept short so that a season stays a season: a "holiday
    adoption event" moved from December to September; the gate takes a date moved onto another for no copy)."""
    days = set(dates)
    for move in sorted([w for w in range(-weeks, weeks + 1) if w], key=lambda w: (abs(7 * w - drawn), -w * drawn)):
        if not any(d + dt.timedelta(days=7 * move) in days for d in days):
            return 7 * move
    return drawn


#: Words that tell a date by its place in its month: a move of whole weeks breaks them.
_ORDINAL_WORDS = ("first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth")
_PLACED = re.compile(r"(?<!\w)(?:(?:first|last|final)\s+day\s+of"
                     rf"|(?:{_ORDINAL_WORDS}|\d{{1,2}}(?:st|nd|rd|th))\s+month)(?!\w)",
                     re.IGNORECASE)


#: A month's name ('May' only after a word that makes it one: "in May", not "May I"), and what beside it makes it
#: part of a date: a day or year after it ("March 3rd", "March 2025"), a day before it ("3 March", "the 3rd of").
_MONTH = re.compile(r"\b(?:(?:January|February|March|April|June|July|August|September|October|November|December)"
                    r"|(?:" + "|".join(f"(?<={w} )" for w in ("in", "of", "since", "until", "from", "last", "next",
                                                               "this", "early", "late", "mid")) + r")May)\b")
_DAY_AFTER = re.compile(rf"\s*,?\s*(?:the\s+)?(?:\d|(?:{_ORDINAL_WORDS}|thirteenth|fourteenth|fifteenth|sixteenth"
                        r"|seventeenth|eighteenth|nineteenth|twentieth|twenty|thirtieth|thirty)\b)", re.IGNORECASE)
_DAY_BEFORE = re.compile(r"\d(?:st|nd|rd|th)?\s*(?:of\s+)?$")


def _month_alone(text: str) -> bool:
    """Whether the words name a month with no day or year beside it ("the October walkround", "back in March")."""
    return any(not _DAY_AFTER.match(text, m.end()) and not _DAY_BEFORE.search(text[max(0, m.start() - 8):m.start()])
               for m in _MONTH.finditer(text))


def placed_in_month(text: str) -> bool:
    """Whether the messages tell a date by its place in its month ("on the last day of October"), its month by
    its number ("the 15th of the year 2026's eleventh month") or a month by its name alone ("the October
    walkround", "she turned 66 in August"): a recast then keeps its seed's dates where they are (moved a week, the
    last day of October became "the last day of November" booked for November 7th; moved three weeks, the 15th of
    the eleventh month became "the 25th of the eleventh month" booked for October; a month alone stays a leftover
    beside its dates moved into the next, and the recast was refused)."""
    return _PLACED.search(text) is not None or _month_alone(text)


#: Countries whose public holidays (the `holidays` package's, in English) the words may name.
HOLIDAY_COUNTRIES = ("US", "GB", "CA", "AU", "IE", "NZ", "IN")


@cache
def _holiday_names() -> tuple[re.Pattern, re.Pattern]:
    """Public holidays' names ("Labor Day", "Boxing Day", "Spring Bank Holiday") and "bank holiday", in any case;
    and, capitalised as written, the name without its last word 'Day' ("Christmas", "Thanksgiving")."""
    names, cores = {"bank holiday"}, set()
    for country in HOLIDAY_COUNTRIES:
        for name in holidays.country_holidays(country, years=range(2001, 2036)).values():
            for part in name.split("; "):
                part = re.sub(r"\s*\((observed|estimated)\)$", "", part).strip()
                names.add(part)
                if part.endswith(" Day"):
                    cores.add(part[:-4].strip())

    def pattern(found: set[str], flags: int) -> re.Pattern:
        words = sorted((n for n in found if len(n) >= 4), key=len, reverse=True)
        return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(n) for n in words) + r")(?!\w)", flags)

    return pattern(names, re.IGNORECASE), pattern(cores, 0)


def names_holiday(text: str) -> bool:
    """Whether the messages name a public holiday ("over the Labor Day weekend"): its dates are the calendar's, so a
    recast keeps its seed's dates where they are (moved weeks, "Labor Day weekend, 2025-08-29 to 2025-09-02" was
    booked for late September)."""
    return any(p.search(text) is not None for p in _holiday_names())


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
