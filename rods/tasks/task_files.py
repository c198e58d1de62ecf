"""Task files: JSON Lines (one task per line), JSON arrays, and parquet via `datasets`.

Reading validates every line; a malformed file fails with the file, the line
and the field named, so a broken synthesis output never half-loads.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import ValidationError

from rods.tasks.jsonlines import json_lines, output_file, write_lines
from rods.tasks.model import BFCL_ENVIRONMENT, Task


class TaskFileError(ValueError):
    """A task file that cannot be read; names the file, line and field at fault."""

    def __init__(self, path: str | Path, line: int | None, field: str | None, reason: str):
        self.path, self.line, self.field, self.reason = str(path), line, field, reason
        where = f"{path}" + (f", line {line}" if line is not None else "")
        what = f"field '{field}': " if field else ""
        super().__init__(f"{where}: {what}{reason}")


def _field_of(err: ValidationError) -> tuple[str | None, str]:
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first.get("loc", ()))
    return (loc or None), first.get("msg", str(err))


def parse_task(obj: object, path: str | Path = "<memory>", line: int | None = None) -> Task:
    """Validate one decoded JSON object as a Task, raising TaskFileError on failure."""
    if not isinstance(obj, dict):
        raise TaskFileError(path, line, None, f"expected a JSON object, got {type(obj).__name__}")
    try:
        return Task.model_validate(obj)
    except ValidationError as err:
        field, msg = _field_of(err)
        raise TaskFileError(path, line, field, msg) from None


def iter_tasks(path: str | Path) -> Iterator[Task]:
    """Yield the tasks of a JSONL file (or a parquet file, read with `datasets`); the first bad line raises."""
    for _, item in task_lines(path):
        if isinstance(item, TaskFileError):
            raise item
        yield item


def task_lines(path: str | Path) -> Iterator[tuple[int, Task | TaskFileError]]:
    """(line number, task or the error naming what is wrong with that line) for each line of a task file.

    A reader that can go on past a bad line; a file that cannot be read at all
    (missing, a directory) raises `TaskFileError`. Parquet rows count as lines.
    """
    path = Path(path)
    if path.is_dir():
        raise TaskFileError(path, None, None, "is a directory, not a task file")
    if not path.exists():
        raise TaskFileError(path, None, None, "no such file")
    if path.suffix == ".parquet":
        yield from _iter_parquet(path)
        return
    for lineno, obj in json_lines(path, TaskFileError):
        if isinstance(obj, TaskFileError):
            yield lineno, obj
            continue
        try:
            yield lineno, parse_task(obj, path, lineno)
        except TaskFileError as err:
            yield lineno, err


def _iter_parquet(path: Path) -> Iterator[tuple[int, Task | TaskFileError]]:
    import datasets  # local import: only parquet needs it

    table = datasets.Dataset.from_parquet(str(path))
    for row_index, row in enumerate(table, start=1):
        row = {k: (json.loads(v) if k in _JSON_COLUMNS and isinstance(v, str) else v) for k, v in row.items()}
        try:
            yield row_index, parse_task(row, path, row_index)
        except TaskFileError as err:
            yield row_index, err


#: Columns stored as JSON strings in parquet (their shapes vary per class).
_JSON_COLUMNS = ("initial_config", "provenance", "missed_function", "expected_errors")


def read_tasks(path: str | Path) -> list[Task]:
    """All tasks of a file; duplicate ids are an error."""
    return [task for _, task in read_numbered_tasks(path)]


def read_numbered_tasks(path: str | Path) -> list[tuple[int, Task]]:
    """All tasks of a file with their line numbers; the first bad line or a duplicate id raises."""
    tasks: list[tuple[int, Task]] = []
    seen: dict[str, int] = {}
    for lineno, task in task_lines(path):
        if isinstance(task, TaskFileError):
            raise task
        if task.id in seen:
            raise TaskFileError(path, lineno, "id", f"duplicate task id {task.id!r} (first at line {seen[task.id]})")
        seen[task.id] = lineno
        tasks.append((lineno, task))
    return tasks


def dump_task(task: Task) -> str:
    """One JSONL line for a task (a BFCL task's line has no `environment`, as BFCL's entries; no task's line
    has an empty `expected_errors`, so files written before the field existed read back unchanged)."""
    body = task.model_dump(mode="json")
    if body["environment"] == BFCL_ENVIRONMENT:
        del body["environment"]
    if not body["expected_errors"]:
        del body["expected_errors"]
    return json.dumps(body, ensure_ascii=False)


def write_tasks(path: str | Path, tasks: Iterable[Task]) -> int:
    """Write tasks atomically (temp file + rename): a crash never leaves half a file."""
    path = output_file(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for task in tasks:
                fh.write(dump_task(task) + "\n")
                count += 1
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count


def append_tasks(path: str | Path, tasks: Iterable[Task]) -> int:
    """Append tasks to a JSONL file, flushing each line (used for streaming outputs)."""
    return write_lines(path, (dump_task(task) for task in tasks), append=True, flush_each=True)


#: The BFCL splits a task source may name instead of a file.
SPLITS = ("train", "test", "all")


def read_task_source(source: str | Path) -> list[Task]:
    """Tasks named by a source: a BFCL split (``train``, ``test``, ``all``, also as ``bfcl:train``) or a task file."""
    return [task for _, task in read_located_tasks(source)]


def read_located_tasks(source: str | Path) -> list[tuple[str, Task]]:
    """`read_task_source` with where each task is: ``file:line``, or ``bfcl:<split>`` (for one-line messages)."""
    text = str(source)
    split = text.removeprefix("bfcl:")
    if split in SPLITS:
        from rods.tasks.bfcl import load_split

        return [(f"bfcl:{split}", task) for task in load_split(split)]  # type: ignore[arg-type]
    if text.startswith("bfcl:"):
        raise ValueError(f"unknown BFCL split {split!r} in {text!r}; use bfcl:train, bfcl:test or bfcl:all")
    return [(f"{source}:{line}", task) for line, task in read_numbered_tasks(source)]
