"""What a value of an environment may be, inferred from the environment itself (docs/design.md §4.2).

A variant's state and calls must stay in their domain whatever the
environment: a room type stays a room type the hotel has, a guest is named
like a person, a check-in day stays near "today". Nothing here knows a
domain's names; a :class:`ValueModel` is read once per environment from what
the environment says about itself:

* what it declares (`rods.synth.declared`): its tools' enums and `Literal`
  hints, the lists their parameters' descriptions give, the string constants
  its code compares a value with or looks it up by;
* its seeds' states: a field whose values repeat within one state is a
  category; a field whose values are people's names (by its name, or by the
  values' shape, `rods.synth.people`) holds people, one named for companies
  holds companies; a field whose values are all keys of the class's maps is a
  reference to a record; ISO dates, and numbers of a `day`/`date` field beside
  a `today` attribute, are dates; other numbers are quantities with the range
  the seeds show;
* its seeds' calls: a parameter given a value a state field holds is linked to
  that field and takes its kind and members (`room_type` <-> `rooms/*/type`).

Slots are named by path: a state field `owner/attr/*/field` (a map's records
are `*`, a list's items `[]`, a map's keys `.../#key`: `rods.synth.value_kinds.state_slots`),
a parameter `function.param`. Users: the remapper (`rods.synth.values`:
categories kept, people and companies renamed as such, dates moved together),
the argument proposer (a category value from its set, a day near today, a
quantity of the seeds' size) and the coherence rule ``out_of_domain``
(`violations`), which rejects a variant whose state or calls leave the model.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from rods.synth.dates import as_date, days_between, is_day_number
from rods.synth.declared import declared_sets, rates
from rods.synth.people import company_shaped, has_thing_word, is_person_name, name_shaped
from rods.synth.profile import parse_ground_truth
from rods.synth.value_kinds import is_prose, role_of, state_slots

#: Name pieces of a field, or of the map holding its record, whose names are companies' (`suppliers/*/name`).
COMPANY_WORDS = frozenset({"company", "companies", "organisation", "organization", "organizations", "employer", "firm",
                           "business", "vendor", "vendors", "supplier", "suppliers", "client", "clients", "carrier",
                           "manufacturer", "brand", "customers", "customer"})
#: Name pieces of a state attribute that holds the environment's current date or day.
TODAY_WORDS = frozenset({"today", "now", "current_date", "current_day", "date_today"})
#: Name pieces of a field whose dates are a calendar's (a country's bank holidays), which no errand moves.
HOLIDAY_WORDS = frozenset({"holiday", "holidays"})
#: Name pieces of a field or parameter that holds a date or a day number.
DATE_WORDS = frozenset({"date", "day", "dob", "birthday", "deadline", "due", "checkin", "checkout"})
_ID = re.compile(r"[A-Za-z]{0,6}[-_]?\d{2,}[A-Za-z0-9-]*")
#: The most values a set whose values repeat may have to count as a category (room types, statuses, tiers).
MAX_CATEGORY = 12
#: How far (in days) beyond the seeds' distances from today a variant's date may lie before it reads as made up.
DATE_SLACK = 45


@dataclass
class Slot:
    """What one state field or parameter holds: its kind (category, person, company, date, quantity,
    identifier, text or other) and, by kind, its set, its range or its distances from today."""

    kind: str
    members: set[Any] = field(default_factory=set)  # category: the values it may take
    low: float | None = None  # quantity: the seeds' smallest and largest numbers
    high: float | None = None
    integer: bool = True
    offsets: tuple[int, int] | None = None  # date: the seeds' days from today (smallest, largest)
    part: str | None = None  # person: "first" or "last" when it holds one part of a name
    year: bool = False  # quantity: years (a division's birth years), which stay as they are

    def widen(self, value: Any, today: Any) -> None:
        """Take in one more date of the seeds: its distance from their today."""
        days = days_between(value, today)
        if self.kind == "date" and days is not None:
            lo, hi = self.offsets if self.offsets is not None else (days, days)
            self.offsets = (min(lo, days), max(hi, days))


def slot_paths(owner: str, state: Any) -> Iterator[tuple[str, Any]]:
    """(path, value) of a class's state that a slot can describe: `state_slots` from `owner`, less None and
    booleans."""
    return ((p, v) for p, v in state_slots(state, owner) if v is not None and not isinstance(v, bool))


def name_of(path: str) -> str:
    """The field name a slot path ends in (`hotel/rooms/*/type` -> `type`; a parameter `book.room_type` ->
    `room_type`)."""
    if "/" not in path:
        return path.rpartition(".")[2]
    parts = [p for p in path.split("/") if p not in ("*", "[]", "#key")]
    return parts[-1] if parts else path


def pieces(name: str) -> frozenset[str]:
    """The lower-case words of a snake_case or camelCase name, and the name itself."""
    words = re.findall(r"[a-z]+", re.sub(r"(?<=[a-z])(?=[A-Z])", "_", name).lower())
    return frozenset([*words, name.lower()])


@dataclass
class ValueModel:
    """Slots of an environment's state fields and tool parameters (see the module docstring)."""

    fields: dict[str, Slot] = field(default_factory=dict)  # "owner/attr/*/field" -> slot
    params: dict[str, Slot] = field(default_factory=dict)  # "function.param" -> slot
    today: dict[str, str] = field(default_factory=dict)  # owner -> the path of its current date or day
    links: dict[str, str] = field(default_factory=dict)  # "function.param" -> the field its seed values sit in
    people: frozenset[str] = frozenset()  # the people the seeds name
    companies: frozenset[str] = frozenset()  # the companies the seeds name
    id_letters: frozenset[str] = frozenset()  # the letters that open ids of one kind ('STU' of STU-40263, STU-40311)
    fixed_dates: frozenset[str] = frozenset()  # dates two different seed states hold: the calendar's, not a task's
    #: "function.param" -> the texts the seeds passed there: what the environment's users name things
    #: (`rods.synth.names`: a recast's file takes another user's file name)
    passed: dict[str, frozenset[str]] = field(default_factory=dict)
    #: numbers of the code's tables of rates (`rods.synth.declared.rates`: a full plot's £96): kept where they stand
    rates: frozenset[float] = frozenset()

    @classmethod
    def infer(cls, tasks: Iterable[Any], docs: Mapping[str, Mapping[str, Any]],
              sources: Mapping[str, str] | None = None) -> ValueModel:
        """The model of an environment from its seeds, its tools' docs (function -> doc, with "class") and the
        source of its classes' modules."""
        tasks = list(tasks)
        by_param, by_name = declared_sets(docs, sources or {})
        model = cls()
        model.rates = frozenset(n for source in (sources or {}).values() for n in rates(source))
        seen: dict[str, list[Any]] = defaultdict(list)  # field path -> every value the seeds' states hold there
        owner_of: dict[str, str] = {}  # field path -> its class (a class key may hold a "/": an MCP manifest)
        repeats: set[str] = set()  # fields a value repeats in within one state
        todays: list[Any] = []  # each task's first today
        dated: list[tuple[Any, list[tuple[str, Any]]]] = []  # (a state's today, the state's values)
        for task in tasks:
            todays.append(None)
            for owner, state in task.initial_config.items():
                if not isinstance(state, dict):
                    continue
                today = None
                for attr, value in state.items():
                    if pieces(attr) & TODAY_WORDS and (as_date(value) or is_day_number(value)):
                        model.today[owner] = f"{owner}/{attr}"
                        today = value
                held: dict[str, set[Any]] = defaultdict(set)
                values = list(slot_paths(owner, state))
                for path, value in values:
                    seen[path].append(value)
                    owner_of[path] = owner
                    repeats |= {path} if isinstance(value, str) and value in held[path] else set()
                    held[path].add(value)
                if today is not None:
                    dated.append((today, values))
                    todays[-1] = today if todays[-1] is None else todays[-1]
        keys: dict[str, set[str]] = defaultdict(set)  # class -> the keys of its maps: ids and handles fields refer to
        for path, values in seen.items():
            if path.endswith("#key"):
                keys[owner_of[path]] |= {v for v in values if isinstance(v, str)}
        for path, values in seen.items():
            owner = owner_of[path]
            model.fields[path] = _field_slot(model, owner, path, values, path in repeats,
                                             by_name.get(f"{owner}/{name_of(path)}", set()), keys[owner])
        model.fixed_dates = _fixed_dates(tasks)
        model.id_letters = _id_letters(v for path, values in seen.items() if model.fields[path].kind == "identifier"
                                       for v in values)
        for today, values in dated:  # dates: how far from today the seeds' dates lie
            for path, value in values:
                model.fields[path].widen(value, today)
        given = _arguments(tasks, todays)
        model.passed = {key: frozenset(v for v, _ in values if isinstance(v, str)) for key, values in given.items()}
        holders = _holders(seen)
        owners = {function: doc.get("class", "") for function, doc in docs.items()}
        people_fields = {(owner_of[p], name_of(p)) for p, slot in model.fields.items() if slot.kind == "person"}
        for function, doc in docs.items():
            for param, spec in doc.get("parameters", {}).get("properties", {}).items():
                key = f"{function}.{param}"
                declared = by_param.get(key, set())
                if spec.get("type", "string") in ("string", "array"):
                    declared = declared | by_name.get(f"{owners[function]}/{param}", set())
                slot = _param_slot(model, key, spec, given.get(key, []), declared, holders,
                                   (owners[function], param) in people_fields)
                model.params[key] = model._fitted(slot, given.get(key, []))
        model.__dict__.pop("_whole_names", None)  # computed while people were still being found: read it anew
        return model

    def _fitted(self, slot: Slot, given: list[tuple[Any, Any]]) -> Slot:
        """A parameter's slot that admits every value the seeds gave it: a value a set learned from the seeds'
        states lacks joins it; a slot another of its values breaks says nothing ("other"). The seeds are what
        people ask: a search for a team by name in a people search, a meeting ending at an hour no event ends."""
        for value, today in given:
            if self.admits(slot, value, today) is None:
                continue
            if slot.kind == "category" and isinstance(value, str):
                slot.members.add(value)
            else:
                return Slot("other")
        return slot

    # -- reading ----------------------------------------------------------------------------------

    def field(self, path: str) -> Slot | None:
        return self.fields.get(path)

    def parameter(self, function: str, name: str) -> Slot | None:
        return self.params.get(f"{function}.{name}")

    @cached_property
    def categories(self) -> frozenset[str]:
        """Every value of a category slot: values a variant may share with its seed (another member of the set
        is not a copy)."""
        return frozenset(v for slot in [*self.fields.values(), *self.params.values()] if slot.kind == "category"
                         for v in slot.members if isinstance(v, str))

    @cached_property
    def _whole_names(self) -> bool:
        """Whether the seeds name people in full (first and family name), so a variant must too."""
        return all(" " in p for p in self.people)

    def today_of(self, owner: str, state: Mapping[str, Any] | None) -> Any:
        """The current date or day a class's state holds, or None."""
        path = self.today.get(owner)
        if path is None or not isinstance(state, Mapping):
            return None
        return state.get(path.rpartition("/")[2])

    def admits(self, slot: Slot | None, value: Any, today: Any = None) -> str | None:
        """Why `value` cannot fill `slot` (None when it can): a category value outside its set, a person or a
        company named with words for things, a date far from today."""
        if slot is None or value is None or isinstance(value, bool):
            return None
        if slot.kind == "category" and slot.members and isinstance(value, str) and value not in slot.members:
            shown = ", ".join(repr(m) for m in sorted(slot.members, key=str)[:6])
            return f"{value!r} is none of {shown}"
        if slot.kind == "person" and isinstance(value, str) and value.strip() and not value.startswith("@"):
            if slot.part is not None:  # a first or a family name alone: a name's shape, no word for a thing
                named = name_shaped(value) and not has_thing_word(value)
            else:
                named = is_person_name(value, self.people, whole=self._whole_names if self.people else " " in value)
            if not named:
                return f"{value!r} is no person's name"
        if slot.kind == "company" and isinstance(value, str) and value not in self.companies and has_thing_word(value):
            return f"{value!r} is no company's name"
        if slot.kind == "date" and slot.offsets is not None and today is not None:
            days = days_between(value, today)
            lo, hi = slot.offsets
            if days is not None and not lo - DATE_SLACK <= days <= hi + DATE_SLACK:
                return f"{value!r} is {days} days from today ({today!r}); the seeds' are {lo}..{hi}"
        return None

    def violations(self, task: Any, calls: Iterable[Any] | None = None) -> list[str]:
        """Where a task's state or calls (its ground truth's, unless given) leave the model: `where: why` per
        value (see `admits`)."""
        out: list[str] = []
        today = None
        for owner, state in task.initial_config.items():
            now = self.today_of(owner, state)
            today = today if now is None else now
            for path, value in slot_paths(owner, state):
                problem = self.admits(self.fields.get(path), value, now)
                if problem:
                    out.append(f"{path}: {problem}")
        for call in calls if calls is not None else (c for turn in parse_ground_truth(task) for c in turn):
            for param, value in call.arguments.items():
                for item in value if isinstance(value, list) else [value]:
                    problem = self.admits(self.parameter(call.name, param), item, today)
                    if problem:
                        out.append(f"{call.name}({param}): {problem}")
        return out

    def draw_date(self, slot: Slot, today: Any, rng: Any) -> Any:
        """A date for a parameter: today moved by a number of days within the seeds' offsets (a few days ahead
        when the seeds show none), in today's own form."""
        lo, hi = slot.offsets if slot.offsets is not None else (1, 14)
        days = rng.randint(lo, max(lo, hi))
        day = as_date(today)
        if day is not None:
            return (day + dt.timedelta(days=days)).isoformat()
        return today + days if is_day_number(today) else None

    def draw_quantity(self, slot: Slot, rng: Any) -> int | float | None:
        """A number of the size the seeds gave this slot (None when they gave none)."""
        if slot.low is None or slot.high is None:
            return None
        if slot.integer:
            return rng.randint(int(slot.low), max(int(slot.high), int(slot.low) + 1))
        return round(rng.uniform(slot.low, slot.high), 2)


# ----------------------------------------------------------------------------- inference


def _field_slot(model: ValueModel, owner: str, path: str, values: list[Any], repeated: bool, declared: set[str],
                keys: set[str]) -> Slot:
    """The slot of one state field of `owner`, from every value the seeds hold there, the values its code
    declares for a field of its name and the keys of the class's maps (see the module docstring)."""
    name = name_of(path)
    words = pieces(name)
    numbers = [v for v in values if isinstance(v, (int, float))]
    texts = [v for v in values if isinstance(v, str)]
    if numbers and not texts:
        if path == model.today.get(owner) or (owner in model.today and words & DATE_WORDS
                                              and all(map(is_day_number, numbers))):
            return Slot("date")
        return Slot("quantity", low=min(numbers), high=max(numbers), integer=all(map(is_day_number, numbers)),
                    year=_years(words, numbers))
    if not texts:
        return Slot("other")
    if all(as_date(v) for v in texts):
        return Slot("date")
    distinct = set(texts)
    if declared and len(distinct & declared) * 2 >= len(distinct):
        # most of its values are ones the code declares: a category whatever they look like (an allotment
        # society's sites 'Canal Bank', 'Hollins Lane' read as people's names and were renamed 'Leopoldo Quero')
        return Slot("category", members=declared | distinct)
    people = [v for v in distinct if is_person_name(v)]
    if role_of(name) in ("person", "first", "last") and any(name_shaped(v) for v in distinct) \
            and not any(_ID.fullmatch(v) for v in distinct) or (len(people) * 3 >= len(distinct) * 2 and people) \
            or _full_names(distinct, people):
        model.people |= distinct
        return Slot("person", part=_part(name))
    if distinct <= keys and not declared:
        return Slot("identifier")  # a record's key, or a reference to one (an organizer's handle): re-drawn alike
    if declared & distinct:
        return Slot("category", members=declared | distinct)
    if repeated and len(distinct) <= MAX_CATEGORY and all(len(v) <= 30 and len(v.split()) <= 3 for v in distinct) \
            and not all(map(_ID.fullmatch, distinct)):
        return Slot("category", members=set(distinct))
    if _names_companies(path[len(owner) + 1:], words) and all(map(company_shaped, distinct)) \
            and not any(_ID.fullmatch(v) for v in distinct):
        model.companies |= distinct
        return Slot("company")
    if path.endswith("#key") or all(_ID.fullmatch(v) for v in distinct):
        return Slot("identifier")
    if any(is_prose(v) for v in distinct):
        return Slot("text")
    return Slot("other")


def _fixed_dates(tasks: list[Any]) -> frozenset[str]:
    """ISO dates of a calendar: a map keyed by dates where two or more different seed states hold one same date (a
    town's holidays: Memorial Day on 2026-05-25 in every state of that spring), and every date it is keyed by, and
    the dates of a field named for holidays (a council's `bank_holidays` list: moved two weeks, its Christmas fell
    on 8 January). No errand moves them: a variant keeps them where they are (moved by weeks, Memorial Day fell on
    May 4). Dates of records (a job's due day) move with 'today' as before."""
    held: dict[tuple[str, str], set[str]] = defaultdict(set)
    for task in tasks:
        for owner, state in task.initial_config.items():
            if not isinstance(state, dict):
                continue
            key = json.dumps(state, sort_keys=True, default=str)
            for path, value in state_slots(state, owner):
                if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
                    held[(path, value)].add(key)
    calendars = {path for (path, _), states in held.items() if len(states) >= 2 and path.endswith("#key")}
    named = {path for path, _ in held if pieces(name_of(path)) & HOLIDAY_WORDS}  # a list of a council's holidays
    return frozenset(day for (path, day) in held if path in calendars or path in named)


def _id_letters(values: Iterable[Any]) -> frozenset[str]:
    """Capital letters (three to six) that open two or more distinct ids ('STU' of STU-40263 and STU-40311, 'ORD'
    of ORD8812): the kind of record an id names, which a new id of that kind keeps (two letters are kept anyway,
    `rods.synth.value_kinds.is_kept_word`)."""
    opened: dict[str, set[str]] = defaultdict(set)
    for value in values:
        match = re.match(r"([A-Z]{3,6})(?=[-_]?\d)", value) if isinstance(value, str) else None
        if match:
            opened[match.group(1)].add(value)
    return frozenset(letters for letters, ids in opened.items() if len(ids) >= 2)


def _full_names(distinct: set[str], people: list[str]) -> bool:
    """Whether a field's values are people's full names though many first names are none a name generator knows
    (Kwame, Aroha, Mei-Ling, Sofía: a storage facility's tenants): three or more values, every one two to four
    capitalised words with no word for a thing, and at least a third of them with a first name we know."""
    return len(distinct) >= 3 and len(people) * 3 >= len(distinct) and all(
        name_shaped(v) and 2 <= len(v.split()) <= 4 and not has_thing_word(v) and not any(c.isdigit() for c in v)
        for v in distinct)


def _part(name: str) -> str | None:
    """"first" or "last" when a field or parameter name says it holds one part of a person's name."""
    role = role_of(name)
    return role if role in ("first", "last") else None


def _names_companies(path: str, words: frozenset[str]) -> bool:
    """Whether a field's name, or the name of the map holding its record, says it names companies (`company`,
    `suppliers/*/name`: `path` from the class's attribute on); never an id or a map's key."""
    parent = [p for p in path.split("/")[:-1] if p not in ("*", "[]", "#key")]
    return (bool(words & COMPANY_WORDS) or bool(parent and pieces(parent[-1]) & COMPANY_WORDS and "name" in words)) \
        and not words & {"id", "code", "key"} and not path.endswith("#key")


def _arguments(tasks: list[Any], todays: list[Any]) -> dict[str, list[tuple[Any, Any]]]:
    """`function.param` -> (value, that task's today) of every scalar the seeds' calls pass (list items one by one)."""
    out: dict[str, list[tuple[Any, Any]]] = defaultdict(list)
    for task, today in zip(tasks, todays):
        try:
            turns = parse_ground_truth(task)
        except ValueError:
            continue
        for call in (c for turn in turns for c in turn):
            for param, value in call.arguments.items():
                for item in value if isinstance(value, list) else [value]:
                    if item is not None and not isinstance(item, (bool, dict, list)):
                        out[f"{call.name}.{param}"].append((item, today))
    return out


def _holders(seen: Mapping[str, list[Any]]) -> dict[Any, list[str]]:
    """Text -> the field paths the seeds' states hold it in (a number says too little of where it came from)."""
    out: dict[Any, list[str]] = defaultdict(list)
    for path, values in seen.items():
        for value in set(v for v in values if isinstance(v, str)):
            out[value].append(path)
    return out


def _param_slot(model: ValueModel, key: str, spec: Mapping[str, Any], given: list[tuple[Any, Any]],
                declared: set[str], holders: Mapping[Any, list[str]], names_people: bool) -> Slot:
    """The slot of one parameter: its declared set, else the kind of the field its seed values sit in, else what
    its values and name say. `names_people`: a person field of its class has its name (a new patient's `name`)."""
    name = key.rpartition(".")[2]
    votes: dict[str, int] = defaultdict(int)
    for value, _ in given:
        for path in holders.get(value, ()):
            votes[path] += 1
    linked = max(sorted(votes), key=lambda p: votes[p]) if votes else None
    if linked is not None:
        model.links[key] = linked
    target = model.fields.get(linked) if linked else None
    if declared and (not given or {v for v, _ in given if isinstance(v, str)} <= declared):
        if target is not None and target.kind == "category":
            target.members |= declared
            return Slot("category", members=set(target.members))
        return Slot("category", members=set(declared))
    if target is not None and target.kind in ("category", "person", "company", "identifier"):
        return Slot(target.kind, members=set(target.members), part=_part(name) or target.part)
    dated = [v for v, _ in given if as_date(v)]
    if (dated and len(dated) == len(given)) or (target is not None and target.kind == "date") \
            or (pieces(name) & DATE_WORDS and spec.get("type") in ("integer", "string") and model.today
                and all(is_day_number(v) or as_date(v) for v, _ in given)):
        slot = Slot("date")
        for value, today in given:
            slot.widen(value, today)
        return slot
    if given and all(is_person_name(v, model.people) or (names_people and name_shaped(v) and " " in v)
                     for v, _ in given):  # a new patient's name is a person's too
        model.people |= {v for v, _ in given}
        return Slot("person", part=_part(name))
    if role_of(name) in ("person", "first", "last") and all(name_shaped(v) for v, _ in given):
        return Slot("person", part=_part(name))
    numbers = [v for v, _ in given if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if numbers:
        return Slot("quantity", low=min(numbers), high=max(numbers), integer=all(map(is_day_number, numbers)),
                    year=_years(pieces(name), numbers))
    return Slot("other")


def _years(words: frozenset[str], numbers: list[Any]) -> bool:
    """Whether a field's or parameter's numbers are years: its name says so (`birth_years`, `year`) and every number
    is one. A remapped year of a division's birth years overlapped the next division's."""
    return bool(words & {"year", "years"}) and all(isinstance(n, int) and 1900 <= n <= 2100 for n in numbers)
