"""A variant's initial config: every involved class's defaults merged with the seed's config.

The defaults are the class domain's (`Domain.default_config`: BFCL's
`DEFAULT_STATE`; a Python class's are what its constructor makes, so none).
The planner remaps this config with the variant's
:class:`~rods.synth.values.ValueRemapper`, so even defaults the seed relied on
(a default file system, a default portfolio) take new values.
"""

from __future__ import annotations

import json
from typing import Any

from rods.envs.domains import domain_of
from rods.tasks.model import Task


def materialize_config(task: Task) -> dict[str, dict[str, Any]]:
    """Defaults of every involved class with state, overridden by the task's own config (JSON round-tripped)."""
    config = {}
    for cls in task.involved_classes:
        domain = domain_of(cls)
        if domain.stateless(cls):
            continue
        merged = domain.default_config(cls)
        merged.update(json.loads(json.dumps(task.initial_config.get(cls, {}))))
        config[cls] = merged
    return config
