"""Environment classes: where they live, their public methods, loading and copying instances.

A class key is one of BFCL's eight API class names or the import path of a
user's Python class (`rods.envs.python`); both load into plain instances whose
public methods are the tools and whose public attributes are the state.

Loading of BFCL classes mirrors BFCL (`_load_scenario(deepcopy(config), long_context=...)`,
nothing for stateless classes); copying is a pickle round trip, which for these
plain-data objects equals `copy.deepcopy` and is several times faster.
"""

from __future__ import annotations

import contextlib
import copyreg
import importlib
import inspect
import io
import pickle
import random
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from rods.envs import python as python_env, replayed
from rods.envs.calls import parse_calls
from rods.tasks.bfcl import API_CLASS_FILES, bfcl_package_dir

_BACKEND = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
#: Class name -> module of the BFCL API classes used by the multi-turn categories.
CLASS_MODULES = {cls: f"{_BACKEND}.{stem}" for cls, stem in API_CLASS_FILES.items()}
#: Classes without a scenario to load (BFCL's STATELESS_CLASSES).
STATELESS_CLASSES = frozenset({"MathAPI"})


def is_bfcl(name: str) -> bool:
    """Whether a class key names one of BFCL's API classes (else it is a Python class's import path)."""
    return name in CLASS_MODULES


def is_replayed(name: str) -> bool:
    """Whether a class key names a protocol-only environment, hosted by replay (`rods.envs.replayed`)."""
    return not is_bfcl(name) and replayed.is_protocol_class(name)


@cache
def api_class(name: str) -> type:
    """The class a key names: a BFCL API class, or a Python class by import path (imported on first use)."""
    if not is_bfcl(name):
        if replayed.is_manifest(name):
            return replayed.ReplayedEnvironment
        if ":" not in name:
            raise ValueError(
                f"unknown API class {name!r}; expected one of {sorted(CLASS_MODULES)}, 'module:Class' or a manifest"
            )
        return python_env.load_class(name)
    bfcl_package_dir()  # a clear error when bfcl-eval is missing
    return getattr(importlib.import_module(CLASS_MODULES[name]), name)


@cache
def public_methods(name: str) -> tuple[str, ...]:
    """Names of the public methods of a class, as BFCL maps them (bound, not `_`)."""
    if not is_bfcl(name):
        return replayed.tool_names(name) if is_replayed(name) else python_env.tool_methods(api_class(name))
    instance = api_class(name)()
    return tuple(m for m, _ in inspect.getmembers(instance, predicate=inspect.ismethod) if not m.startswith("_"))


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
    """An instance loaded exactly as BFCL loads it; it may still share BFCL's module-level dicts.

    A Python class loads through `rods.envs.python.load_instance` (with `seed`).
    Calls listed under `REPLAY_KEY` in the class's config then run on it, in order.
    """
    # BFCL deep-copies the config; a pickle round trip is the same copy for this plain data, and faster.
    config = thaw(freeze(dict(initial_config.get(cls, {}))))
    replay = config.pop(REPLAY_KEY, [])
    if not is_bfcl(cls):
        if is_replayed(cls):
            instance = replayed.ReplayedEnvironment(cls, config, seed)
        else:
            instance = python_env.load_instance(api_class(cls), config, seed)
        for text in replay:
            _replay(cls, instance, text)
        return instance
    instance = api_class(cls)()
    if cls in STATELESS_CLASSES:
        return instance  # nothing to load, nothing a call could change
    instance._load_scenario(config, long_context=long_context)
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
