"""Small, valid tasks for engine tests (the engine only needs ids, types and provenance).

Kept free of pytest so that `kill_worker.py` starts fast.
"""

from __future__ import annotations

from rods.tasks import Provenance, Task

CATEGORY_OF_TYPE = {"basic": "base", "miss_func": "miss_func", "miss_param": "miss_param"}


def make_task(task_id: str, task_type: str = "basic", *, origin: str = "seed", parent: str | None = None,
              step: int | None = None) -> Task:
    category = CATEGORY_OF_TYPE[task_type]
    return Task(
        id=task_id,
        category=category,
        question=[[{"role": "user", "content": f"please add for {task_id}"}]],
        initial_config={},
        involved_classes=["MathAPI"],
        ground_truth=[["add(a=1, b=2)"]],
        provenance=Provenance(origin=origin, parent_id=parent, generation=0 if origin == "seed" else 1,
                              step_created=step),
    )


def make_seeds(n: int = 30) -> list[Task]:
    types = ["basic", "basic", "miss_func", "miss_param"]
    return [make_task(f"seed-{i:04d}", types[i % 4]) for i in range(n)]


def variant(seed: Task, n: int, step: int = 0) -> Task:
    return make_task(f"{seed.id}-v{n}", seed.task_type, origin="synthetic", parent=seed.id, step=step)

