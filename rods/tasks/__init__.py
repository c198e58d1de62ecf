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


if TYPE_CHECKING:  # the names as type checkers see them ("X as X": an explicit re-export)
    from rods.tasks.bfcl import (
        CATEGORIES as CATEGORIES,
        bfcl_record as bfcl_record,
        bfcl_task as bfcl_task,
        bfcl_task_ids as bfcl_task_ids,
        load_bfcl_tasks as load_bfcl_tasks,
        load_split as load_split,
    )
    from rods.tasks.model import (
        API_CLASSES as API_CLASSES,
        REVEAL_MESSAGE as REVEAL_MESSAGE,
        Category as Category,
        Message as Message,
        Provenance as Provenance,
        Task as Task,
        content_hash as content_hash,
    )
    from rods.tasks.record import (
        TaskRecord as TaskRecord,
    )
    from rods.tasks.task_files import (
        TaskFileError as TaskFileError,
        append_tasks as append_tasks,
        iter_tasks as iter_tasks,
        read_task_source as read_task_source,
        read_tasks as read_tasks,
        write_tasks as write_tasks,
    )
