"""Saving and restoring an `EngineState` (the whole decision state of the data engine).

The store (`rods.engine.store`) does the SQLite work; this module decides what
the saved state is: config, pool membership and order, queue with acceptance
steps, retirements, the ledger, exclusion windows, the RNG, counters. It reads
and writes nothing but an `EngineState`:

* `meta(state)`: the scalar part (config, RNG, counters, ...), written with every commit;
* `flush(state, store)`: the ledger rows observed since the last flush;
* `commit_epoch(state, store, ...)`: an epoch boundary's decisions, before they apply;
* `snapshot(state)` / `save(state, store, target)`: the whole state, in the store or in a file;
* `restore(stored, ...)`: a store's content back into an `EngineState`;
* `state_dict(state)`: the canonical, comparable form ("identical after save/load" is tested on it).
"""

from __future__ import annotations

import logging
import random
from pathlib import Path
from typing import Any

from rods.engine.config import EngineConfig
from rods.engine.pool import EpochPlan, ReplayPool
from rods.engine.state import EngineState
from rods.engine.store import DB_FILE, EngineStore, write_snapshot
from rods.tasks import Task, content_hash

logger = logging.getLogger(__name__)

STATE_VERSION = 1


def meta(state: EngineState, **override: Any) -> dict[str, Any]:
    """The scalar part of the state (what `EngineStore` keeps in its meta table)."""
    data = {
        "version": STATE_VERSION,
        "config": state.config.to_dict(),
        "rng": _rng_to_json(state.rng.getstate()),
        "seq": state.seq,
        "last_step": state.last_step,
        "epochs": state.epochs,
        "counters": dict(state.counters),
        "seeded_once": sorted(state.seeded_once),
    }
    data.update(override)
    return data


def flush(state: EngineState, store: EngineStore) -> None:
    """Persist the ledger rows of the tasks observed since the last flush, exclusions and meta."""
    rows = [state.ledger.get(t).to_row() for t in state.dirty]
    store.flush(rows, dict(state.selector.excluded_until), meta(state))
    state.dirty.clear()


def commit_epoch(
    state: EngineState, store: EngineStore, plan: EpochPlan, inject_seq: list[tuple[str, int]], counters: dict[str, int]
) -> None:
    """Commit an epoch boundary's decisions (retire, expire, inject) in one transaction, before they apply.

    `inject_seq` pairs each injected task with its pool sequence number; `counters`
    are the totals after the boundary.
    """
    step = plan.step
    rows = [state.ledger.get(t).to_row() for t in state.dirty if t not in plan.retire]
    rows += [
        {"task_id": tid, "task_type": state.pool.queue[tid].task_type, "origin": "synthetic",
         "entry_step": step, "rewards": [], "n_groups": 0, "n_rewards": 0, "last_step": None,
         "first_rewards": []}
        for tid in plan.inject
    ]
    exclusions = {t: u for t, u in state.selector.excluded_until.items() if t not in plan.retire}
    seq = inject_seq[-1][1] if inject_seq else state.seq
    store.commit_epoch(
        step, {**plan.retire, **{t: "expired" for t in plan.expire}}, inject_seq, rows, exclusions,
        meta(state, epochs=state.epochs + 1, seq=seq, last_step=max(state.last_step, step), counters=counters),
    )


def snapshot(state: EngineState) -> dict[str, Any]:
    """The whole live state (active and queued tasks, ledger, exclusions, meta) as the store writes it."""
    tasks: list[dict[str, Any]] = []
    for status, source in (("active", state.pool.active), ("queued", state.pool.queue)):
        for tid, task in source.items():
            tasks.append({
                "id": tid, "seq": len(tasks) + 1,
                "status": status, "origin": task.origin, "fingerprint": content_hash(task),
                "body": task.model_dump_json(), "accepted_step": state.accepted_step.get(tid),
                "active_seq": state.active_seq.get(tid), "entry_step": state.entry_step.get(tid),
                "retired_step": None, "reason": None,
            })
    return {
        "tasks": tasks,
        "ledger": [s.to_row() for s in state.ledger],
        "exclusions": dict(state.selector.excluded_until),
        "meta": meta(state),
    }


def save(state: EngineState, store: EngineStore | None, target: Path) -> Path:
    """Write a complete snapshot to the `.sqlite` file `target` via a temp file and rename.

    Retired tasks come along from `store` when there is one; without a store
    only their ids and reasons are still known.
    """
    data = snapshot(state)
    if store is not None:
        flush(state, store)
        data["tasks"] += [t for t in store.load()["tasks"] if t["status"] == "retired"]
    else:
        data["tasks"] += [_retired_stub(state, tid, reason) for tid, reason in state.pool.retired.items()]
    for i, row in enumerate(data["tasks"], 1):
        row["seq"] = i
    write_snapshot(target, data)
    return target


def snapshot_path(path: str | Path) -> Path:
    """A snapshot's file: `path` itself if it ends in ``.sqlite``, else the engine file inside that folder."""
    target = Path(path)
    return target if target.suffix == ".sqlite" else target / DB_FILE


def _retired_stub(state: EngineState, tid: str, reason: str) -> dict[str, Any]:
    # Without a store the retired task's body is no longer in memory; keep its id and reason.
    return {"id": tid, "seq": 0, "status": "retired", "origin": "synthetic", "fingerprint": "",
            "body": "null", "accepted_step": state.accepted_step.get(tid), "active_seq": None,
            "entry_step": state.entry_step.get(tid), "retired_step": state.retired_step.get(tid),
            "reason": reason}


def restore(
    stored: dict[str, Any], config: EngineConfig | None, expected_seed_ids: list[str] | None, where: Any
) -> EngineState:
    """The `EngineState` a store holds (`config`, if given, replaces the stored one).

    Raises:
        ValueError: another state version, or seeds that differ from `expected_seed_ids`
            (`where` names the run directory in the message).
    """
    data = stored["meta"]
    if data.get("version") != STATE_VERSION:
        raise ValueError(f"engine state version {data.get('version')!r} is not {STATE_VERSION}")
    stored_config = EngineConfig.from_dict(data["config"])
    if config is not None and config != stored_config:
        logger.warning("resuming with a config that differs from the stored one; using the new one")
    rows = stored["tasks"]
    active = sorted((r for r in rows if r["status"] == "active"), key=lambda r: r["active_seq"] or 0)
    seeds = [Task.model_validate_json(r["body"]) for r in active if r["origin"] == "seed"]
    if expected_seed_ids is not None and sorted(expected_seed_ids) != sorted(t.id for t in seeds):
        raise ValueError(f"the seeds given do not match the seeds stored in {where}")
    rng = random.Random()
    rng.setstate(_rng_from_json(data["rng"]))
    state = EngineState(
        config=config or stored_config, rng=rng, pool=ReplayPool([]),
        seq=int(data["seq"]), last_step=int(data["last_step"]), epochs=int(data["epochs"]),
        counters=dict(data["counters"]), seeded_once=set(data.get("seeded_once", [])),
    )
    pool = state.pool
    pool.seed_ids = {r["id"] for r in rows if r["origin"] == "seed"}
    for r in rows:
        tid = r["id"]
        state.accepted_step[tid] = r["accepted_step"]
        if r["fingerprint"]:
            pool.fingerprints.setdefault(r["fingerprint"], tid)
        if r["status"] == "retired":
            pool.retired[tid] = r["reason"]
            state.retired_step[tid] = r["retired_step"]
        elif r["status"] == "queued":
            pool.queue[tid] = Task.model_validate_json(r["body"])
            pool.queue_step[tid] = r["accepted_step"] if r["accepted_step"] is not None else 0
    for r in active:
        tid = r["id"]
        task = Task.model_validate_json(r["body"])
        pool.active[tid] = task
        if tid not in pool.seed_ids:
            pool.n_synthetic_active += 1
        state.active_seq[tid] = r["active_seq"]
        state.entry_step[tid] = r["entry_step"] if r["entry_step"] is not None else 0
        state.activate(task, state.entry_step[tid], stored["ledger"].get(tid))
    state.selector.restore_exclusions(stored["exclusions"])
    return state


def state_dict(state: EngineState) -> dict[str, Any]:
    """A canonical, JSON-able view of the whole decision state (for equality checks)."""
    return {
        "config": state.config.to_dict(),
        "active": list(state.pool.active),
        "queue": list(state.pool.queue),
        "queue_steps": dict(state.pool.queue_step),
        "retired": dict(sorted(state.pool.retired.items())),
        "ledger": sorted((s.to_row() for s in state.ledger), key=lambda r: r["task_id"]),
        "exclusions": dict(sorted(state.selector.excluded_until.items())),
        "rng": _rng_to_json(state.rng.getstate()),
        "epochs": state.epochs,
        "counters": dict(state.counters),
        "seeded_once": sorted(state.seeded_once),
    }


def _rng_to_json(rng_state: tuple) -> list:
    version, internal, gauss = rng_state
    return [version, list(internal), gauss]


def _rng_from_json(data: list) -> tuple:
    version, internal, gauss = data
    return (version, tuple(internal), gauss)
