"""The engine's observability log: JSON Lines events and per-step metrics.

`events.jsonl` holds one object per decision (`select`, `submit`, `inject`,
`retire` with its reason, `first_rewards` of an injected task, `epoch_end`,
`synthesis`: each synthesis backbone's acceptance at the end of a run);
`metrics.jsonl` one object per recorded step. Events are buffered in memory
and appended at step and epoch boundaries (never inside `observe`), each line
flushed to the OS, so a `kill -9` loses at most the current step's lines.
The SQLite store, not this log, is the source of truth for resuming.
"""

from __future__ import annotations

import json
import logging
from collections import deque
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

EVENTS_FILE = "events.jsonl"
METRICS_FILE = "metrics.jsonl"


class EventLog:
    """Buffered JSONL writer for events and metrics; in-memory only without a directory."""

    def __init__(self, directory: str | Path | None, *, keep_recent: int = 2000) -> None:
        self.directory = Path(directory) if directory is not None else None
        self._pending_events: list[dict[str, Any]] = []
        self._pending_metrics: list[dict[str, Any]] = []
        #: The latest events and metrics, for inspection and tests.
        self.recent_events: deque[dict[str, Any]] = deque(maxlen=keep_recent)
        self.recent_metrics: deque[dict[str, Any]] = deque(maxlen=keep_recent)

    def emit(self, event: str, **fields: Any) -> None:
        record = {"event": event, **fields}
        self.recent_events.append(record)
        if self.directory is not None:
            self._pending_events.append(record)

    def record_metrics(self, metrics: dict[str, Any]) -> None:
        self.recent_metrics.append(metrics)
        if self.directory is not None:
            self._pending_metrics.append(metrics)

    def flush(self) -> None:
        """Append the buffered lines to the files."""
        if self.directory is None:
            return
        for name, pending in ((EVENTS_FILE, self._pending_events), (METRICS_FILE, self._pending_metrics)):
            if not pending:
                continue
            text = "".join(json.dumps(r, separators=(",", ":"), default=str) + "\n" for r in pending)
            with open(self.directory / name, "a", encoding="utf-8") as fh:
                fh.write(text)
            pending.clear()


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Records of a JSONL log; a torn last line (from a crash) is skipped with a warning."""
    path = Path(path)
    if not path.exists():
        return []
    records = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                logger.warning("%s:%d: skipping a line that is not JSON (torn write?)", path, lineno)
    return records
