"""Which domain an environment belongs to (`rods.envs.domain` holds the contract each domain keeps).

BFCL's class names and MCP manifests name their domain by themselves; any
other key is an import path, whose class names its domain (`rods_domain`),
is an `Environment` subclass (hosted by replay) or is a plain Python class.
Each domain is imported only when a key of it is first asked for.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from rods.envs.domain import Domain

if TYPE_CHECKING:
    from rods.tasks.model import Task


@cache
def domain_of(key: str) -> Domain:
    """The domain of a class key, or of a task's environment name (see the module docstring).

    BFCL's names and MCP manifests name their domain by themselves; any other key
    is an import path, whose class names its domain (`rods_domain`), is an
    `Environment` subclass (hosted by replay) or is a plain Python class.
    """
    from rods.tasks.record import MCP_MANIFEST_SUFFIXES

    if key.endswith(MCP_MANIFEST_SUFFIXES):  # imported only when asked for: the MCP SDK is slow to import
        from rods.envs.mcp.domain import DOMAIN as MCP

        return MCP
    from rods.envs.bfcl.domain import DOMAIN as BFCL

    if BFCL.owns(key):
        return BFCL
    from rods.envs.python.domain import domain_of_class

    return domain_of_class(key)


def domain_of_task(task: Task) -> Domain:
    """The domain a task's environment belongs to."""
    return domain_of(task.environment)
