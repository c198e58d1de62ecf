"""Tasks: the typed task model, task files, and the BFCL V3 multi-turn data."""

from rods.tasks.bfcl import CATEGORIES, bfcl_task, bfcl_task_ids, load_bfcl_tasks, load_split
from rods.tasks.jsonl import TaskFileError, append_tasks, iter_tasks, read_tasks, write_tasks
from rods.tasks.model import API_CLASSES, REVEAL_MESSAGE, Category, Message, Provenance, Task

__all__ = [
    "API_CLASSES",
    "CATEGORIES",
    "REVEAL_MESSAGE",
    "Category",
    "Message",
    "Provenance",
    "Task",
    "TaskFileError",
    "append_tasks",
    "bfcl_task",
    "bfcl_task_ids",
    "iter_tasks",
    "load_bfcl_tasks",
    "load_split",
    "read_tasks",
    "write_tasks",
]
