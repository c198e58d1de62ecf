"""The human seed tasks of a training run and how they are shaped (`data:` of a run's config).

`load_seeds` reads the BFCL split (or a task file), filters it by category,
API classes and count, and optionally cuts every task to its first turn
(`turn_slices`, `rods.envs.slices`). It lives here, above the environments,
because slicing needs to know which API class executes each gold call.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rods.config import Section
from rods.envs.slices import turn_slices
from rods.tasks import Task, read_task_source
from rods.tasks.model import Category


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
    """The human seed tasks of a run, shaped by `task_mix`."""
    try:
        tasks = read_task_source(settings.seeds)
    except ValueError as err:  # TaskFileError names the file, line and field
        raise ValueError(f"data.seeds: {err}") from None
    if settings.categories:
        tasks = [t for t in tasks if t.category in settings.categories]
    if settings.per_category:
        kept: dict[str, int] = {}
        out = []
        for task in tasks:
            if kept.get(task.category, 0) < settings.per_category:
                kept[task.category] = kept.get(task.category, 0) + 1
                out.append(task)
        tasks = out
    if settings.task_mix == "turn_slices":
        tasks = turn_slices(tasks, max_calls=settings.max_slice_calls)
    if settings.classes:
        allowed = set(settings.classes)
        tasks = [t for t in tasks if set(t.involved_classes) <= allowed]
    if settings.max_slices:
        tasks = tasks[: settings.max_slices]
    if not tasks:
        raise ValueError("data: no seed tasks left after filtering")
    return tasks


