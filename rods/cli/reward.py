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
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=None,
        help="keep tasks' ground-truth executions here between runs "
        "(default: $RODS_CACHE_DIR/ground_truth or ~/.cache/rods/ground_truth)",
    )
    p.add_argument("--no-cache", action="store_true", help="compute every ground truth in this run; write no cache")
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
    from rods.reward.disk_cache import default_cache_dir
    from rods.reward.ground_truth import disk_cache

    with disk_cache(None if args.no_cache else (args.cache_dir or default_cache_dir())) as disk:
        return _score_file(args, disk)


def _score_file(args: argparse.Namespace, disk: Any) -> int:
    from rods.reward.progress import score
    from rods.tasks.jsonlines import output_file

    started = time.perf_counter()
    tasks = _load_tasks(args.tasks)
    out: Path = output_file(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
    n = total_rp = total_bin = 0
    # A group's K rollouts often repeat one another exactly: score each distinct
    # trajectory once (scoring is deterministic). A group's lines arrive
    # together, so only the current task's trajectories are remembered.
    memo: dict[tuple, tuple[str, float, int]] = {}
    memo_task = None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for _, task, steps in iter_trajectories(args.trajectories, tasks):
                if task is not memo_task:
                    memo, memo_task = {}, task
                key = tuple(tuple(tuple(step) for step in turn) for turn in steps)
                scored = memo.get(key)
                if scored is None:
                    result = score(task, steps, validate=False)
                    line = json.dumps(result.to_json(task.id)) + "\n"
                    scored = memo[key] = (line, result.progress, result.binary)
                fh.write(scored[0])
                n += 1
                total_rp += scored[1]
                total_bin += scored[2]
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    elapsed = time.perf_counter() - started
    if n:
        print(
            f"scored {n} trajectories in {elapsed:.2f}s: mean progress {total_rp / n:.4f}, "
            f"binary accuracy {total_bin / n:.4f} -> {out}"
            + (f" (ground truths: {disk.hits} from the cache, {disk.misses} computed)" if disk else ""),
            file=sys.stderr,
        )
    else:
        print(f"no trajectories in {args.trajectories}; wrote an empty {out}", file=sys.stderr)
    return 0
