"""Copy-on-write databases: a writer never touches the shared base, and what it changed survives pickling."""

from __future__ import annotations

import copy
import pickle

from hypothesis import given, strategies as st
from pydantic import BaseModel

from rods.envs.copy_on_write import delta, rebuild, writing


class Item(BaseModel):
    count: int
    tags: list[str]


class Store(BaseModel):
    items: dict[str, Item]
    owners: dict[str, Item]
    note: list[str]


KEYS = st.sampled_from(["a", "b", "c", "d", "e"])
TABLES = st.sampled_from(["items", "owners"])
# One operation a tool might do: bump a counter, append a tag, add an entry, remove an entry, edit the note.
OPS = st.one_of(
    st.tuples(st.just("bump"), TABLES, KEYS, st.integers(-3, 3)),
    st.tuples(st.just("tag"), TABLES, KEYS, st.text(max_size=3)),
    st.tuples(st.just("add"), TABLES, KEYS, st.integers(0, 9)),
    st.tuples(st.just("pop"), TABLES, KEYS, st.none()),
    st.tuples(st.just("note"), st.none(), st.none(), st.text(max_size=3)),
)


def base_store() -> Store:
    return Store(
        items={k: Item(count=i, tags=[k]) for i, k in enumerate("abc")},
        owners={k: Item(count=10 * i, tags=[]) for i, k in enumerate("bcd")},
        note=["start"],
    )


def apply(db: Store, op: tuple) -> None:
    """What a tool does to a database: reads entries with [], changes them in place, adds and removes."""
    kind, table_name, key, value = op
    if kind == "note":
        db.note.append(value)
        return
    table = getattr(db, table_name)
    if kind == "add":
        table[key] = Item(count=value, tags=[])
    elif key not in table:
        return
    elif kind == "bump":
        table[key].count += value
    elif kind == "tag":
        table[key].tags.append(value)
    elif kind == "pop":
        table.pop(key)


@given(st.lists(st.lists(OPS, max_size=6), max_size=4))
def test_writers_change_only_their_copy_and_pickle_keeps_it(calls):
    base = base_store()
    pristine = copy.deepcopy(base)
    reference = copy.deepcopy(base)
    db = base
    for ops in calls:  # one writing tool call per list
        with writing(db, base) as db:
            for op in ops:
                apply(db, op)
        for op in ops:
            apply(reference, op)
        assert db == reference
        assert base == pristine, "a writer changed the shared base"
    copied = rebuild(base, pickle.loads(pickle.dumps(delta(db, base))))
    assert copied == reference
    assert list(copied.items) == list(reference.items)  # table order survives too
    assert base == pristine


def test_an_untouched_database_is_the_base_itself_and_pickles_to_nothing():
    base = base_store()
    assert delta(base, base) is None
    assert rebuild(base, None) is base


def test_a_change_carries_only_the_entries_it_owns():
    base = base_store()
    with writing(base, base) as db:
        db.items["b"].count = 99
    change = delta(db, base)
    assert change is not None
    assert change["owned"] == {"items": {"b": Item(count=99, tags=["b"])}, "owners": {}}
    assert db.items["a"] is base.items["a"]  # unchanged entries stay shared
    assert base.items["b"].count == 1


def test_iterating_a_table_inside_a_writer_does_not_leak_shared_entries():
    base = base_store()
    with writing(base, base) as db:
        for item in db.items.values():
            item.count += 100
        for _, item in db.owners.items():
            item.tags.append("x")
    assert [i.count for i in base.items.values()] == [0, 1, 2]
    assert all(i.tags == [] for i in base.owners.values())
    assert [i.count for i in db.items.values()] == [100, 101, 102]
