"""SQLite persistence of the engine's whole state (stdlib `sqlite3`, WAL journal).

What is written when, and why:

- `add_candidates`: accepted candidates are committed before `submit` returns,
  so a `kill -9` never loses an accepted candidate;
- `commit_epoch`: an epoch boundary's injections and retirements, the ledger,
  the exclusion windows and the RNG go in one transaction before the engine
  applies them in memory, so a pool decision is either fully durable or never
  happened;
- `flush`: the ledger (only rows that changed), exclusions and RNG, every
  `flush_every_steps` steps and on `save()`. Observations are *not* written per
  `observe` call: that is the trainer's hot path, and a crash there loses at
  most the observations since the last flush, which the resumed trainer
  re-collects when it replays those steps from its own checkpoint.

Each of these is one SQLite transaction: a crash mid-write leaves the previous
state. `synchronous=FULL` makes commits durable even across power loss.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'queued', 'retired')),
    origin TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    body TEXT NOT NULL,
    accepted_step INTEGER,
    active_seq INTEGER,
    entry_step INTEGER,
    retired_step INTEGER,
    reason TEXT
);
CREATE INDEX IF NOT EXISTS tasks_status ON tasks (status, seq);
CREATE TABLE IF NOT EXISTS ledger (task_id TEXT PRIMARY KEY, row TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS exclusions (task_id TEXT PRIMARY KEY, until INTEGER NOT NULL);
"""

DB_FILE = "engine.sqlite"


class EngineStore:
    """One engine's state in one SQLite file. Not thread-safe: the engine serialises calls."""

    def __init__(self, path: str | Path, *, synchronous: str = "FULL") -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute(f"PRAGMA synchronous={synchronous}")
        self.conn.executescript(SCHEMA)

    def close(self) -> None:
        self.conn.close()

    # -- transactions -------------------------------------------------------------

    def _tx(self):
        return _Transaction(self.conn)

    def has_state(self) -> bool:
        row = self.conn.execute("SELECT 1 FROM meta WHERE key='config'").fetchone()
        return row is not None

    def write_full(self, state: dict[str, Any]) -> None:
        """Replace everything with `state` (the engine's `_full_state()`), atomically."""
        with self._tx() as cur:
            cur.execute("DELETE FROM tasks")
            cur.execute("DELETE FROM ledger")
            cur.execute("DELETE FROM exclusions")
            cur.execute("DELETE FROM meta")
            cur.executemany(
                "INSERT INTO tasks (id, seq, status, origin, fingerprint, body, accepted_step, active_seq,"
                " entry_step, retired_step, reason) VALUES (:id, :seq, :status, :origin, :fingerprint,"
                " :body, :accepted_step, :active_seq, :entry_step, :retired_step, :reason)",
                state["tasks"],
            )
            self._write_ledger(cur, state["ledger"], ())
            self._write_exclusions(cur, state["exclusions"])
            self._write_meta(cur, state["meta"])

    def add_candidates(self, rows: list[dict[str, Any]], dropped: list[tuple[str, int]], meta: dict[str, Any]) -> None:
        """Accepted candidates (status 'queued') and queue-overflow drops, atomically."""
        with self._tx() as cur:
            cur.executemany(
                "INSERT INTO tasks (id, seq, status, origin, fingerprint, body, accepted_step)"
                " VALUES (:id, :seq, 'queued', :origin, :fingerprint, :body, :accepted_step)",
                rows,
            )
            cur.executemany(
                "UPDATE tasks SET status='retired', retired_step=?, reason='queue_overflow' WHERE id=?",
                [(step, tid) for tid, step in dropped],
            )
            self._write_meta(cur, meta)

    def commit_epoch(
        self,
        step: int,
        retire: dict[str, str],
        inject: list[tuple[str, int]],
        ledger_rows: Iterable[dict[str, Any]],
        exclusions: dict[str, int],
        meta: dict[str, Any],
    ) -> None:
        """An epoch boundary's decisions plus a ledger flush, atomically."""
        with self._tx() as cur:
            cur.executemany(
                "UPDATE tasks SET status='retired', retired_step=?, reason=? WHERE id=?",
                [(step, reason, tid) for tid, reason in retire.items()],
            )
            cur.executemany(
                "UPDATE tasks SET status='active', active_seq=?, entry_step=? WHERE id=?",
                [(active_seq, step, tid) for tid, active_seq in inject],
            )
            self._write_ledger(cur, ledger_rows, retire)
            self._write_exclusions(cur, exclusions)
            self._write_meta(cur, meta)

    def flush(self, ledger_rows: Iterable[dict[str, Any]], exclusions: dict[str, int], meta: dict[str, Any]) -> None:
        with self._tx() as cur:
            self._write_ledger(cur, ledger_rows, ())
            self._write_exclusions(cur, exclusions)
            self._write_meta(cur, meta)

    @staticmethod
    def _write_ledger(cur: sqlite3.Cursor, rows: Iterable[dict[str, Any]], removed: Iterable[str]) -> None:
        cur.executemany(
            "INSERT OR REPLACE INTO ledger (task_id, row) VALUES (?, ?)",
            [(r["task_id"], json.dumps(r)) for r in rows],
        )
        cur.executemany("DELETE FROM ledger WHERE task_id=?", [(tid,) for tid in removed])

    @staticmethod
    def _write_exclusions(cur: sqlite3.Cursor, exclusions: dict[str, int]) -> None:
        cur.execute("DELETE FROM exclusions")
        cur.executemany("INSERT INTO exclusions (task_id, until) VALUES (?, ?)", list(exclusions.items()))

    @staticmethod
    def _write_meta(cur: sqlite3.Cursor, meta: dict[str, Any]) -> None:
        cur.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            [(k, json.dumps(v)) for k, v in meta.items()],
        )

    # -- reading -----------------------------------------------------------------------

    def load(self) -> dict[str, Any]:
        """Everything the engine needs to rebuild itself."""
        cur = self.conn.cursor()
        cols = ("id", "seq", "status", "origin", "fingerprint", "body", "accepted_step", "active_seq",
                "entry_step", "retired_step", "reason")
        tasks = [
            dict(zip(cols, row))
            for row in cur.execute(f"SELECT {', '.join(cols)} FROM tasks ORDER BY seq")
        ]
        ledger = {tid: json.loads(row) for tid, row in cur.execute("SELECT task_id, row FROM ledger")}
        exclusions = dict(cur.execute("SELECT task_id, until FROM exclusions").fetchall())
        meta = {k: json.loads(v) for k, v in cur.execute("SELECT key, value FROM meta")}
        return {"tasks": tasks, "ledger": ledger, "exclusions": exclusions, "meta": meta}

    def task_body(self, task_id: str) -> str | None:
        row = self.conn.execute("SELECT body FROM tasks WHERE id=?", (task_id,)).fetchone()
        return row[0] if row else None


def write_snapshot(path: str | Path, state: dict[str, Any]) -> Path:
    """Write a complete state to a new SQLite file atomically (temp file + rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    for suffix in ("", "-wal", "-shm"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    store = EngineStore(tmp)
    try:
        store.write_full(state)
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store.conn.execute("PRAGMA journal_mode=DELETE")
    finally:
        store.close()
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    os.replace(tmp, path)
    return path


class _Transaction:
    """`BEGIN IMMEDIATE` ... `COMMIT`, rolled back on any exception."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> sqlite3.Cursor:
        self.cur = self.conn.cursor()
        self.cur.execute("BEGIN IMMEDIATE")
        return self.cur

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.cur.execute("COMMIT")
        else:
            self.cur.execute("ROLLBACK")
