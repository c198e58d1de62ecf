"""The 800 BFCL V3 multi-turn tasks, read from the installed `bfcl-eval` package.

No copy of BFCL's data lives in this repository. The paper's split (400 train /
400 test, 100 + 100 per category) is fixed by a seeded stratified draw whose id
lists are committed under `rods/data/` so it can never change silently.
"""

from __future__ import annotations

import json
import random
from functools import cache
from importlib.resources import files
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rods.tasks.record import TaskRecord

if TYPE_CHECKING:  # pydantic is imported only where tasks are validated
    from rods.tasks.model import Category, Task

#: The eight BFCL multi-turn API classes, each with the stem of its BFCL module and
#: of its function-doc file (the one list of them: `rods.envs` builds on it).
API_CLASS_FILES = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
API_CLASSES = tuple(API_CLASS_FILES)

CATEGORIES: tuple[Category, ...] = ("base", "miss_func", "miss_param", "long_context")
SPLIT_SEED = 20260319
TRAIN_PER_CATEGORY = 100

Split = Literal["train", "test", "all"]


#: The bfcl-eval release rods is tested with. Not in pyproject's `dependencies`:
#: it pins numpy and pulls vllm & co., so it is installed with ``--no-deps``
#: (its API classes need only mpmath, which is declared).
BFCL_EVAL = "bfcl-eval==2026.3.23"


def bfcl_package_dir() -> Path:
    """The folder of the installed bfcl-eval package; a clear error naming the install command if absent."""
    spec = find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            f"bfcl-eval is not installed; run `make venv` (or: pip install --no-deps {BFCL_EVAL} mpmath)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def bfcl_data_dir() -> Path:
    """The `data/` folder of the installed bfcl-eval package."""
    return bfcl_package_dir() / "data"


def _read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


_ID_PREFIX = '{"id": "'


def _lines_by_id(path: Path) -> dict[str, str]:
    """A JSON Lines file's lines by their `id`, parsed only as far as the id (BFCL writes it first)."""
    out = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            if line.startswith(_ID_PREFIX):
                end = line.index('"', len(_ID_PREFIX))
                task_id = line[len(_ID_PREFIX) : end]
                if "\\" not in task_id:
                    out[task_id] = line
                    continue
            out[json.loads(line)["id"]] = line
    return out


@cache
def _category_lines(category: Category) -> dict[str, tuple[str, str]]:
    """Per task id of the category: its (question line, answer line), not yet parsed.

    `rods reward` scores a few hundred tasks; parsing only their lines halves its start-up.
    """
    data = bfcl_data_dir()
    name = f"BFCL_v4_multi_turn_{category}.json"
    questions = _lines_by_id(data / name)
    answers = _lines_by_id(data / "possible_answer" / name)
    return {task_id: (line, answers[task_id]) for task_id, line in questions.items()}


def _parse_row(category: Category, lines: tuple[str, str]) -> dict:
    question, answer = lines
    return dict(json.loads(question), category=category, ground_truth=json.loads(answer)["ground_truth"])


@cache
def _raw_category(category: Category) -> tuple[dict, ...]:
    """The category's entries as raw dicts (question side + ground truth), not yet validated."""
    return tuple(_parse_row(category, lines) for lines in _category_lines(category).values())


@cache
def _raw_index() -> dict[str, dict]:
    return {row["id"]: row for c in CATEGORIES for row in _raw_category(c)}


@cache
def _raw_row(task_id: str) -> dict:
    """One entry as a raw dict, parsing only its own lines. Raises KeyError for an unknown id."""
    # Ids read `multi_turn_<category>_<n>`: look in that category's file first.
    likely = [c for c in CATEGORIES if task_id.startswith(f"multi_turn_{c}_")]
    for category in likely + [c for c in CATEGORIES if c not in likely]:
        lines = _category_lines(category).get(task_id)
        if lines is not None:
            return _parse_row(category, lines)
    raise KeyError(task_id)


@cache
def _load_category(category: Category) -> tuple[Task, ...]:
    return tuple(bfcl_task(row["id"]) for row in _raw_category(category))


@cache
def bfcl_task(task_id: str) -> Task:
    """One BFCL task by id, validated on first use (shared object: do not edit it).

    Cheaper than loading all 800 when only a few are needed.
    Raises KeyError for an unknown id.
    """
    from rods.tasks.model import Task

    return Task.model_validate(_raw_index()[task_id])


@cache
def bfcl_record(task_id: str) -> TaskRecord:
    """One BFCL task as a `TaskRecord` (no pydantic: fast start-up for `rods reward`).

    Raises KeyError for an unknown id.
    """
    row = _raw_row(task_id)
    return TaskRecord(
        id=row["id"],
        category=row["category"],
        initial_config=row.get("initial_config", {}),
        involved_classes=list(row["involved_classes"]),
        ground_truth=row["ground_truth"],
    )


def bfcl_task_ids() -> list[str]:
    """The ids of all BFCL multi-turn tasks, in BFCL's order."""
    return list(_raw_index())


def load_bfcl_tasks(categories: tuple[Category, ...] = CATEGORIES, *, copy: bool = True) -> list[Task]:
    """All BFCL multi-turn tasks of the given categories, in BFCL's order.

    Deep copies by default, so callers may edit them; `copy=False` returns the
    process-wide cached objects (faster; for read-only use such as scoring).
    """
    tasks = [t for c in categories for t in _load_category(c)]
    return [t.model_copy(deep=True) for t in tasks] if copy else tasks


def compute_split(seed: int = SPLIT_SEED, per_category: int = TRAIN_PER_CATEGORY) -> dict[str, list[str]]:
    """The seeded stratified split: `per_category` train ids per category, the rest test."""
    rng = random.Random(seed)
    split: dict[str, list[str]] = {"train": [], "test": []}
    for category in CATEGORIES:
        ids = [t.id for t in _load_category(category)]
        train = set(rng.sample(ids, per_category))
        split["train"] += [i for i in ids if i in train]
        split["test"] += [i for i in ids if i not in train]
    return split


def committed_split() -> dict[str, list[str]]:
    """The split id lists shipped in `rods/data/` (the source of truth)."""
    data = files("rods") / "data"
    return {
        name: [line.strip() for line in (data / f"split_{name}.txt").read_text().splitlines() if line.strip()]
        for name in ("train", "test")
    }


def load_split(split: Split = "train") -> list[Task]:
    """BFCL tasks of one split (`train`, `test` or `all`), in BFCL's order."""
    tasks = load_bfcl_tasks()
    if split == "all":
        return tasks
    if split not in ("train", "test"):
        raise ValueError(f"unknown split {split!r}; expected train, test or all")
    wanted = set(committed_split()[split])
    return [t for t in tasks if t.id in wanted]
