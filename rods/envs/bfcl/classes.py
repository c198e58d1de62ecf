"""BFCL's API classes: where they live, their public methods, and loading an instance as BFCL does.

Loading mirrors BFCL (`_load_scenario(deepcopy(config), long_context=...)`,
nothing for the stateless MathAPI). An instance loaded here may still share
BFCL's module-level dicts (the long-context travel cards and bookings);
`rods.envs.classes.load_instance` copies it before a rollout gets it.
"""

from __future__ import annotations

import importlib
import inspect
from functools import cache
from typing import Any

from rods.tasks.bfcl import API_CLASS_FILES, bfcl_package_dir

_BACKEND = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
#: Class name -> module of the BFCL API classes used by the multi-turn categories.
CLASS_MODULES = {cls: f"{_BACKEND}.{stem}" for cls, stem in API_CLASS_FILES.items()}
#: Classes without a scenario to load (BFCL's STATELESS_CLASSES).
STATELESS_CLASSES = frozenset({"MathAPI"})


@cache
def api_class(name: str) -> type:
    """A BFCL API class by name (imported on first use)."""
    bfcl_package_dir()  # a clear error when bfcl-eval is missing
    return getattr(importlib.import_module(CLASS_MODULES[name]), name)


@cache
def public_methods(name: str) -> tuple[str, ...]:
    """Names of the public methods of a class, as BFCL maps them (bound, not `_`)."""
    instance = api_class(name)()
    return tuple(m for m, _ in inspect.getmembers(instance, predicate=inspect.ismethod) if not m.startswith("_"))


def load(name: str, config: dict[str, Any], long_context: bool) -> Any:
    """An instance loaded as BFCL loads it (`config` is already a private copy)."""
    instance = api_class(name)()
    if name not in STATELESS_CLASSES:
        instance._load_scenario(config, long_context=long_context)
    return instance


def default_state(name: str) -> dict[str, Any]:
    """The module's `DEFAULT_STATE` (what a class loads when the config leaves a key out), or {}."""
    if name in STATELESS_CLASSES:
        return {}
    return dict(getattr(importlib.import_module(CLASS_MODULES[name]), "DEFAULT_STATE", {}))
