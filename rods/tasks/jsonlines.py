"""Reading JSON Lines files with errors that name the file and line.

Shared by the task-file reader (`rods.tasks.task_files`) and `rods reward`'s
trajectory reader; it imports
nothing heavy (no pydantic), so `rods reward` keeps its fast start-up.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
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
