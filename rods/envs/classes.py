"""Environment classes: a class key's tools, loading and copying instances, whatever the domain.

A class key is one of BFCL's API class names, the import path of a user's
Python class, or an MCP manifest path; its domain (`rods.envs.domain`) loads
it into a plain instance whose public methods are the tools and whose public
attributes are the state. Copying is a pickle round trip, which for these
plain-data objects equals `copy.deepcopy` and is several times faster.
"""

from __future__ import annotations

import contextlib
import copyreg
import io
import pickle
import random
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from rods.envs.calls import parse_calls
from rods.envs.domains import domain_of


def api_class(name: str) -> type:
    """The class a key names (imported on first use; a hosted environment's stand-in class)."""
    return domain_of(name).load_class(name)


@cache
def public_methods(name: str) -> tuple[str, ...]:
    """Names of the tools of a class: the public methods the executor may call."""
    return tuple(domain_of(name).tool_names(name))


def method_owners(involved_classes: Iterable[str]) -> dict[str, str]:
    """Function name -> class that executes it; on a clash the last class wins (as in BFCL)."""
    owners: dict[str, str] = {}
    for cls in involved_classes:
        for method in public_methods(cls):
            owners[method] = cls
    return owners


#: A class's config key listing calls to run right after loading: the gold calls of
#: the turns before a turn slice (rods.envs.slices), so it starts from their state.
REPLAY_KEY = "_rods_replay"


def load_shared(cls: str, initial_config: Mapping[str, Any], long_context: bool, seed: int | None = None) -> Any:
    """An instance loaded by its domain from the task's config; a BFCL instance may still share BFCL's
    module-level dicts. Calls listed under `REPLAY_KEY` in the class's config then run on it, in order.
    """
    # BFCL deep-copies the config; a pickle round trip is the same copy for this plain data, and faster.
    config = thaw(freeze(dict(initial_config.get(cls, {}))))
    replay = config.pop(REPLAY_KEY, [])
    domain = domain_of(cls)
    instance = domain.load(cls, config, long_context=long_context, seed=seed)
    if domain.stateless(cls):
        return instance  # nothing a call could change
    for text in replay:
        _replay(cls, instance, text)
    return instance


def _replay(cls: str, instance: Any, text: str) -> None:
    """Run one gold call on `instance`; a failure is part of the history, as it was for the gold agent.

    Only public methods of the class run, as for a model's call (a task file is input, not code).
    """
    for call in parse_calls(text):
        if call.name not in public_methods(cls):
            raise ValueError(f"{REPLAY_KEY} of {cls}: {call.name!r} is not a public method of {cls}")
        with contextlib.suppress(Exception):  # BFCL records the error and moves on
            getattr(instance, call.name)(*thaw(freeze(call.args)), **thaw(freeze(call.arguments)))


def load_instance(cls: str, initial_config: Mapping[str, Any], long_context: bool, seed: int | None = None) -> Any:
    """A fresh instance loaded from the task's config, owning all its data.

    Isolation: BFCL's long-context loading hangs module-level dicts (travel cards
    and bookings) into the instance; the copy at the end cuts those references.
    """
    instance = load_shared(cls, initial_config, long_context, seed)
    if getattr(type(instance), "rods_snapshot", False):  # hosted by replay: it owns its state already
        return instance
    return thaw(freeze(instance))


def load_frozen(cls: str, initial_config: Mapping[str, Any], long_context: bool) -> bytes:
    """`freeze(load_instance(...))` without the intermediate copy (the bytes own their data)."""
    return freeze(load_shared(cls, initial_config, long_context))


def _thaw_random(state: tuple) -> random.Random:
    twin = random.Random.__new__(random.Random)  # no seeding from the OS: setstate follows
    twin.setstate(state)
    return twin


def _reduce_random(obj: random.Random) -> tuple:
    # `Random.__reduce__` re-seeds from os.urandom before restoring the state; skip that.
    return _thaw_random, (obj.getstate(),)


#: Per-type reducers for `freeze` (a dispatch table: looked up in C, no per-object callback).
_DISPATCH = {**copyreg.dispatch_table, random.Random: _reduce_random}


def freeze(obj: Any) -> bytes:
    """An object graph as bytes; `thaw` makes independent deep copies of it."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = _DISPATCH
    try:
        pickler.dump(obj)
    except (pickle.PicklingError, TypeError, AttributeError) as err:
        raise RuntimeError(f"environment state cannot be copied: {err}") from err
    return buffer.getvalue()


def thaw(blob: bytes) -> Any:
    """A new deep copy of a frozen object graph."""
    return pickle.loads(blob)
