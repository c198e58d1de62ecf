"""What of a seed a recast changes: the values that make the errand its user's own (`touched_values`).

A recast (`rods.synth.recast`) keeps its seed's plan and words and gives the
errand a new world. Which values are the errand's and which the world's is
read off the seed itself: the people, codes and ids its calls pass or its
messages name, and the numbers its messages write, are the errand's and
change; everything else (a show's title, a boat's name, a stock's averages,
a category, a number that is a condition on the state or the measure of a
thing the words name) is the world the errand happens in, and stays. The
gate (`rods.synth.gate.scenery`) reads the same split, so what a recast
keeps is never taken for a copy.
"""

from __future__ import annotations

import calendar
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from rods.envs.calls import ToolCall
from rods.synth.people import folded, follow_renames, is_person_name
from rods.synth.profile import result_value, value_paths
from rods.synth.value_kinds import is_prose, keyed_dicts, leaves, state_slots
from rods.synth.value_model import name_of, pieces


def coincident(state: Any, calls: Iterable[ToolCall]) -> frozenset[float]:
    """Numbers the calls pass by name that the state holds only in fields named unlike every parameter they are
    passed to (30 gallons to convert, beside a tire of 30 PSI): a recast re-draws them in the calls and the words
    and leaves the state's as they were; mapped by value, the tire had become 20 PSI beside a tweet that the
    pressures were optimal."""
    passed: dict[float, set[str]] = defaultdict(set)
    for call in calls:
        for param, value in call.arguments.items():
            for leaf in leaves([value]):
                if isinstance(leaf, (int, float)) and not isinstance(leaf, bool):
                    passed[float(leaf)] |= pieces(param)
    held: dict[float, list[frozenset[str]]] = defaultdict(list)
    for path, value in state_slots(state):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and float(value) in passed:
            held[float(value)].append(pieces(name_of(path)))
    return frozenset(n for n, names in held.items() if all(not words & passed[n] for words in names))


def produced_numbers(calls: Sequence[ToolCall], results: Sequence[str], changed: Sequence[bool]) -> frozenset[float]:
    """Numbers a call passes that an earlier write returned: what the environment worked out (a pensioner's rent
    halved to £26), which the recast's run works out anew. Touched, they were re-drawn wherever the state held
    them (another member's £26 invoice), and the payment passed the new half against the words' drawn £26."""
    def numbers(values: Iterable[Any]) -> set[float]:
        return {float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)}

    out: set[float] = set()
    returned: set[float] = set()  # what the writes before the call returned, each result read once
    for j, call in enumerate(calls):
        out |= numbers(leaves([*call.args, *call.arguments.values()])) & returned
        if j < len(results) and j < len(changed) and changed[j]:
            returned |= numbers(v for _, v in value_paths(result_value(results[j])))
    return frozenset(out)


def said_values(calls: Iterable[ToolCall]) -> list[Any]:
    """Every scalar the calls pass (positional and keyword, inside lists and records): what a task's calls say."""
    return [v for c in calls for v in leaves([*c.args, *c.arguments.values()])]


def touched_values(state: Any, said: Iterable[Any], text: str, people: frozenset[str] = frozenset()) -> frozenset:
    """The values a recast changes, so that it is another errand: the people, codes and ids (values with digits)
    its seed's calls pass (`said`) or its messages name (a person by the whole name or one of its words), and the
    numbers its messages write, wherever the state holds them (`leaves`, map keys too); dates move anyway. A
    text a person wrote (`is_prose`) is no code for its digits: re-drawn, a tweet of the tires' pressures no
    longer told the state's.
    Everything else is the world the errand happens in (a show's title, a berth's note, a boat's name, a stock's
    averages, a category), which the recast keeps: re-drawn, it made word salad and broke the relations between
    numbers a reader checks. A number the calls pass that no message writes is worked out (half a price read
    from the state, a price the agent looks up) or said in words ("double-sided": 2): re-drawn, it no longer
    matched what it came from. `people`: the names the environment's value model knows for people's (its seeds'
    tenants named Kwame or Aroha, whom no name generator knows). A handle made of the name of a person the
    recast keeps stays with that person."""
    said = [v for v in said if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
    texts = [v for v in leaves(state) if isinstance(v, str)]
    labels = [v for v in texts if not is_prose(v)]
    dated = [(t, set(_YEAR.findall(t))) for t in texts if _YEAR.search(t)]  # read once, not once per value
    named = {folded(w) for w in re.findall(r"[A-Z][\w'-]{2,}", text)}  # as typed: 'Lucia' names Lucía
    said_folded = {folded(v) for v in said if isinstance(v, str)}
    out = set()
    for value in [*said, *leaves(state)]:
        if isinstance(value, bool) or value in out:
            continue
        if isinstance(value, str) and value.strip():
            if is_person_name(value, people):
                if folded(value) in said_folded or named & {folded(w) for w in value.split()}:
                    out.add(value)
            elif any(c.isdigit() for c in value) and (value in said or written_in(value, text)) \
                    and _has_code_digits(value, dated, texts) \
                    and not is_prose(value):  # a post's "Front Left Tire: 32 PSI" tells the state, it is no code
                out.add(value)
        elif isinstance(value, (int, float)) and written_in(value, text) and not _compared(value, text) \
                and not _measures_named(value, text, people) \
                and (value in said or not any(written_in(value, label) for label in labels)):
            # a number no call passes that a kept label holds is that label's: "the ibuprofen 800" of a strength
            # '800 mg', not the stock of 800 metformin tablets the state also holds (re-drawn, "ibuprofen 600")
            out.add(value)
    # a call's value that opens a text of a record the errand touches (the house '31', 'Flat 3' of the addresses
    # '31 Bridge Street', 'Flat 3, Marlow Court' of a property whose postcode the call passes too): that text is the
    # errand's, its number re-drawn with the call's (re-drawn in the call alone, the register had no 'Flat 6')
    openers = [re.compile(rf"{re.escape(v)}(?=[ ,])") for v in said if isinstance(v, str) and v in out]
    for key, record in keyed_dicts(state) if openers else ():
        opened = {t for t in record.values() if isinstance(t, str) and t not in out
                  and any(o.match(t) for o in openers)}
        if opened and (key in out or any(v in out for v in record.values() if isinstance(v, (str, int, float)))):
            out |= opened
    return frozenset(out) - handles_of_kept(state, out, people)


#: A year standing alone in a text ('Spring2023Draft.txt', 'notes_2024'): the world's time, not a code's digits.
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")


def _has_code_digits(value: str, dated: list[tuple[str, set[str]]], texts: list[str]) -> bool:
    """Whether a text holds digits other than a year that the state's other texts also name (`dated`: each
    text that holds a year, with its years): a code, an id, a phone number, a year nothing else tells. A name whose
    only number is such a year is the world's: re-drawn a year away, 'Spring2023Draft.txt' of notes for spring 2023
    became 'Spring2022Draft.txt', and an 'ArchivedFinalReport2024.txt' of a 2024 report '...2023' (two BFCL
    reads). So is a number another text writes after the name's word (`texts`: "Quarter 1" of 'Quarter1_Reports')."""
    told = {year for text, years in dated if text != value and value not in text for year in years}
    left = _YEAR.sub(lambda m: "" if m.group(0) in told else m.group(0), value)
    return any(c.isdigit() for c in _WORD_NUMBER.sub(lambda m: "" if _tells(m, value, texts) else m.group(0), left))


#: A word and the number after it in a name ('Quarter1' of 'Quarter1_Reports', 'Week_3').
_WORD_NUMBER = re.compile(r"([A-Za-z]{3,})[_ -]?(\d{1,2})(?!\d)")


def _tells(match: re.Match, value: str, texts: list[str]) -> bool:
    """Whether another text of the state writes a name's word and number apart ("Quarter 1 financial report." of
    'Quarter1_Reports'): the number is the thing's, not a code's (re-drawn, the folder 'Quarter4_Reports' held
    Quarter 1's reports; BFCL read 2929, both readers)."""
    said = re.compile(rf"(?<![A-Za-z]){re.escape(match.group(1))}\s+{match.group(2)}(?!\d)", re.IGNORECASE)
    return any(said.search(text) for text in texts if text != value and value not in text)


#: A name no seed holds, to see whether a value is made of a person's name (it changes with the name).
_NOBODY = "Zed Quxley"


def handles_of_kept(state: Any, touched: set, people: frozenset[str]) -> set:
    """The touched values made of the name of a person the state holds and the recast keeps (a ticket username
    'mthompson' of the cardholder Michael Thompson): re-drawn alone, 'mzhang' stood beside Michael Thompson."""
    kept = {v for v in leaves(state) if isinstance(v, str) and v not in touched and is_person_name(v, people)}
    return {v for v in touched if isinstance(v, str) and not is_person_name(v, people)
            and any(follow_renames(v, {person: _NOBODY}) != v for person in kept)}


#: Words that make a number a condition on the state ("if any tire is under 35 PSI"), not a value of the errand.
_COMPARISONS = r"(?:under|over|below|above|less than|more than|fewer than|at least|at most|exceeds?|beyond)"


def _compared(value: int | float, text: str) -> bool:
    """Whether the messages write the number only as a threshold ("under 35 PSI", "more than 10 items"): its
    relation to the state's values is the errand, and a new number would break it (the tires were no longer
    under it)."""
    number = _number_pattern(value)
    flat = _numbers_text(text).lower()
    every = len(re.findall(number, flat))
    compared = len(re.findall(rf"{_COMPARISONS}\s+(?:\$|£|€)?{number}", flat))
    return every > 0 and compared == every


#: Calendar words, which name no thing that has a measure ("Thursday November 5").
_CALENDAR = frozenset(m.lower() for m in [*calendar.month_name[1:], *calendar.day_name])


def _measures_named(value: int | float, text: str, people: frozenset[str]) -> bool:
    """Whether the messages write the number only as a measure of a thing they name by a proper name, right after
    it ("a Ford Fiesta, 4.1 m", "the Swift Escape is 7.2 metres"): the name is the world's, kept, and the number
    is what that thing measures; re-drawn, a Fiesta became 5.0 m long. Not a person's ("Ana Reyes, 3 bags" is
    her errand) nor a date's."""
    number = _number_pattern(value)
    name = r"((?:[A-Z][a-z][\w'-]*\s+)+[A-Z][\w'-]*)"
    flat = _numbers_text(text)
    every = re.findall(number, flat)
    named = [m.group(1) for m in re.finditer(rf"{name}(?::|\s+is|\s+was|\s+-)?\s+(?:about\s+)?{number}", flat)
             if not is_person_name(m.group(1), people) and not _CALENDAR & set(m.group(1).lower().split())]
    return bool(every) and len(named) == len(every)


def written_in(value: Any, text: str) -> bool:
    """Whether the messages write a value: a text as a whole word or words (any case), a number as its digits
    (thousands' commas aside), not as part of another number ("3" is not in "3.5" nor in "130"); a record or a
    flag is no written value (a list of passengers as objects)."""
    if isinstance(value, str):
        return re.search(rf"(?<!\w){re.escape(value.lower())}(?!\w)", text.lower()) is not None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    return re.search(_number_pattern(value), _numbers_text(text)) is not None


def _number_pattern(value: int | float) -> str:
    """A number as the messages write it, whole: 3 (of 3.0) not inside 3.5 nor 130."""
    written = str(int(value)) if float(value).is_integer() else str(value)
    return rf"(?<![\w.,]){re.escape(written)}(?![\w]|[.,]\d)"


#: Dates and times as digits ('1955-01-30', '01/30/1955', '10:30'), whose parts are no numbers the words give.
_DIGIT_DATES = re.compile(r"\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b\d{1,2}:\d{2}\b")


def _numbers_text(text: str) -> str:
    """The messages as numbers are read in them: dates and times blanked, thousands' commas dropped. The 30 of a
    date of birth '1955-01-30' had re-drawn every 30 of a pharmacy's state: a 30-day supply of 60 tablets taken
    twice daily became 24 days."""
    return _DIGIT_DATES.sub(" ", text).replace(",", "")
