"""The tau2 domain's hooks (`rods.envs.domain.Domain`): tau2-bench's airline and retail databases.

Its environments are Python classes (`rods.envs.tau2.environment`), so the
Python domain's hooks answer most questions; what tau2 adds is said here.
tau2's tools raise on failure (an `ERROR_PREFIX` result) and have no phrase
table: requests are phrased from tau2's own tool and parameter docs. Its
vocabulary adds the field names of the domain's database models, which a
variant's partial database update (`initial_config["db"]`) must keep.
"""

from __future__ import annotations

import typing
from typing import Any

from rods.envs.python.domain import PythonDomain
from rods.envs.vocabulary import words


def model_fields(model: Any, seen: set[type] | None = None) -> set[str]:
    """The field names of a pydantic model and of the models its fields hold, at any depth."""
    seen = set() if seen is None else seen
    if not isinstance(model, type) or model in seen or not hasattr(model, "model_fields"):
        return set()
    seen.add(model)
    out: set[str] = set()
    for name, field in model.model_fields.items():
        out.add(name)
        stack = [field.annotation]
        while stack:
            kind = stack.pop()
            stack.extend(typing.get_args(kind))
            out |= model_fields(kind, seen)
    return out


class Tau2Domain(PythonDomain):
    """tau2-bench's domains: a large shared database per class, copied on write."""

    name = "tau2"

    def build_vocabulary(self, key: str) -> frozenset[str]:
        db_class = getattr(self.load_class(key), "_db_class", None)  # the database's pydantic model
        fields = {w for name in model_fields(db_class) for w in words(name)}
        return super().build_vocabulary(key) | frozenset(fields)


DOMAIN = Tau2Domain()
