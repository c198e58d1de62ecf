"""Tasks: the typed task model, task files, and the BFCL V3 multi-turn data.

Names are imported on first use (PEP 562), so e.g. `from rods.tasks import
CATEGORIES` or scoring with `TaskRecord`s never imports pydantic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "CATEGORIES": "rods.tasks.bfcl",
    "bfcl_record": "rods.tasks.bfcl",
    "bfcl_task": "rods.tasks.bfcl",
    "bfcl_task_ids": "rods.tasks.bfcl",
    "load_bfcl_tasks": "rods.tasks.bfcl",
    "load_split": "rods.tasks.bfcl",
    "TaskFileError": "rods.tasks.task_files",
    "append_tasks": "rods.tasks.task_files",
    "iter_tasks": "rods.tasks.task_files",
    "read_task_source": "rods.tasks.task_files",
    "read_tasks": "rods.tasks.task_files",
    "write_tasks": "rods.tasks.task_files",
    "API_CLASSES": "rods.tasks.model",
    "REVEAL_MESSAGE": "rods.tasks.model",
    "Category": "rods.tasks.model",
    "Message": "rods.tasks.model",
    "Provenance": "rods.tasks.model",
    "Task": "rods.tasks.model",
    "content_hash": "rods.tasks.model",
    "TaskRecord": "rods.tasks.record",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rods.tasks' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from rods.tasks.bfcl import CATEGORIES, bfcl_record, bfcl_task, bfcl_task_ids, load_bfcl_tasks, load_split
    from rods.tasks.task_files import (
        TaskFileError,
        append_tasks,
        iter_tasks,
        read_task_source,
        read_tasks,
        write_tasks,
    )
    from rods.tasks.model import API_CLASSES, REVEAL_MESSAGE, Category, Message, Provenance, Task, content_hash
    from rods.tasks.record import TaskRecord
