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
    for lineno, item in json_lines(path, make_error):
        if isinstance(item, Exception):
            raise item
        yield lineno, item


def json_lines(path: Path, make_error: MakeError) -> Iterator[tuple[int, dict[str, Any] | Exception]]:
    """(line number, object, or the error naming what is wrong with that line) for each non-blank line.

    A reader that can go on past a bad line (`rods tasks validate --keep-going`).
    A file that cannot be read at all (missing, a directory, not UTF-8 from
    some line on) raises `make_error`'s error, or an `OSError` naming the path.
    """
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a directory, not a JSON Lines file")
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    lineno = 0
    with path.open(encoding="utf-8") as fh:
        try:
            for lineno, raw in enumerate(fh, start=1):
                if raw.strip():
                    yield lineno, _decode(raw, path, lineno, make_error)
        except UnicodeDecodeError as err:
            raise make_error(path, lineno + 1, None, f"not UTF-8 text ({err.reason})") from None


def _decode(raw: str, path: Path, lineno: int, make_error: MakeError) -> dict[str, Any] | Exception:
    """One line's object, or the error that names what is wrong with it."""
    text = raw.rstrip("\r\n")  # the column of an error at the end of a line is past its last character
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as err:
        return make_error(path, lineno, None, f"invalid JSON ({err.msg} at column {err.pos + 1})")
    except RecursionError:
        return make_error(path, lineno, None, "invalid JSON (nested too deeply)")
    if not isinstance(obj, dict):
        return make_error(path, lineno, None, f"expected a JSON object, got {type(obj).__name__}")
    return obj


def output_file(path: str | Path) -> Path:
    """`path` as a file to write; a directory there is a one-line error now, before any work is done."""
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a directory, not a file to write")
    return path


def write_lines(path: str | Path, lines: Iterable[str], *, append: bool = False, flush_each: bool = False) -> int:
    """Write one line per item of `lines` (each one JSON text), creating the folder; returns how many.

    `flush_each` pushes every line to the file at once (outputs streamed while a job runs).
    """
    path = output_file(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("a" if append else "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(line + "\n")
            count += 1
            if flush_each:
                fh.flush()
    return count
