"""Saving and restoring the whole engine state (mixed into `DataEngine`).

The store (`rods.engine.store`) does the SQLite work; this module decides what
the state is: config, pool membership and order, queue with acceptance steps,
retirements, the ledger, exclusion windows, the RNG, counters. `state_dict()`
is its canonical, comparable form ("identical after save/load" is tested on it).
"""

from __future__ import annotations

import logging
import random
from pathlib import Path
from typing import Any

from rods.engine.config import EngineConfig
from rods.engine.pool import ReplayPool
from rods.engine.store import DB_FILE, write_snapshot
from rods.tasks import Task, content_hash

logger = logging.getLogger(__name__)

STATE_VERSION = 1


class PersistenceMixin:
    """`save`, `flush`, `state_dict` and the restore path of `DataEngine`."""


    def _meta(self, **override: Any) -> dict[str, Any]:
        meta = {
            "version": STATE_VERSION,
            "config": self.config.to_dict(),
            "rng": _rng_to_json(self.rng.getstate()),
            "seq": self._seq,
            "last_step": self._last_step,
            "epochs": self._epochs,
            "counters": dict(self._counters),
            "seeded_once": sorted(self._seeded_once),
        }
        meta.update(override)
        return meta

    def _flush(self) -> None:
        rows = [self.ledger.get(t).to_row() for t in self._dirty]
        self._store.flush(rows, dict(self.selector.excluded_until), self._meta())
        self._dirty.clear()

    def flush(self) -> None:
        """Persist observations and exclusions now (no-op without a run_dir)."""
        with self._lock:
            if self._store is not None:
                self._flush()
            self.events.flush()

    def _full_state(self) -> dict[str, Any]:
        tasks = []
        for status, source in (("active", self.pool.active), ("queued", self.pool.queue)):
            for tid, task in source.items():
                tasks.append({
                    "id": tid, "seq": len(tasks) + 1,
                    "status": status, "origin": task.origin, "fingerprint": content_hash(task),
                    "body": task.model_dump_json(), "accepted_step": self._accepted_step.get(tid),
                    "active_seq": self._active_seq.get(tid), "entry_step": self._entry_step.get(tid),
                    "retired_step": None, "reason": None,
                })
        return {
            "tasks": tasks,
            "ledger": [s.to_row() for s in self.ledger],
            "exclusions": dict(self.selector.excluded_until),
            "meta": self._meta(),
        }

    def save(self, path: str | Path | None = None) -> Path | None:
        """Persist the whole state atomically.

        Without `path`, flushes everything into this engine's own store. With
        `path` (a directory or a `.sqlite` file), writes a complete snapshot
        there via a temp file and rename (retired tasks included when this
        engine has a store to copy them from).
        """
        with self._lock:
            if path is None:
                if self._store is None:
                    raise ValueError("save() needs a path for an engine without a run_dir")
                self._dirty = {s.task_id for s in self.ledger}
                self._flush()
                self.events.flush()
                return self._store.path
            target = Path(path)
            if target.suffix != ".sqlite":
                target = target / DB_FILE
            if self._store is not None and target.resolve() == self._store.path.resolve():
                return self.save()
            state = self._full_state()
            if self._store is not None:
                self._flush()
                retired = [t for t in self._store.load()["tasks"] if t["status"] == "retired"]
                state["tasks"] += retired
            else:
                state["tasks"] += [self._retired_stub(tid, r) for tid, r in self.pool.retired.items()]
            for i, row in enumerate(state["tasks"], 1):
                row["seq"] = i
            write_snapshot(target, state)
            return target

    def _retired_stub(self, tid: str, reason: str) -> dict[str, Any]:
        # Without a store the retired task's body is no longer in memory; keep its id and reason.
        return {"id": tid, "seq": 0, "status": "retired", "origin": "synthetic", "fingerprint": "",
                "body": "null", "accepted_step": self._accepted_step.get(tid), "active_seq": None,
                "entry_step": self._entry_step.get(tid), "retired_step": self._retired_step.get(tid),
                "reason": reason}

    def _restore(self, state: dict[str, Any], config: EngineConfig | None, expected_seed_ids: list[str] | None) -> None:
        meta = state["meta"]
        if meta.get("version") != STATE_VERSION:
            raise ValueError(f"engine state version {meta.get('version')!r} is not {STATE_VERSION}")
        stored_config = EngineConfig.from_dict(meta["config"])
        if config is not None and config != stored_config:
            logger.warning("resuming with a config that differs from the stored one; using the new one")
        self.config = config or stored_config
        rows = state["tasks"]
        active = sorted((r for r in rows if r["status"] == "active"), key=lambda r: r["active_seq"] or 0)
        seeds = [Task.model_validate_json(r["body"]) for r in active if r["origin"] == "seed"]
        if expected_seed_ids is not None and sorted(expected_seed_ids) != sorted(t.id for t in seeds):
            raise ValueError(f"the seeds given do not match the seeds stored in {self.run_dir}")
        self.rng = random.Random()
        self.rng.setstate(_rng_from_json(meta["rng"]))
        self.pool = ReplayPool([])
        self._init_indexes()
        self._seq = int(meta["seq"])
        self._last_step = int(meta["last_step"])
        self._epochs = int(meta["epochs"])
        self._counters = dict(meta["counters"])
        self._seeded_once = set(meta.get("seeded_once", []))
        self._active_seq, self._accepted_step, self._entry_step, self._retired_step = {}, {}, {}, {}
        ledger_rows = state["ledger"]
        seed_ids = {r["id"] for r in rows if r["origin"] == "seed"}
        self.pool.seed_ids = seed_ids
        for r in rows:
            tid = r["id"]
            self._accepted_step[tid] = r["accepted_step"]
            if r["fingerprint"]:
                self.pool.fingerprints.setdefault(r["fingerprint"], tid)
            if r["status"] == "retired":
                self.pool.retired[tid] = r["reason"]
                self._retired_step[tid] = r["retired_step"]
            elif r["status"] == "queued":
                self.pool.queue[tid] = Task.model_validate_json(r["body"])
                self.pool.queue_step[tid] = r["accepted_step"] if r["accepted_step"] is not None else 0
        for r in active:
            tid = r["id"]
            task = Task.model_validate_json(r["body"])
            self.pool.active[tid] = task
            if tid not in seed_ids:
                self.pool.n_synthetic_active += 1
            self._active_seq[tid] = r["active_seq"]
            self._entry_step[tid] = r["entry_step"] if r["entry_step"] is not None else 0
            row = ledger_rows.get(tid)
            self._activate(task, self._entry_step[tid], row)
        self.selector.restore_exclusions(state["exclusions"])

    def state_dict(self) -> dict[str, Any]:
        """A canonical, JSON-able view of the whole decision state (for equality checks)."""
        with self._lock:
            return {
                "config": self.config.to_dict(),
                "active": list(self.pool.active),
                "queue": list(self.pool.queue),
                "queue_steps": dict(self.pool.queue_step),
                "retired": dict(sorted(self.pool.retired.items())),
                "ledger": sorted((s.to_row() for s in self.ledger), key=lambda r: r["task_id"]),
                "exclusions": dict(sorted(self.selector.excluded_until.items())),
                "rng": _rng_to_json(self.rng.getstate()),
                "epochs": self._epochs,
                "counters": dict(self._counters),
                "seeded_once": sorted(self._seeded_once),
            }


def _rng_to_json(state: tuple) -> list:
    version, internal, gauss = state
    return [version, list(internal), gauss]


def _rng_from_json(data: list) -> tuple:
    version, internal, gauss = data
    return (version, tuple(internal), gauss)
