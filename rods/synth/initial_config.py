"""A variant's initial config: every involved class's defaults merged with the seed's config.

The planner remaps this config with the variant's
:class:`~rods.synth.values.ValueRemapper`, so even defaults the seed relied on
(a default file system, a default portfolio) take new values.
"""

from __future__ import annotations

import copy
import importlib
import json
import random
from typing import Any

from rods.envs.environment import CLASS_MODULES, STATELESS_CLASSES, is_bfcl
from rods.synth.values import NOUNS
from rods.tasks.model import Task


def default_config(cls: str) -> dict[str, Any]:
    """A BFCL class's `DEFAULT_STATE` as plain JSON (sets and unserialisable values dropped).

    A Python environment has none: its defaults are what its constructor makes,
    so a variant's config is the seed's own, remapped.
    """
    if cls in STATELESS_CLASSES or not is_bfcl(cls):
        return {}
    module = importlib.import_module(CLASS_MODULES[cls])
    out = {}
    for key, value in copy.deepcopy(getattr(module, "DEFAULT_STATE", {})).items():
        try:
            out[key] = json.loads(json.dumps(value))
        except TypeError:
            continue
    return out


def materialize_config(task: Task) -> dict[str, dict[str, Any]]:
    """Defaults of every involved class, overridden by the task's own config (JSON round-tripped)."""
    config = {}
    for cls in task.involved_classes:
        if cls in STATELESS_CLASSES:
            continue
        merged = default_config(cls)
        merged.update(json.loads(json.dumps(task.initial_config.get(cls, {}))))
        config[cls] = merged
    return config


def rename_unchanged_root(config: dict, seed: Task, rng: random.Random) -> None:
    """A file system made only of environment words would come out unchanged: rename its top directory."""
    fs = config.get("GorillaFileSystem")
    root = (fs or {}).get("root")
    if not isinstance(root, dict) or len(root) != 1 or fs != seed.initial_config.get("GorillaFileSystem"):
        return
    ((_, node),) = root.items()
    fs["root"] = {f"{rng.choice(NOUNS)}_{rng.choice(NOUNS)}": node}
