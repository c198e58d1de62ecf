"""What a value of an environment may be, inferred from the environment itself (docs/design.md §4.2).

A variant's state and calls must stay in their domain whatever the
environment: a room type stays a room type the hotel has, a guest is named
like a person, a check-in day stays near "today". Nothing here knows a
domain's names; a :class:`ValueModel` is read once per environment from what
the environment says about itself:

* its tools' schemas (enums, `Literal` hints), their parameters' descriptions
  (a quoted list, "one of single, double or suite") and the code of its
  classes (a parameter or field compared against string constants, a dict of
  string keys looked up by one): *declared* categories;
* its seeds' states: a field whose values repeat within one state is a
  category too; a field whose values are people's names (by its name, or by
  the values' shape: a first name a name generator knows) holds people; ISO
  dates, and numbers of a `day`/`date` field beside a `today` attribute, are
  dates; other numbers are quantities with the scale the seeds show;
* its seeds' calls: a parameter given a value a state field holds is linked to
  that field and takes its kind and members (`room_type` <-> `rooms/*/type`).

Slots are named by path: a state field `owner/attr/*/field` (a map's keys are
`*`, a list's items `[]`, a map's keys themselves `.../#key`), a parameter
`function.param`. Users: the remapper (`rods.synth.values`: categories kept,
people renamed as people, dates shifted together), the argument proposer (a
category value from its set, a day near today, a quantity of the seeds'
size) and the coherence rule ``out_of_domain`` (`violations`), which rejects a
variant whose state or calls leave the model.
"""

from __future__ import annotations

import ast
import datetime as dt
import inspect
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

#: The kinds of value a slot may hold.
KINDS = ("category", "person", "company", "date", "quantity", "identifier", "text", "other")
#: Name pieces of a field, or of the map holding its record, whose names are companies' (`suppliers/*/name`).
COMPANY_WORDS = frozenset({"company", "companies", "organisation", "organization", "organizations", "employer", "firm",
                           "business", "vendor", "vendors", "supplier", "suppliers", "client", "clients", "carrier",
                           "manufacturer", "brand", "customers", "customer"})
#: Name pieces of a state attribute that holds the environment's current date or day.
TODAY_WORDS = frozenset({"today", "now", "current_date", "current_day", "date_today"})
#: Name pieces of a field or parameter that holds a date or a day number.
DATE_WORDS = frozenset({"date", "day", "dob", "birthday", "deadline", "due", "checkin", "checkout"})
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ID = re.compile(r"[A-Za-z]{0,6}[-_]?\d{2,}[A-Za-z0-9-]*")
_QUOTED = re.compile(r"'([^'\s][^']{0,30})'|\"([^\"\s][^\"]{0,30})\"")
_LISTED = re.compile(r"(?:one of|either|such as|values?:?|:)\s+((?:[a-z][\w-]*,\s*)+[a-z][\w-]*,?\s+(?:or|and)\s+"
                     r"[a-z][\w-]*)", re.I)
#: The most values a set whose values repeat may have to count as a category (room types, statuses, tiers).
MAX_CATEGORY = 12
#: How far (in days) from the seeds' dates a variant's date may be before it reads as made up.
DATE_SLACK = 45


@dataclass
class Slot:
    """What one state field or parameter holds: its kind and, by kind, its set, its scale or its dates."""

    kind: str
    members: set[Any] = field(default_factory=set)  # category: the values it may take
    declared: bool = False  # category: the set comes from the schema or code, not only from the seeds
    low: float | None = None  # quantity: the seeds' smallest and largest numbers
    high: float | None = None
    integer: bool = True
    offsets: tuple[int, int] | None = None  # date: the seeds' days from today (smallest, largest)
    iso: bool = False  # date: an ISO string, not a day number


def slot_paths(owner: str, state: Any) -> Iterator[tuple[str, Any]]:
    """(path, scalar) of a class's state: a map's keys (ids, names) at `.../#key`, its records under `*`."""
    from rods.synth.values import is_field_key

    stack: list[tuple[str, Any, bool]] = [(owner, state, True)]
    while stack:
        path, node, top = stack.pop()
        if isinstance(node, dict):
            by_id = not top and bool(node) and all(isinstance(v, (dict, list)) for v in node.values())
            for k, v in node.items():
                keyed = not top and (by_id or not is_field_key(k))
                if keyed:
                    yield f"{path}/#key", k
                stack.append((f"{path}/{'*' if keyed else k}", v, False))
        elif isinstance(node, (list, tuple)):
            stack.extend((f"{path}/[]", v, False) for v in node)
        elif node is not None and not isinstance(node, bool):
            yield path, node


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


def as_date(value: Any) -> dt.date | None:
    """An ISO date (`2026-03-09`, also the date part of a date-time), else None."""
    if isinstance(value, str) and _ISO_DATE.match(value):
        try:
            return dt.date.fromisoformat(value[:10])
        except ValueError:
            return None
    return None


def shift_date(value: Any, days: int) -> Any:
    """A date moved by `days`: an ISO string keeps whatever follows its date part, a day number is added to."""
    day = as_date(value)
    if day is not None:
        return (day + dt.timedelta(days=days)).isoformat() + value[10:]
    if isinstance(value, int) and not isinstance(value, bool):
        return value + days
    return value


@cache
def people_pools() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Locale -> (first names, family names) of Faker's person providers, ASCII letters only (synthesis reads
    names as `[A-Z][a-z]+` words), sorted: a guest list of many countries, each name with its own country's."""
    import importlib

    import faker.providers.person as people

    out = {}
    for locale in PEOPLE_LOCALES:
        provider = importlib.import_module(f"{people.__name__}.{locale}").Provider
        firsts, lasts = (tuple(sorted({n for n in getattr(provider, attr, ()) if re.fullmatch(r"[A-Z][a-z]{2,11}", n)}))
                         for attr in ("first_names", "last_names"))
        if firsts and lasts:
            out[locale] = (firsts, lasts)
    return out


#: Faker locales whose people synthesis names (Latin script).
PEOPLE_LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT", "pt_BR", "nl_NL", "sv_SE", "pl_PL",
                  "tr_TR", "en_IN", "da_DK", "fi_FI", "cs_CZ", "en_NG")


@cache
def company_suffixes() -> tuple[str, ...]:
    """The endings of companies' names in Faker's company providers (`Ltd`, `GmbH`, `Inc`, ...), sorted."""
    import importlib

    out: set[str] = set()
    for locale in PEOPLE_LOCALES:
        try:
            provider = importlib.import_module(f"faker.providers.company.{locale}").Provider
        except ModuleNotFoundError:
            continue
        out |= {s for s in getattr(provider, "company_suffixes", ()) if re.fullmatch(r"[A-Za-z][A-Za-z. &]{1,12}", s)}
    return tuple(sorted(out))


@cache
def first_names() -> frozenset[str]:
    """First names a name generator knows (Faker's, `people_pools`) and our own (`vocabulary.NAMES`)."""
    from rods.envs.vocabulary import NAMES

    return frozenset(NAMES) | frozenset(n for firsts, _ in people_pools().values() for n in firsts)


@cache
def _thing_words() -> frozenset[str]:
    """The words a variant draws for things (`vocabulary.NOUNS`), less any that is also a first name."""
    from rods.envs.vocabulary import NOUNS

    return frozenset(n.lower() for n in NOUNS) - {n.lower() for n in first_names()}


def name_shaped(value: Any) -> bool:
    """One to four capitalised words of letters (`O'Connell`, `Fernández`, `Jean-Luc`; a particle such as `van`
    may stay lower case): the shape of a person's name, of a place's, of a title's."""
    if not isinstance(value, str):
        return False
    words = value.strip().split()
    return 1 <= len(words) <= 4 and words[0][:1].isupper() and all(
        (w[:1].isupper() or (len(w) <= 3 and w.isalpha())) and all(c.isalpha() or c in "'-." for c in w)
        for w in words)


def _company_shaped(value: Any) -> bool:
    """A company's name: up to six words, the first capitalised, of letters, digits and `& . , ' - ( )`."""
    return isinstance(value, str) and 1 <= len(value.split()) <= 6 and value[:1].isupper() \
        and all(c.isalnum() or c in " &.,'-()" for c in value)


def is_person_name(value: Any, known: Iterable[str] = (), whole: bool = True) -> bool:
    """A person's name: a `known` one, or capitalised words (two or more when `whole`) whose first is a first name
    we know (`first_names`, or the first word of a `known` name) and none of which is a word for a thing."""
    known = set(known)
    if isinstance(value, str) and value in known:
        return True
    if not name_shaped(value):
        return False
    words = value.strip().split()
    if (whole and len(words) < 2) or any(w.lower() in _thing_words() for w in words):
        return False
    return words[0] in first_names() or words[0] in {k.split()[0] for k in known if isinstance(k, str) and k.strip()}


# ----------------------------------------------------------------------------- what the code declares


def declared_sets(docs: Mapping[str, Mapping[str, Any]], sources: Mapping[str, str]) -> tuple[
        dict[str, set[str]], dict[str, set[str]]]:
    """(`function.param` -> values, `owner/name` -> values): the values a schema's enum, a parameter's description
    or the code of the owner's module names for a parameter or a field (by its name, for fields and parameters
    alike)."""
    by_param: dict[str, set[str]] = defaultdict(set)
    for function, doc in docs.items():
        for param, spec in doc.get("parameters", {}).get("properties", {}).items():
            values = {v for v in _enum(spec) if isinstance(v, str)}
            text = spec.get("description", "") or ""
            quoted = [a or b for a, b in _QUOTED.findall(text)]
            if len(quoted) >= 2 and all(len(q.split()) <= 2 for q in quoted):
                values |= set(quoted)
            listed = _LISTED.search(text)
            if listed and not values:
                values |= {w.strip() for w in re.split(r",\s*|\s+(?:or|and)\s+", listed.group(1)) if w.strip()}
            if values:
                by_param[f"{function}.{param}"] |= values
    by_name: dict[str, set[str]] = defaultdict(set)
    for owner, source in sources.items():
        for name, values in _compared(source).items():
            by_name[f"{owner}/{name}"] |= values
    return dict(by_param), dict(by_name)


def _enum(spec: Mapping[str, Any]) -> list[Any]:
    out = list(spec.get("enum", []))
    for option in spec.get("anyOf", []) + spec.get("oneOf", []):
        out += option.get("enum", []) if isinstance(option, dict) else []
    items = spec.get("items")
    return out + (list(items.get("enum", [])) if isinstance(items, dict) else [])


def _compared(source: str) -> dict[str, set[str]]:
    """Name -> the string constants the code compares it with (`x in {...}`, `x == '...'`) or looks it up by
    (`TABLE[x]` where TABLE is a dict literal with string keys). A name is a variable, an attribute or a
    subscript by a string (`room["type"]`)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    tables: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            value = node.value.args[0] if isinstance(node.value, ast.Call) and node.value.args \
                and getattr(node.value.func, "id", "") in ("frozenset", "set", "tuple", "list") else node.value
            keys = _constants(value) if not isinstance(value, ast.Dict) else {
                k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            size = len(value.keys) if isinstance(value, ast.Dict) else len(getattr(value, "elts", ()))
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(keys) >= 2 and len(keys) == size:
                for target in targets:
                    name = _named(target)
                    if name:
                        tables[name] = set(keys)
    out: dict[str, set[str]] = defaultdict(set)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            name = _named(node.left)
            for op, right in zip(node.ops, node.comparators):
                consts = _constants(right)
                if name and consts and isinstance(op, (ast.In, ast.NotIn, ast.Eq, ast.NotEq)):
                    out[name] |= consts
                if name and isinstance(op, (ast.In, ast.NotIn)) and _named(right) in tables:
                    out[name] |= tables[_named(right) or ""]
                other = _named(right)
                left = _constants(node.left)
                if other and left and isinstance(op, (ast.Eq, ast.NotEq)):
                    out[other] |= left
        elif isinstance(node, ast.Subscript) and _named(node.value) in tables:
            name = _named(node.slice)
            if name:
                out[name] |= tables[_named(node.value) or ""]
    return {k: {v for v in vs if len(v) <= 30 and len(v.split()) <= 3} for k, vs in out.items()}


def _named(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("get", "lower"):
        inner = node.func.value if node.func.attr == "lower" else node
        if node.func.attr == "get" and node.args and isinstance(node.args[0], ast.Constant):
            return node.args[0].value if isinstance(node.args[0].value, str) else None
        return _named(inner) if inner is not node else None
    return None


def _constants(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        values = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        return values if len(values) == len(node.elts) else set()
    return set()


def class_source(key: str) -> str:
    """The source of the module that defines an environment's class ("" when it cannot be read)."""
    from rods.envs.domain import domain_of

    try:
        module = inspect.getmodule(domain_of(key).load_class(key))
        return inspect.getsource(module) if module is not None else ""
    except Exception:  # a hosted environment's stand-in, a class without source: nothing declared
        return ""


# ----------------------------------------------------------------------------- the model


@dataclass
class ValueModel:
    """Slots of an environment's state fields and tool parameters (see the module docstring)."""

    fields: dict[str, Slot] = field(default_factory=dict)  # "owner/attr/*/field" -> slot
    params: dict[str, Slot] = field(default_factory=dict)  # "function.param" -> slot
    today: dict[str, str] = field(default_factory=dict)  # owner -> the path of its current date or day
    links: dict[str, str] = field(default_factory=dict)  # "function.param" -> the field its seed values sit in
    people: set[str] = field(default_factory=set)  # the people the seeds name
    companies: set[str] = field(default_factory=set)  # the companies the seeds name
    keys: dict[str, set[str]] = field(default_factory=dict)  # owner -> the keys of its maps (ids, handles)

    @classmethod
    def infer(cls, tasks: Iterable[Any], docs: Mapping[str, Mapping[str, Any]],
              sources: Mapping[str, str] | None = None) -> ValueModel:
        """The model of an environment from its seeds, its tools' docs (function -> doc, with "class") and the
        source of its classes' modules."""
        from rods.synth.profile import parse_ground_truth
        from rods.synth.values import is_prose, role_of

        tasks = list(tasks)
        by_param, by_name = declared_sets(docs, sources or {})
        model = cls()
        seen: dict[str, list[Any]] = defaultdict(list)
        repeats: set[str] = set()
        todays: list[dict[str, Any]] = []
        for task in tasks:
            now: dict[str, Any] = {}
            for owner, state in task.initial_config.items():
                if not isinstance(state, dict):
                    continue
                for attr, value in state.items():
                    if pieces(attr) & TODAY_WORDS and (as_date(value) or _is_int(value)):
                        model.today[owner] = f"{owner}/{attr}"
                        now[owner] = value
                counts: dict[str, set[Any]] = defaultdict(set)
                for path, value in slot_paths(owner, state):
                    seen[path].append(value)
                    if value in counts[path] and isinstance(value, str):
                        repeats.add(path)
                    counts[path].add(value)
            todays.append(now)
        for path, values in seen.items():  # the keys of the maps: ids and handles other fields refer to
            if path.endswith("#key"):
                model.keys.setdefault(path.split("/")[0], set()).update(v for v in values if isinstance(v, str))
        for path, values in seen.items():
            model.fields[path] = _field_slot(path, values, path in repeats, by_name, model, role_of, is_prose)
        for task, now in zip(tasks, todays):  # dates: how far from today the seeds' dates lie
            for owner, state in task.initial_config.items():
                if owner in now:
                    for path, value in slot_paths(owner, state):
                        _offset(model.fields.get(path), value, now[owner])
        args: dict[str, list[tuple[Any, Any]]] = defaultdict(list)  # "f.p" -> (value, that task's today)
        for task, now in zip(tasks, todays):
            today = next(iter(now.values()), None)
            try:
                turns = parse_ground_truth(task)
            except ValueError:
                continue
            for call in (c for turn in turns for c in turn):
                for param, value in call.arguments.items():
                    for item in value if isinstance(value, list) else [value]:
                        if item is not None and not isinstance(item, (bool, dict, list)):
                            args[f"{call.name}.{param}"].append((item, today))
        holders = _holders(seen)
        for function, doc in docs.items():
            for param, spec in doc.get("parameters", {}).get("properties", {}).items():
                key = f"{function}.{param}"
                model.params[key] = _param_slot(model, key, spec, args.get(key, []), by_param, by_name, holders,
                                                role_of, {f: d.get("class", "") for f, d in docs.items()})
        return model

    # -- reading ----------------------------------------------------------------------------------

    def field(self, path: str) -> Slot | None:
        return self.fields.get(path)

    def parameter(self, function: str, name: str) -> Slot | None:
        return self.params.get(f"{function}.{name}")

    def categories(self) -> frozenset[str]:
        """Every value of a category slot: values a variant may share with its seed (another member of the set
        is not a copy)."""
        return frozenset(v for slot in [*self.fields.values(), *self.params.values()] if slot.kind == "category"
                         for v in slot.members if isinstance(v, str))

    def today_of(self, owner: str, state: Mapping[str, Any] | None) -> Any:
        """The current date or day a class's state holds, or None."""
        path = self.today.get(owner)
        if path is None or not isinstance(state, Mapping):
            return None
        return state.get(path.rpartition("/")[2])

    def admits(self, slot: Slot | None, value: Any, today: Any = None) -> str | None:
        """Why `value` cannot fill `slot` (None when it can): a category value outside its set, a person named
        with words for things, a date far from today."""
        if slot is None or value is None or isinstance(value, bool):
            return None
        if slot.kind == "category" and slot.members and isinstance(value, str) and value not in slot.members:
            shown = ", ".join(repr(m) for m in sorted(slot.members, key=str)[:6])
            return f"{value!r} is none of {shown}"
        if slot.kind == "person" and isinstance(value, str) and value.strip():
            whole = all(" " in p for p in self.people) if self.people else " " in value
            if not value.startswith("@") and not is_person_name(value, self.people, whole=whole):
                return f"{value!r} is no person's name"
        if slot.kind == "company" and isinstance(value, str) and value not in self.companies \
                and any(w.lower() in _thing_words() for w in value.split()):
            return f"{value!r} is no company's name"
        if slot.kind == "date" and slot.offsets is not None and today is not None:
            days = _days_between(value, today)
            lo, hi = slot.offsets
            if days is not None and not lo - DATE_SLACK <= days <= hi + DATE_SLACK:
                return f"{value!r} is {days} days from today ({today!r}); the seeds' are {lo}..{hi}"
        return None

    def violations(self, task: Any) -> list[str]:
        """Where a task's state or calls leave the model: `path=value: why` per value (see `admits`)."""
        from rods.synth.profile import parse_ground_truth

        out: list[str] = []
        today = None
        for owner, state in task.initial_config.items():
            now = self.today_of(owner, state)
            today = today if now is None else now
            for path, value in slot_paths(owner, state):
                problem = self.admits(self.fields.get(path), value, now)
                if problem:
                    out.append(f"{path}: {problem}")
        for turn in parse_ground_truth(task):
            for call in turn:
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
        if isinstance(today, str) and as_date(today) is not None:
            return (as_date(today) + dt.timedelta(days=days)).isoformat()
        return today + days if _is_int(today) else None

    def draw_quantity(self, slot: Slot, rng: Any) -> int | float | None:
        """A number of the size the seeds gave this slot (None when they gave none)."""
        if slot.low is None or slot.high is None:
            return None
        lo, hi = slot.low, slot.high
        if slot.integer:
            return rng.randint(max(1, int(lo)) if lo >= 1 else int(lo), max(int(hi), int(lo) + 1))
        return round(rng.uniform(lo, hi), 2)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _days_between(value: Any, today: Any) -> int | None:
    day, now = as_date(value), as_date(today)
    if day is not None and now is not None:
        return (day - now).days
    if _is_int(value) and _is_int(today):
        return value - today
    return None


def _offset(slot: Slot | None, value: Any, today: Any) -> None:
    if slot is None or slot.kind != "date":
        return
    days = _days_between(value, today)
    if days is not None:
        lo, hi = slot.offsets if slot.offsets is not None else (days, days)
        slot.offsets = (min(lo, days), max(hi, days))


def _field_slot(path: str, values: list[Any], repeated: bool, by_name: Mapping[str, set[str]],
                model: ValueModel, role_of: Any, is_prose: Any) -> Slot:
    name = name_of(path)
    words = pieces(name)
    numbers = [v for v in values if isinstance(v, (int, float))]
    texts = [v for v in values if isinstance(v, str)]
    owner = path.split("/")[0]
    if numbers and not texts:
        if path == model.today.get(owner) or (owner in model.today and words & DATE_WORDS
                                              and all(map(_is_int, numbers))):
            return Slot("date")
        return Slot("quantity", low=min(numbers), high=max(numbers), integer=all(map(_is_int, numbers)))
    if not texts:
        return Slot("other")
    if all(as_date(v) for v in texts):
        return Slot("date", iso=True)
    distinct = set(texts)
    people = [v for v in distinct if is_person_name(v)]
    if role_of(name) in ("person", "first", "last") and any(name_shaped(v) for v in distinct) \
            and not any(_ID.fullmatch(v) for v in distinct) or (len(people) * 3 >= len(distinct) * 2 and people):
        model.people |= distinct
        return Slot("person")
    if distinct <= model.keys.get(owner, set()) and not by_name.get(f"{owner}/{name}"):
        return Slot("identifier")  # a record's key, or a reference to one (an organizer's handle): re-drawn alike
    declared = by_name.get(f"{owner}/{name}", set())
    if declared & distinct:
        return Slot("category", members=declared | distinct, declared=True)
    if repeated and len(distinct) <= MAX_CATEGORY and all(len(v) <= 30 and len(v.split()) <= 3 for v in distinct) \
            and not all(map(_ID.fullmatch, distinct)):
        return Slot("category", members=set(distinct))
    parent = [p for p in path.split("/")[1:-1] if p not in ("*", "[]", "#key")]
    if (words & COMPANY_WORDS or (parent and pieces(parent[-1]) & COMPANY_WORDS and "name" in words)) \
            and not words & {"id", "code", "key"} and not path.endswith("#key") \
            and all(map(_company_shaped, distinct)) and not any(_ID.fullmatch(v) for v in distinct):
        model.companies |= distinct
        return Slot("company")
    if path.endswith("#key") or all(_ID.fullmatch(v) for v in distinct):
        return Slot("identifier")
    if any(is_prose(v) for v in distinct):
        return Slot("text")
    return Slot("other")


def _holders(seen: Mapping[str, list[Any]]) -> dict[Any, list[str]]:
    """Text -> the field paths the seeds' states hold it in (a number says too little of where it came from)."""
    out: dict[Any, list[str]] = defaultdict(list)
    for path, values in seen.items():
        for value in set(v for v in values if isinstance(v, str)):
            out[value].append(path)
    return out


def _param_slot(model: ValueModel, key: str, spec: Mapping[str, Any], given: list[tuple[Any, Any]],
                by_param: Mapping[str, set[str]], by_name: Mapping[str, set[str]],
                holders: Mapping[Any, list[str]], role_of: Any, owners: Mapping[str, str]) -> Slot:
    name = key.rpartition(".")[2]
    votes: dict[str, int] = defaultdict(int)
    for value, _ in given:
        for path in holders.get(value, ()):
            votes[path] += 1
    linked = max(sorted(votes), key=lambda p: votes[p]) if votes else None
    if linked is not None:
        model.links[key] = linked
    target = model.fields.get(linked) if linked else None
    owner = owners.get(key.rpartition(".")[0], "")
    declared = by_param.get(key, set()) | (by_name.get(f"{owner}/{name}", set())
                                           if spec.get("type", "string") in ("string", "array") else set())
    if declared and (not given or {v for v, _ in given if isinstance(v, str)} <= declared):
        members = declared | (target.members if target is not None and target.kind == "category" else set())
        if target is not None and target.kind == "category":
            target.members |= declared
            target.declared = True
        return Slot("category", members=members, declared=True)
    if target is not None and target.kind in ("category", "person", "company", "identifier"):
        return Slot(target.kind, members=set(target.members), declared=target.declared)
    numbers = [v for v, _ in given if isinstance(v, (int, float)) and not isinstance(v, bool)]
    dated = [v for v, _ in given if as_date(v)]
    if (dated and len(dated) == len(given)) or (target is not None and target.kind == "date") \
            or (pieces(name) & DATE_WORDS and spec.get("type") in ("integer", "string") and model.today
                and all(_is_int(v) or as_date(v) for v, _ in given)):
        slot = Slot("date", iso=bool(dated) or spec.get("type") == "string")
        for value, today in given:
            _offset(slot, value, today)
        return slot
    owner_people = {name_of(p) for p, slot in model.fields.items()
                    if slot.kind == "person" and p.startswith(f"{owner}/")}
    if given and all(is_person_name(v, model.people) or (name in owner_people and name_shaped(v) and " " in v)
                     for v, _ in given):  # a new patient's name is a person's too
        model.people |= {v for v, _ in given}
        return Slot("person")
    if role_of(name) in ("person", "first", "last") and all(name_shaped(v) for v, _ in given):
        return Slot("person")
    if numbers:
        return Slot("quantity", low=min(numbers), high=max(numbers), integer=all(map(_is_int, numbers)))
    return Slot("other")
