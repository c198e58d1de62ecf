"""`TaskRecord`: the fields of a task that executing and scoring need, without pydantic.

`rods reward` builds these straight from BFCL's (trusted, installed) data so a
scoring process starts without importing pydantic; everything else uses the
validated `rods.tasks.Task`. Both answer the same questions the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: An MCP environment is named by the path of its manifest (`rods.envs.mcp`).
MCP_MANIFEST_SUFFIXES = (".yaml", ".yml")


def is_long_context(category: str, task_id: str) -> bool:
    """Whether a task's classes load with BFCL's long-context flag."""
    return category == "long_context" or "long_context" in task_id


@dataclass(frozen=True, eq=False)
class TaskRecord:
    """A task as the environments and the reward read it (a duck-typed subset of `Task`)."""

    id: str
    category: str
    initial_config: dict[str, dict[str, Any]]
    involved_classes: list[str]
    ground_truth: list[list[str]]

    @property
    def num_turns(self) -> int:
        return len(self.ground_truth)

    @property
    def long_context(self) -> bool:
        return is_long_context(self.category, self.id)
