"""Turn slices: a task mix a very small policy can learn from (`data.task_mix: turn_slices`).

A tiny model (the embedded SmolLM2-135M) scores zero on full BFCL multi-turn
tasks, so GRPO would see only all-zero groups. A *turn slice* is the first turn
of a seed task as a one-turn task of its own:

* its starting state is exactly the ground-truth state before that turn (the
  task's `initial_config`, since it is the first turn);
* its ground truth is that turn's gold calls, its question that turn's messages;
* its API classes are narrowed to those the gold calls use, so the model sees
  fewer tools (and a shorter prompt);
* a slice of a long-context task keeps the long-context flag (its id keeps the
  marker and its category stays `long_context`); slices of the other
  categories become `base` (a first turn has no reveal, and a miss_param first
  turn with empty ground truth gives no slice).

Slices are ordinary `Task`s: the reward, the engine and synthesis treat them as
any other one-turn task. `provenance.slice_of` names the source task.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from rods.envs.calls import CallParseError, parse_calls
from rods.envs.classes import method_owners
from rods.tasks import Task

log = logging.getLogger(__name__)


def first_turn_slice(task: Task) -> Task | None:
    """The first turn of `task` as a one-turn task, or None when that turn has no gold call."""
    gold = task.ground_truth[0]
    if not gold or not task.question[0]:
        return None
    owners = method_owners(task.involved_classes)
    classes: list[str] = []
    for text in gold:
        try:
            calls = parse_calls(text)
        except CallParseError:
            log.warning("task %s: unreadable gold call %r; no slice", task.id, text)
            return None
        for call in calls:
            cls = owners.get(call.name)
            if cls is None:
                return None
            if cls not in classes:
                classes.append(cls)
    classes = [c for c in task.involved_classes if c in classes]  # keep the task's order
    provenance = task.provenance.model_copy(deep=True)
    provenance.slice_of = task.id  # type: ignore[attr-defined]  (Provenance allows extra fields)
    provenance.slice_turn = 0  # type: ignore[attr-defined]
    return Task(
        id=f"{task.id}@turn0",
        category="long_context" if task.long_context else "base",
        question=[list(task.question[0])],
        initial_config={c: v for c, v in task.initial_config.items() if c in classes},
        involved_classes=classes,
        ground_truth=[list(gold)],
        provenance=provenance,
    )


def turn_slices(tasks: Iterable[Task], *, max_calls: int | None = None, limit: int | None = None) -> list[Task]:
    """Slices of `tasks` (see module doc), keeping those with at most `max_calls` gold calls."""
    out = []
    for task in tasks:
        piece = first_turn_slice(task)
        if piece is None:
            continue
        if max_calls is not None and len(piece.ground_truth[0]) > max_calls:
            continue
        out.append(piece)
        if limit is not None and len(out) >= limit:
            break
    return out
