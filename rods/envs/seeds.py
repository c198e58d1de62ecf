"""The human seed tasks of a training run and how they are shaped (`data:` of a run's config).

`load_seeds` reads the BFCL split (or a task file), filters it by category,
API classes and count, validates every seed it keeps (`rods.envs.validation`:
a seed whose gold calls fail is left out, each failure logged as one line
naming its file and line), and optionally cuts every task to its first turn
(`turn_slices`, `rods.envs.slices`). It lives here, above the environments,
because slicing needs to know which API class executes each gold call.
"""

from __future__ import annotations

import logging
from typing import Literal

from pydantic import Field

from rods.config import Section
from rods.envs.slices import turn_slices
from rods.envs.validation import describe, validate_task
from rods.tasks import Task
from rods.tasks.model import Category
from rods.tasks.task_files import read_located_tasks

log = logging.getLogger(__name__)


class DataSettings(Section):
    """The human seed tasks (never retired) and how they are shaped for training."""

    seeds: str = Field(
        "train",
        description="'train' (the paper's 400-task BFCL split), 'test', 'all', or a path to a tasks JSONL file.",
    )
    categories: list[Category] | None = Field(None, description="Keep only these categories (default: all four).")
    classes: list[str] | None = Field(
        None, description="Keep only tasks whose API classes are all among these (class names or import paths)."
    )
    per_category: int | None = Field(
        None, ge=1, description="Keep the first N tasks of each category (default: all; the paper uses 100 each)."
    )
    task_mix: Literal["full", "turn_slices"] = Field(
        "full",
        description="'full': tasks as they are. 'turn_slices': each turn with non-empty ground truth becomes a "
        "one-turn task starting from the ground-truth state before that turn (for small models that score zero "
        "on full multi-turn tasks); see `rods.envs.slices`.",
    )
    max_slice_calls: int | None = Field(
        None, ge=1, description="turn_slices only: keep slices whose ground truth has at most this many calls."
    )
    max_slices: int | None = Field(None, ge=1, description="Keep at most this many seed tasks (after all filters).")


def load_seeds(settings: DataSettings) -> list[Task]:
    """The human seed tasks of a run that pass validation, shaped by `task_mix`."""
    try:
        located = read_located_tasks(settings.seeds)
    except ValueError as err:  # TaskFileError names the file, line and field
        raise ValueError(f"data.seeds: {err}") from None
    if settings.categories:
        located = [(where, t) for where, t in located if t.category in settings.categories]
    if settings.per_category:
        kept: dict[str, int] = {}
        out = []
        for where, task in located:
            if kept.get(task.category, 0) < settings.per_category:
                kept[task.category] = kept.get(task.category, 0) + 1
                out.append((where, task))
        located = out
    tasks = valid_seeds(located)
    invalid = len(located) - len(tasks)
    if settings.task_mix == "turn_slices":
        tasks = turn_slices(tasks, max_calls=settings.max_slice_calls)
    if settings.classes:
        allowed = set(settings.classes)
        tasks = [t for t in tasks if set(t.involved_classes) <= allowed]
    if settings.max_slices:
        tasks = tasks[: settings.max_slices]
    if not tasks:
        why = f" ({invalid} failed validation: see the lines logged above)" if invalid else ""
        raise ValueError(f"data: no seed tasks left after filtering{why}")
    return tasks


def valid_seeds(located: list[tuple[str, Task]]) -> list[Task]:
    """The tasks that pass validation, in order; each failure of the others is logged as one line (`where` is
    the task's file and line) and they are left out."""
    out = []
    for where, task in located:
        failures = validate_task(task)
        for failure in failures:
            log.warning("data.seeds: seed left out: %s", describe(failure, task.id, where))
        if not failures:
            out.append(task)
    if len(out) < len(located):
        log.warning("data.seeds: %d of %d seeds fail validation and are left out", len(located) - len(out),
                    len(located))
    return out
