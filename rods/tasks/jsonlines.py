"""Reading and writing JSON Lines files; reading errors name the file and line.

Shared by the task-file reader (`rods.tasks.task_files`) and `rods reward`'s
trajectory reader; it imports
nothing heavy (no pydantic), so `rods reward` keeps its fast start-up.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

#: Builds the caller's error: (path, line, field, reason) -> exception.
MakeError = Callable[[Path, int, "str | None", str], Exception]


def iter_json_objects(path: Path, make_error: MakeError) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line; bad JSON or a non-object raises."""
    with path.open(encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as err:
                raise make_error(path, lineno, None, f"invalid JSON ({err.msg} at column {err.colno})") from None
            if not isinstance(obj, dict):
                raise make_error(path, lineno, None, f"expected a JSON object, got {type(obj).__name__}")
            yield lineno, obj


def write_lines(path: str | Path, lines: Iterable[str], *, append: bool = False, flush_each: bool = False) -> int:
    """Write one line per item of `lines` (each one JSON text), creating the folder; returns how many.

    `flush_each` pushes every line to the file at once (outputs streamed while a job runs).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("a" if append else "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line + "\n")
            count += 1
            if flush_each:
                fh.flush()
    return count
