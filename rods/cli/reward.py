"""`rods reward`: score trajectories (JSONL) against tasks, one output line per input line.

Input lines: `{"task_id": str, "steps": [[[call strings of step 1], [step 2], ...] per turn]}`.
Output lines, same order: `{"task_id", "state_pass", "exec_pass", "progress", "binary"}`.
Imports stay light: this command never imports torch.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class TrajectoryError(ValueError):
    """A trajectory line that cannot be scored; names the file, line and field at fault."""

    def __init__(self, path: str | Path, line: int, field: str | None, reason: str):
        self.path, self.line, self.field, self.reason = str(path), line, field, reason
        what = f"field '{field}': " if field else ""
        super().__init__(f"{path}, line {line}: {what}{reason}")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "reward",
        help="score trajectories with the progress and binary rewards",
        description=__doc__.splitlines()[0],
    )
    p.add_argument("--tasks", type=Path, default=None, help="task file (JSONL); default: BFCL's 800 multi-turn tasks")
    p.add_argument("--trajectories", type=Path, required=True, help="trajectory JSONL file")
    p.add_argument("--out", type=Path, required=True, help="output JSONL file (written atomically)")
    p.set_defaults(func=run)


class _BfclTasks:
    """BFCL's tasks by id, built as `TaskRecord`s when a trajectory first asks (no pydantic)."""

    def get(self, task_id: str) -> Any:
        from rods.tasks.bfcl import bfcl_record

        try:
            return bfcl_record(task_id)
        except KeyError:
            return None


def _load_tasks(path: Path | None) -> Any:
    if path is None:
        return _BfclTasks()
    from rods.tasks import read_tasks

    return {t.id: t for t in read_tasks(path)}


def iter_trajectories(path: Path, tasks: Any) -> Iterator[tuple[int, Any, list]]:
    """Validated (line number, task, steps) of a trajectory file; raises TrajectoryError.

    `tasks` is anything with `get(task_id) -> Task | None`.
    """
    from rods.reward.progress import check_steps
    from rods.tasks.jsonlines import iter_json_objects

    if not path.exists():
        raise FileNotFoundError(f"{path}: no such trajectory file")
    for lineno, obj in iter_json_objects(path, TrajectoryError):
        task_id = obj.get("task_id")
        if not isinstance(task_id, str):
            raise TrajectoryError(path, lineno, "task_id", "missing or not a string")
        task = tasks.get(task_id)
        if task is None:
            raise TrajectoryError(path, lineno, "task_id", f"unknown task {task_id!r}")
        if "steps" not in obj:
            raise TrajectoryError(path, lineno, "steps", "missing")
        steps = obj["steps"]
        try:
            check_steps(steps, task.num_turns)
        except ValueError as err:
            field, _, reason = str(err).partition(": ")
            raise TrajectoryError(path, lineno, field, reason) from None
        yield lineno, task, steps


def run(args: argparse.Namespace) -> int:
    from rods.reward.progress import score

    started = time.perf_counter()
    tasks = _load_tasks(args.tasks)
    out: Path = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    n = total_rp = total_bin = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for _, task, steps in iter_trajectories(args.trajectories, tasks):
                result = score(task, steps, validate=False)
                fh.write(json.dumps(result.to_json(task.id)) + "\n")
                n += 1
                total_rp += result.progress
                total_bin += result.binary
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    elapsed = time.perf_counter() - started
    if n:
        print(
            f"scored {n} trajectories in {elapsed:.2f}s: mean progress {total_rp / n:.4f}, "
            f"binary accuracy {total_bin / n:.4f} -> {out}",
            file=sys.stderr,
        )
    else:
        print(f"no trajectories in {args.trajectories}; wrote an empty {out}", file=sys.stderr)
    return 0
