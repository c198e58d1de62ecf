"""A database in an environment's state: its collections of records and the fields whose values repeat.

Read off the state alone, for any environment (tau2's users, orders, products,
reservations; any class whose state is maps of records keyed by id):

* **collections**: maps of at least `MIN_RECORDS` records (objects) keyed by
  id, anywhere in a class's state; no collection inside a record;
* **marks**: the fields of a collection's records (and of their entries: an
  order's items, a user's payment methods) whose values repeat (a status, a
  cabin, a payment source): at most `MARK_SHARE` of the records' count
  distinct values, or `MIN_MARKS`.

`rods.synth.counterparts` finds a seed's errand in it and another record to do
it for.
"""

from __future__ import annotations

import json
import threading
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rods.envs.contract import environment_from
from rods.envs.environment import public_state
from rods.envs.python.running import to_json
from rods.tasks.model import Task

#: A map holds a collection when it has this many records at least.
MIN_RECORDS = 8
#: A field is a mark when its records have at most max(MIN_MARKS, MARK_SHARE * records) distinct values.
MIN_MARKS = 12
MARK_SHARE = 0.05

Path = tuple[str, ...]
Scalar = str | int | float | bool | None


def is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def holds_entries(value: Any) -> bool:
    """Whether a value holds entries: a list of objects, or an object whose every value is an object."""
    if isinstance(value, list):
        return bool(value) and all(isinstance(v, dict) for v in value)
    return isinstance(value, dict) and bool(value) and all(isinstance(v, dict) for v in value.values())


def entries_of(value: Any) -> list[tuple[str | None, dict]]:
    """(key, entry) of a list of objects (no key) or a map of objects."""
    if isinstance(value, list):
        return [(None, v) for v in value]
    return list(value.items())


def scalars_of(value: Any) -> Iterator[Scalar]:
    """Every scalar inside a value, and the keys of its maps of records (ids); not field names, which calls
    pass too (a passenger's 'first_name') and which every record of a collection shares."""
    if isinstance(value, dict):
        ids = holds_entries(value)
        for k, v in value.items():
            if ids:
                yield k
            yield from scalars_of(v)
    elif isinstance(value, list):
        for v in value:
            yield from scalars_of(v)
    elif is_scalar(value):
        yield value


@dataclass
class Collection:
    """Records keyed by id at one place of a class's state, and the fields whose values repeat (`marks`)."""

    where: Path
    records: dict[str, dict]
    #: place inside a record ((): the record; ("items",): its items' entries) -> mark field -> distinct values
    marks: dict[Path, dict[str, int]] = field(default_factory=dict)

    @classmethod
    def of(cls, where: Path, records: dict[str, dict]) -> Collection:
        values: dict[Path, dict[str, set]] = defaultdict(lambda: defaultdict(set))
        counts: dict[Path, int] = defaultdict(int)

        def note(place: Path, record: dict) -> None:
            counts[place] += 1
            for name, value in record.items():
                if is_scalar(value):
                    values[place][name].add(json.dumps(value))

        for record in records.values():
            note((), record)
            for name, value in record.items():
                if holds_entries(value):
                    for _, entry in entries_of(value):
                        note((name,), entry)
        marks = {}
        for place, fields in values.items():
            limit = max(MIN_MARKS, MARK_SHARE * counts[place])
            marks[place] = {n: len(seen) for n, seen in fields.items() if len(seen) <= limit and counts[place] > 1}
        return cls(where, records, marks)


class Database:
    """The collections of an environment's state (class -> its state as JSON) and where each record key is."""

    def __init__(self, states: dict[str, Any]):
        self.collections: list[Collection] = []
        for cls, state in states.items():
            self._find(state, (cls,))
        self.home: dict[str, Collection] = {}
        for collection in self.collections:
            for key in collection.records:
                self.home.setdefault(key, collection)

    def _find(self, node: Any, where: Path) -> None:
        if isinstance(node, dict):
            if len(node) >= MIN_RECORDS and all(isinstance(v, dict) for v in node.values()):
                self.collections.append(Collection.of(where, node))
                return  # no collection inside a record
            for k, v in node.items():
                self._find(v, (*where, str(k)))

    def __bool__(self) -> bool:
        return bool(self.collections)


_CACHE: dict[str, Database] = {}
_LOCK = threading.Lock()


def database_of(seed: Task) -> Database:
    """The collections of the seed's initial state (cached per environment and initial config)."""
    key = json.dumps([seed.environment, seed.involved_classes, seed.initial_config], sort_keys=True, default=str)
    with _LOCK:
        cached = _CACHE.get(key)
    if cached is None:
        env = environment_from(seed.initial_config, seed.involved_classes)
        try:
            cached = Database({cls: to_json(public_state(env.instance(cls))) for cls in seed.involved_classes})
        finally:
            env.close()
        with _LOCK:
            _CACHE[key] = cached
    return cached
