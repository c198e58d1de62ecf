"""Counterparts: the seed's errand done for another of the database's own people (docs/design.md §4.12).

A recast (`rods.synth.recast`) renames what a seed's world holds of its own.
Where that world is the environment's own, a large database every task
shares (tau2's airline and retail), the seed has nothing of its own to rename:
its customer, her orders and payment methods are records of the database.
A variant of such a seed takes a *counterpart*: another record of the same
collection (another customer) whose records the errand touches have the
seed's shape, and does the seed's errand for them, calls and words alike.

Read off the state alone, for any environment, in the database's
collections and marks (`rods.synth.database`):

* **touched**: the records whose keys the seed's calls pass;
* the **anchor**: the touched record that holds the most keys of the others
  (the customer holds her orders). The touched records it holds are *owned*
  and get counterparts among the records the anchor's counterpart holds at
  the same place; the others (a product, a flight) are *shared* and kept;
* the **marks** (fields whose values repeat: a status, a cabin): a
  counterpart has the seed record's marks (those of `FEW` values always, of
  more where the calls or words say them; an owned record only read, none),
  and each entry the calls name inside it has a counterpart entry of the same
  shared references (an item of the same product) and of the marks the calls
  or words say;
* the **mapping**: seed value -> counterpart value for every scalar of the
  aligned records, path by path (name, zip, order ids, item ids, prices),
  which the calls and the words then follow (`rods.synth.mentions`).

Whether the errand holds for the counterpart is not judged here: the
pipeline runs the mapped calls (a call meant to fail must fail) and puts the
variant through every check a recast passes.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from rods.synth.database import (
    Collection,
    Database,
    entries_of,
    holds_entries,
    is_scalar,
    scalars_of,
)
from rods.synth.dates import as_date
from rods.synth.people import is_person_name

#: A mark of at most this many values (a status, a cabin) is always kept; a wider one (an airport, a count of
#: bags) only where the calls or the words say its value.
FEW = 6
#: Anchors tried per search (drawn in a random order).
MAX_ANCHORS = 5000


@dataclass
class Errand:
    """What of the database a seed's calls touch: its anchor, the records the anchor owns, the values said."""

    anchor: str
    home: Collection
    owned: dict[str, tuple[Collection, str]]  # owned record key -> (its collection, the anchor's field holding it)
    shared: frozenset[str]  # touched record keys kept as they are (a product, a flight)
    said: frozenset  # every scalar the calls pass (JSON-dumped)
    written: frozenset[str]  # the owned records a write passes: their counterparts have their marks too
    told: str = ""  # the seed's messages, lower case: a wide mark they say is kept

    def says(self, value: Any) -> bool:
        """Whether the calls pass `value` or the words write it (a date also as "May 17" or "17 May", a
        'gift_card' as "gift card")."""
        if json.dumps(value) in self.said:
            return True
        if not isinstance(value, str) or len(value) < 2:
            return False
        day = as_date(value)
        forms = [value, value.replace("_", " ")]  # 'gift_card' said as "gift card"
        if day is not None:
            forms += [f"{day:%B} {day.day}", f"{day.day} {day:%B}"]
        return any(re.search(rf"(?<![\w-]){re.escape(f.lower())}(?![\w-])", self.told) for f in forms)


def _listed(record: dict) -> Iterator[tuple[str, str]]:
    """(field, key) of the fields of a record that list keys: a list of strings or a map's keys."""
    for name, value in record.items():
        if isinstance(value, list):
            yield from ((name, k) for k in value if isinstance(k, str))
        elif isinstance(value, dict):
            yield from ((name, k) for k in value)


def errand_of(db: Database, said: list[Any], written: list[Any] = (), told: str = "") -> Errand | None:
    """The anchor and owned records of a seed whose calls pass `said` (`written`: what its writes pass); None
    where no record is touched. The anchor is the touched record that lists the most others (a customer her
    orders; an order's one `user_id` is no list), the first said on a tie."""
    touched = [v for v in dict.fromkeys(v for v in said if isinstance(v, str)) if v in db.home]
    if not touched:
        return None

    def listed(key: str) -> list[tuple[str, str]]:
        return [(name, k) for name, k in _listed(db.home[key].records[key])
                if k in touched and k != key and db.home[k] is not db.home[key]]

    def lists_any(key: str) -> bool:  # a customer lists her reservations even when the errand makes a new one
        return any(k in db.home and db.home[k] is not db.home[key] for _, k in _listed(db.home[key].records[key]))

    for key in list(touched):  # and up to the record that lists each (an order's customer): her errand
        for _ in range(len(db.collections)):
            up = _lister(db, key)
            if up is None or up in touched:
                break
            touched.append(up)
            key = up
    anchor = max(touched, key=lambda k: (len(listed(k)), lists_any(k), -touched.index(k)))
    owned: dict[str, tuple[Collection, str]] = {}
    for name, k in listed(anchor):
        owned.setdefault(k, (db.home[k], name))
    shared = frozenset(t for t in touched if t != anchor and t not in owned)
    return Errand(anchor, db.home[anchor], owned, shared, frozenset(json.dumps(v) for v in said),
                  frozenset(k for k in owned if k in set(v for v in written if isinstance(v, str))), told.lower())


def _lister(db: Database, key: str) -> str | None:
    """The record of another collection that a field of `key`'s record names and that lists `key` back (an
    order's `user_id`, whose customer lists the order), or None."""
    home = db.home[key]
    for value in home.records[key].values():
        if isinstance(value, str) and value in db.home and db.home[value] is not home:
            if any(k == key for _, k in _listed(db.home[value].records[value])):
                return value
    return None


class Aligner:
    """Pairs a seed record's scalars with its counterpart's, path by path; entries matched by their marks."""

    def __init__(self, db: Database, errand: Errand):
        self.db = db
        self.errand = errand
        kept = {errand.home.where, *(c.where for c, _ in errand.owned.values())}
        self.shared_keys = {k for k, c in db.home.items() if c.where not in kept}

    def record(self, seed: dict, other: dict, collection: Collection) -> list[tuple[Any, Any]] | None:
        """The pairs of two records of one collection (None where an entry the calls name has no counterpart)."""
        pairs: list[tuple[Any, Any]] = []
        for name, value in seed.items():
            if name not in other:
                continue
            if holds_entries(value) and holds_entries(other[name]):
                found = self.entries(value, other[name], collection.marks.get((name,), {}))
                if found is None:
                    return None
                pairs += found
            else:
                pairs += self.plain(value, other[name])
        return pairs if self.complete(seed, pairs) else None

    def entries(self, seed: Any, other: Any, marks: dict[str, int]) -> list[tuple[Any, Any]] | None:
        """Each seed entry with the first unused counterpart entry of its shared references and of the marks the
        calls or words say (a card's brand only where "my Visa" is said; what the errand's tools require of it,
        a gift card's balance, the run checks); None where one the calls name has none."""
        pairs: list[tuple[Any, Any]] = []
        free = entries_of(other)
        # the entries the calls name first: an entry nobody names must not take the one match of a named one
        ordered = sorted(entries_of(seed), key=lambda item: not self._named_entry(*item))
        for key, entry in ordered:
            match = next((i for i, (_, e) in enumerate(free) if self.alike(entry, e, marks, few=False)), None)
            if match is None:
                if self._named_entry(key, entry):
                    return None
                continue
            other_key, other_entry = free.pop(match)
            if key is not None:
                pairs.append((key, other_key))
            pairs += self.plain(entry, other_entry)
        return pairs

    def alike(self, seed: dict, other: dict, marks: dict[str, int], few: bool = True) -> bool:
        """Whether `other` keeps `seed`'s marks and its shared references (a product): a mark of `FEW` values
        always (unless not `few`), a wider one where the calls or the words say it."""
        for name, value in seed.items():
            if other.get(name) == value:
                continue
            if isinstance(value, str) and value in self.shared_keys:
                return False
            if name in marks and (few and marks[name] <= FEW and not isinstance(value, (int, float))
                                  or self.errand.says(value) and not is_person_name(value, whole=False)):
                return False  # a said name is the errand's person, whom the counterpart's replaces
        return True

    def named(self, value: Any) -> bool:
        """Whether the calls pass a value held in `value`."""
        return any(json.dumps(v) in self.errand.said for v in scalars_of(value))

    def _named_entry(self, key: str | None, entry: dict) -> bool:
        """Whether the calls pass the entry's key (a payment method's id) or a value it holds."""
        return self.named(entry) or (key is not None and json.dumps(key) in self.errand.said)

    def plain(self, seed: Any, other: Any) -> list[tuple[Any, Any]]:
        """Pairs of two values of one shape: objects by field, lists of one length by place, scalars."""
        if isinstance(seed, dict) and isinstance(other, dict):
            return [p for k in seed if k in other for p in self.plain(seed[k], other[k])]
        if isinstance(seed, list) and isinstance(other, list):
            if len(seed) != len(other):
                return []
            return [p for a, b in zip(seed, other) for p in self.plain(a, b)]
        if is_scalar(seed) and is_scalar(other) and type(seed) is type(other):
            return [(seed, other)]
        return []

    def complete(self, seed: dict, pairs: list[tuple[Any, Any]]) -> bool:
        """Whether every value the calls pass from this record is paired (an owned record's key aside)."""
        paired = {json.dumps(a) for a, _ in pairs}
        owned = set(self.errand.owned)
        return all(json.dumps(v) in paired or v in owned for v in scalars_of(seed)
                   if json.dumps(v) in self.errand.said)


def counterparts(db: Database, errand: Errand, rng: random.Random) -> Iterator[dict[str, Any]]:
    """Mappings (JSON-dumped seed value -> counterpart value) for anchors drawn in a random order: each a
    record of the anchor's collection whose owned records have counterparts of the same marks. A mapping
    sends no seed value to two values: a value paired twice is left out of it, and where the calls or the words
    say it (the customer's zip, which her order's address holds too, and the counterpart's order was sent
    elsewhere) the counterpart is passed over; so is one that has no match of a value of the seed's records the
    words say (two flights "on May 17" where the counterpart's reservations are on other days)."""
    aligner = Aligner(db, errand)
    home = errand.home
    seed_record = home.records[errand.anchor]
    told_values = {v for r in [seed_record, *(c.records[k] for k, (c, _) in errand.owned.items())]
                   for v in _told(r, errand)}
    keys = [k for k in home.records if k != errand.anchor]
    rng.shuffle(keys)
    for key in keys[:MAX_ANCHORS]:
        other = home.records[key]
        if not aligner.alike(seed_record, other, home.marks.get((), {})):
            continue
        pairs = [(errand.anchor, key)]
        anchored = aligner.record(_without(seed_record, errand.owned), other, home)
        if anchored is None:
            continue
        pairs += anchored
        if not _owned_pairs(db, errand, aligner, other, pairs):
            continue
        mapping: dict[str, Any] = {}
        twice: set[str] = set()
        for old, new in pairs:
            k = json.dumps(old)
            if k in mapping and mapping[k] != new:
                twice.add(k)
            mapping.setdefault(k, new)
        if any(errand.says(json.loads(k)) for k in twice):  # a zip the user writes, the counterpart's two zips
            continue
        if any(json.dumps(v) not in mapping and errand.says(v) for v in told_values):
            continue  # the words say a value of the errand's records that the counterpart has no match of
        yield {k: v for k, v in mapping.items() if k not in twice}


def _told(value: Any, errand: Errand) -> Iterator[str]:
    """The names, ids, codes and dates of a record (not its field names, not a plain word: 'no') the words say."""
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, dict):
                yield from _told(k, errand)  # the key of a record is its id
            yield from _told(v, errand)
    elif isinstance(value, list):
        for v in value:
            yield from _told(v, errand)
    elif isinstance(value, str) and (value[:1].isupper() or re.search(r"\d", value)) and errand.says(value):
        yield value


def _held(value: Any) -> list:
    """What a field holds as keys: a list's items, a map's keys, else the value itself."""
    return list(value) if isinstance(value, (list, dict)) else [value]


def _without(record: dict, owned: Any) -> dict:
    """A record less the fields listing owned records' keys (those are paired record by record)."""
    return {name: value for name, value in record.items()
            if not any(isinstance(k, str) and k in owned for k in _held(value))}


def _owned_pairs(db: Database, errand: Errand, aligner: Aligner, other: dict, pairs: list) -> bool:
    """Each owned record paired with a distinct one the counterpart anchor holds in the same field, of the same
    marks (`pairs` extended in place); False where one has none."""
    used: set[str] = set()
    for key, (collection, name) in errand.owned.items():
        options = _held(other.get(name))
        seed_record = collection.records[key]
        # a record the errand only reads needs no marks of its own (any of the counterpart's orders is read as
        # the seed's were); one a write passes is the errand's, and has its seed's
        full = collection.marks.get((), {})
        marks = full if key in errand.written else {}
        records = collection.records
        options.sort(key=lambda o: not (o in records and aligner.alike(seed_record, records[o], full)))
        for option in options:
            if not isinstance(option, str) or option in used or option not in collection.records:
                continue
            record = collection.records[option]
            if not aligner.alike(seed_record, record, marks):
                continue
            found = aligner.record(seed_record, record, collection)
            if found is not None:
                used.add(option)
                pairs += [(key, option), *found]
                break
        else:
            return False
    return True


def mapped(value: Any, mapping: dict[str, Any]) -> Any:
    """`value` with each scalar (inside lists and records too) the mapping holds replaced; a number keeps its
    type (a price 67 stays an int), and an amount with decimals inside a text is replaced too."""
    if isinstance(value, list):
        return [mapped(v, mapping) for v in value]
    if isinstance(value, dict):
        return {mapped(k, mapping) if isinstance(k, str) else k: mapped(v, mapping) for k, v in value.items()}
    key = json.dumps(value) if is_scalar(value) else None
    if isinstance(value, str) and key not in mapping:  # an expression of the errand's prices: "466.75 + 288.82"
        return re.sub(r"(?<![\w.])\d+\.\d+(?![\w.])", lambda m: _number_in(m.group(), mapping), value)
    if key is None or key not in mapping:
        if isinstance(value, int) and not isinstance(value, bool) and json.dumps(float(value)) in mapping:
            new = mapping[json.dumps(float(value))]
            return int(new) if isinstance(new, float) and new == int(new) else new
        return value
    new = mapping[key]
    if isinstance(value, float) and isinstance(new, int) and not isinstance(new, bool):
        return float(new)
    return new


def _number_in(text: str, mapping: dict[str, Any]) -> str:
    """An amount written in a text, as its counterpart's (with as many decimals) where the mapping has one."""
    new = mapping.get(json.dumps(float(text)))
    if not isinstance(new, (int, float)) or isinstance(new, bool):
        return text
    return f"{new:.{len(text.split('.')[1])}f}"
