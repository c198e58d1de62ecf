"""The tau2 domain's hooks (`rods.envs.domain.Domain`): tau2-bench's airline and retail databases.

Its environments are Python classes (`rods.envs.tau2.environment`), so the
Python domain's hooks answer most questions; what tau2 adds is said here.
tau2's tools raise on failure (an `ERROR_PREFIX` result) and have no phrase
table: requests are phrased from tau2's own tool and parameter docs.
"""

from __future__ import annotations

from rods.envs.python.domain import PythonDomain


class Tau2Domain(PythonDomain):
    """tau2-bench's domains: a large shared database per class, copied on write."""

    name = "tau2"


DOMAIN = Tau2Domain()
