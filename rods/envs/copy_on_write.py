"""Copy-on-write databases: rollouts share one loaded database and copy only what they change (docs/design.md §2.7).

A tau2 database is a pydantic model whose fields are tables (dicts of id ->
model); airline's holds tens of thousands of objects, so a deep copy per
rollout, or a pickle round trip, costs about a second. Here every instance
starts from one shared, never-modified `base`:

* a read-only tool runs on the shared objects as they are;
* a writing tool runs inside `writing(db, base)`: the tables are this
  instance's own dicts, and an entry the tool reads from one is first
  replaced by a deep copy of itself (copy on get), so the base is never
  touched;
* `delta(db, base)` is what differs from the base (the entries this instance
  owns, and the keys it removed); pickling an environment carries only that,
  and `rebuild(base, delta)` puts it back together.

Unchanged entries stay the very same objects, so two states compare with `==`
in the time their few differing entries take.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

_MISSING = object()


class CopyOnGet(dict[Any, Any]):
    """A table during a writing tool: an entry still shared with the base is deep-copied when first read."""

    def __init__(self, table: dict[Any, Any], base: dict[Any, Any]) -> None:
        super().__init__(table)
        self._base = base

    def _own(self, key: Any, value: Any) -> Any:
        if value is self._base.get(key, _MISSING):
            value = copy.deepcopy(value)
            dict.__setitem__(self, key, value)
        return value

    def __getitem__(self, key: Any) -> Any:
        return self._own(key, dict.__getitem__(self, key))

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self else default

    def pop(self, key: Any, *default: Any) -> Any:
        if key not in self:
            return dict.pop(self, key, *default)
        value = self[key]
        dict.__delitem__(self, key)
        return value

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            dict.__setitem__(self, key, default)
        return self[key]

    def values(self) -> Any:
        return [self[key] for key in list(dict.keys(self))]

    def items(self) -> Any:
        return [(key, self[key]) for key in list(dict.keys(self))]

    def popitem(self) -> tuple[Any, Any]:
        key = next(reversed(list(dict.keys(self))))
        return key, self.pop(key)


def tables(model: BaseModel) -> list[str]:
    """The fields of `model` that are tables (dicts)."""
    return [name for name, value in model.__dict__.items() if isinstance(value, dict)]


@contextmanager
def writing(db: M, base: M) -> Iterator[M]:
    """`db` made safe for a tool that may change it: yields the model to run the tool on (keep it after).

    If `db` is the base itself it is first copied shallowly (tables as new
    dicts, entries shared); fields that are not tables are deep-copied.
    """
    if db is base:
        db = base.model_copy()
        for name, value in db.__dict__.items():
            db.__dict__[name] = dict(value) if isinstance(value, dict) else copy.deepcopy(value)
    names = tables(db)
    for name in names:
        db.__dict__[name] = CopyOnGet(db.__dict__[name], base.__dict__.get(name, {}))
    try:
        yield db
    finally:
        for name in names:
            db.__dict__[name] = dict.copy(db.__dict__[name])


def delta(db: BaseModel, base: BaseModel) -> dict[str, Any] | None:
    """What `db` holds that `base` does not (None when `db` is the base): owned entries, removed keys, other fields."""
    if db is base:
        return None
    owned: dict[str, dict[Any, Any]] = {}
    removed: dict[str, list[Any]] = {}
    fields: dict[str, Any] = {}
    for name, value in db.__dict__.items():
        base_value = base.__dict__.get(name, _MISSING)
        if isinstance(value, dict) and isinstance(base_value, dict):
            owned[name] = {k: v for k, v in value.items() if v is not base_value.get(k, _MISSING)}
            removed[name] = [k for k in base_value if k not in value]
            if list(value) != [k for k in base_value if k in value] + [k for k in owned[name] if k not in base_value]:
                fields[name] = value  # keys reordered: keep the whole table (never happens with tau2's tools)
        elif value is not base_value:
            fields[name] = value
    return {"owned": owned, "removed": removed, "fields": fields}


def rebuild(base: M, change: dict[str, Any] | None) -> M:
    """The model `delta` described: the base's shared entries plus the owned ones."""
    if change is None:
        return base
    db = base.model_copy()
    for name, value in base.__dict__.items():
        if name in change["fields"]:
            db.__dict__[name] = change["fields"][name]
        elif isinstance(value, dict):
            removed = set(change["removed"].get(name, ()))
            table = {k: v for k, v in value.items() if k not in removed}
            table.update(change["owned"].get(name, {}))
            db.__dict__[name] = table
    return db
