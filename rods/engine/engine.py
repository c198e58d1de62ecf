"""`DataEngine`: the trainer-agnostic facade over ledger, selector and replay pool (docs/design.md §3.1).

The contract (stable; a Ray actor wraps the same method names, so arguments and
returns are plain, picklable values):

- `observe(step, task_id, rewards)`: the rewards a trainer computed for one
  group of rollouts of a task; any number of calls per step, from any thread;
- `select_seeds(step) -> list[Task]`: this step's boundary seeds (sent to the
  attached synthesis worker, if any); also records the step's metrics;
- `submit(candidates) -> SubmitResult`: accepted candidates go to the queue and
  are committed to the store before this returns;
- `on_epoch_end(step) -> EpochReport`: retire and inject, committed atomically;
- `active_tasks() -> list[Task]`: what the trainer samples from next epoch.

All public methods take one re-entrant lock; none blocks on synthesis. The
whole decision state is one `EngineState` (`rods.engine.state`), which
`rods.engine.persistence` saves and restores.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from rods.engine import persistence
from rods.engine.config import EngineConfig
from rods.engine.events import EventLog
from rods.engine.ledger import check_rewards
from rods.engine.results import EpochReport, SubmitResult
from rods.engine.state import EngineState
from rods.engine.store import DB_FILE, EngineStore
from rods.engine.zones import phi
from rods.tasks import Task, content_hash

logger = logging.getLogger(__name__)

class DataEngine:
    """Reward-driven boundary detection, seed selection and replay pool.

    Args:
        config: engine settings (paper defaults when None).
        seeds: the human seed tasks (never retired).
        run_dir: directory for `engine.sqlite`, `events.jsonl`, `metrics.jsonl`;
            None keeps everything in memory. If it already holds an engine
            state, that state is resumed (the seed ids must match).
    """

    def __init__(
        self,
        config: EngineConfig | None = None,
        seeds: Iterable[Task] = (),
        run_dir: str | Path | None = None,
    ) -> None:
        self._lock = threading.RLock()
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self._store: EngineStore | None = None
        self._worker = None
        if self.run_dir is not None:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            self._store = EngineStore(self.run_dir / DB_FILE)
        self.events = EventLog(self.run_dir)
        seeds = list(seeds)
        if self._store is not None and self._store.has_state():
            expected = [t.id for t in seeds] if seeds else None
            self.state = persistence.restore(self._store.load(), config, expected, self.run_dir)
            logger.info("resumed engine state from %s (step %s)", self.run_dir, self.state.last_step)
        else:
            if not seeds:
                raise ValueError("DataEngine needs the human seed tasks (or a run_dir holding a saved state)")
            self.state = EngineState.fresh(config or EngineConfig(), seeds)
            if self._store is not None:
                self._store.write_full(persistence.snapshot(self.state))

    @property
    def config(self) -> EngineConfig:
        return self.state.config

    @classmethod
    def resume(cls, run_dir: str | Path, config: EngineConfig | None = None) -> DataEngine:
        """Reopen the engine saved in `run_dir` (config from the store unless given)."""
        path = Path(run_dir) / DB_FILE
        if not path.exists():
            raise FileNotFoundError(f"no engine state at {path}")
        store = EngineStore(path)
        try:
            if not store.has_state():
                raise FileNotFoundError(f"{path} holds no engine state (killed before its first save?)")
        finally:
            store.close()
        return cls(config, (), run_dir)

    load = resume

    # -- the contract ------------------------------------------------------------------------------

    def observe(self, step: int, task_id: str, rewards: Sequence[float]) -> str | None:
        """Record the rewards of one group of rollouts of `task_id` at `step`.

        Returns the task's zone, or None when the task is no longer active
        (an observation that arrives after its retirement is counted and ignored).
        Raises KeyError for an id the engine has never seen, ValueError for bad rewards.
        """
        values = check_rewards(task_id, rewards)
        varied = values[0] != values[-1] or (len(values) > 2 and max(values) != min(values))
        with self._lock:
            state = self.state
            stats = state.ledger.get_or_none(task_id)
            if stats is None:
                if state.pool.knows(task_id):
                    state.ignored += 1
                    return None
                raise KeyError(f"observe: unknown task id {task_id!r} (not in the engine's pool)")
            state.observe(stats, step, values, varied)
            burn_in = state.config.burn_in_rollouts
            if stats.origin == "synthetic" and stats.n_rewards - len(values) < burn_in <= stats.n_rewards:
                self.events.emit("first_rewards", step=step, task_id=task_id, mean=stats.first_mean(burn_in))
            return stats.zone

    def select_seeds(self, step: int) -> list[Task]:
        """This step's boundary seeds (at most M, per-type quotas, exclusion window).

        Empty with `capacity=0` (the static baseline: nothing would be injected).
        Records a `select` event and the step's metrics, flushes the ledger every
        `flush_every_steps` steps, and hands the seeds to the attached worker.
        """
        with self._lock:
            state, config = self.state, self.state.config
            if config.capacity == 0 or (config.one_shot and state.epochs > 0):
                ids: list[str] = []  # nothing could ever be injected: spend no synthesis
            else:
                ids = state.selector.select(step, state.rng)
            if config.one_shot:
                for tid in ids:
                    state.seeded_once.add(tid)
                    state.selector.remove(tid)
            if step > state.last_step:
                state.last_step = step
            seeds = [state.pool.active[tid] for tid in ids]
            state.counters["selected"] += len(ids)
            if ids:
                means = {t.id: state.ledger.get(t.id).mean for t in seeds}
                self.events.emit(
                    "select", step=step,
                    seeds=[{"task_id": t.id, "type": t.task_type, "mean": round(means[t.id], 6),
                            "phi": round(phi(means[t.id]), 6)} for t in seeds],
                )
            self.events.record_metrics(state.metrics(step))
            every = config.flush_every_steps
            if self._store is not None and every and step % every == 0:
                persistence.flush(state, self._store)
            self.events.flush()
            worker = self._worker
        if worker is not None and seeds:
            worker.submit(seeds, step)
        return seeds

    def submit(self, candidates: Sequence[Task | dict], step: int | None = None) -> SubmitResult:
        """Accept synthesized candidates into the queue (committed before returning).

        A candidate is rejected (with the reason) if it is not synthetic, its id
        is already known, or its content duplicates a known task.
        """
        result = SubmitResult()
        with self._lock:
            state = self.state
            step = state.last_step if step is None else step
            rows, accepted, seen = [], [], set[str]()
            for cand in candidates:
                try:
                    task = cand if isinstance(cand, Task) else Task.model_validate(cand)
                except Exception as err:  # pydantic.ValidationError and friends
                    cid = cand.get("id", "?") if isinstance(cand, dict) else "?"
                    result.rejected[str(cid)] = f"invalid task: {err}"
                    continue
                fp = content_hash(task)
                reason = state.pool.check_candidate(task, fp)
                if reason is None and (task.id in seen or fp in seen):
                    reason = "duplicate within this submission"
                if reason is not None:
                    result.rejected[task.id] = reason
                    continue
                seen.update((task.id, fp))
                state.seq += 1
                rows.append({
                    "id": task.id, "seq": state.seq, "origin": task.origin, "fingerprint": fp,
                    "body": task.model_dump_json(), "accepted_step": step,
                })
                accepted.append((task, fp))
            cap = state.config.queue_capacity
            overflow = 0 if cap is None else max(0, len(state.pool.queue) + len(accepted) - cap)
            dropped_queue = list(itertools.islice(state.pool.queue, min(overflow, len(state.pool.queue))))
            dropped_new = max(0, overflow - len(dropped_queue))
            if dropped_new:  # the queue is smaller than the overflow: the oldest new ones go too
                for task, _ in accepted[:dropped_new]:
                    result.dropped.append(task.id)
            dropped = [(tid, step) for tid in dropped_queue] + [(tid, step) for tid in result.dropped]
            counters = dict(state.counters)
            counters["accepted"] += len(accepted)
            counters["rejected"] += len(result.rejected)
            if self._store is not None and (rows or dropped):
                self._store.add_candidates(rows, dropped, persistence.meta(state, counters=counters))
            state.counters = counters
            for task, fp in accepted:
                state.pool.enqueue(task, fp, step)
                state.accepted_step[task.id] = step
                result.accepted.append(task.id)
            for tid in dropped_queue + result.dropped:
                state.pool.drop_queued(tid, "queue_overflow")
                state.retired_step[tid] = step
            result.dropped = dropped_queue + result.dropped
            self.events.emit(
                "submit", step=step, accepted=result.accepted, rejected=result.rejected, dropped=result.dropped
            )
        return result

    def on_epoch_end(self, step: int) -> EpochReport:
        """Retire, then inject (at most `max_injection_fraction` of the active pool), atomically."""
        with self._lock:
            state = self.state
            plan = state.pool.plan_epoch(step, state.ledger, state.config)
            counters = dict(state.counters)
            counters["injected"] += len(plan.inject)
            counters["retired"] += len(plan.retire)
            counters["expired"] = counters.get("expired", 0) + len(plan.expire)
            inject_seq = [(tid, state.seq + i) for i, tid in enumerate(plan.inject, 1)]
            seq = state.seq + len(plan.inject)
            if self._store is not None:
                persistence.commit_epoch(state, self._store, plan, inject_seq, counters)
            # -- the decisions are durable: apply them
            state.seq = seq
            for tid, reason in plan.retire.items():
                stats = state.deactivate(tid)
                state.retired_step[tid] = step
                state.active_seq.pop(tid, None)
                self.events.emit(
                    "retire", step=step, task_id=tid, reason=reason, mean=round(stats.mean, 6),
                    variance=round(stats.variance, 6), n_rewards=stats.n_rewards,
                )
            for tid in plan.expire:
                state.retired_step[tid] = step
            if plan.expire:
                self.events.emit("expire", step=step, task_ids=list(plan.expire))
            injected = state.pool.apply(plan)
            for (tid, s), task in zip(inject_seq, injected):
                state.active_seq[tid] = s
                state.entry_step[tid] = step
                state.activate(task, step)
                self.events.emit(
                    "inject", step=step, task_id=tid, type=task.task_type,
                    parent_id=task.provenance.parent_id, generation=task.provenance.generation,
                    backend=task.provenance.backend,
                )
            state.dirty.clear()
            state.epochs += 1
            state.last_step = max(state.last_step, step)
            state.counters = counters
            report = EpochReport(
                step=step, epoch=state.epochs, injected=list(plan.inject), retired=dict(plan.retire),
                expired=list(plan.expire),
                active=len(state.pool.active), active_synthetic=state.pool.n_synthetic_active,
                queue=len(state.pool.queue),
            )
            reasons: dict[str, int] = {}
            for r in plan.retire.values():
                reasons[r] = reasons.get(r, 0) + 1
            self.events.emit("epoch_end", step=step, epoch=state.epochs, injected=len(plan.inject),
                             retired=reasons, expired=len(plan.expire), active=report.active, queue=report.queue)
            metrics = state.metrics(step)
            metrics["epoch_end"] = True
            self.events.record_metrics(metrics)
            self.events.flush()
        return report

    # -- what the engine knows ---------------------------------------------------------------------

    @property
    def last_step(self) -> int:
        """The latest step seen (-1 before any); a resumed trainer continues after it."""
        with self._lock:
            return self.state.last_step

    @property
    def epochs(self) -> int:
        """Epoch boundaries processed so far."""
        with self._lock:
            return self.state.epochs

    def active_tasks(self) -> list[Task]:
        """The active pool: human seeds first, then synthesized tasks in injection order."""
        with self._lock:
            return list(self.state.pool.active.values())

    def active_ids(self) -> list[str]:
        with self._lock:
            return list(self.state.pool.active)

    def queued_tasks(self) -> list[Task]:
        with self._lock:
            return list(self.state.pool.queue.values())

    def task(self, task_id: str) -> Task:
        """Any task the engine knows (active, queued, or retired when a store is attached)."""
        with self._lock:
            pool = self.state.pool
            task = pool.active.get(task_id) or pool.queue.get(task_id)
            if task is not None:
                return task
            if self._store is not None:
                body = self._store.task_body(task_id)
                if body is not None:
                    return Task.model_validate_json(body)
        raise KeyError(f"unknown task id {task_id!r}")

    def status(self, task_id: str) -> str | None:
        """'active', 'queued', 'retired' or None."""
        with self._lock:
            return self.state.pool.status(task_id)

    def retired(self) -> dict[str, str]:
        """Every retired task id with its reason."""
        with self._lock:
            return dict(self.state.pool.retired)

    def stats(self, task_id: str) -> dict[str, Any]:
        """The ledger entry of an active task, with mean, variance, zone and φ."""
        with self._lock:
            s = self.state.ledger.get(task_id)
            row = s.to_row()
            row.update(mean=s.mean, variance=s.variance, zone=s.zone, phi=phi(s.mean))
            return row

    def zone(self, task_id: str) -> str:
        with self._lock:
            return self.state.ledger.get(task_id).zone

    def metrics(self, step: int) -> dict[str, Any]:
        """Per-step metrics: zones, pool by origin, queue, informative fraction, mean φ."""
        with self._lock:
            return self.state.metrics(step)

    def state_dict(self) -> dict[str, Any]:
        """A canonical, JSON-able view of the whole decision state (for equality checks)."""
        with self._lock:
            return persistence.state_dict(self.state)

    # -- persistence -------------------------------------------------------------------------------

    def flush(self) -> None:
        """Persist observations and exclusions now (no-op without a run_dir)."""
        with self._lock:
            if self._store is not None:
                persistence.flush(self.state, self._store)
            self.events.flush()

    def save(self, path: str | Path | None = None) -> Path | None:
        """Persist the whole state atomically.

        Without `path`, flushes everything into this engine's own store. With
        `path` (a directory or a `.sqlite` file), writes a complete snapshot
        there via a temp file and rename (retired tasks included when this
        engine has a store to copy them from).
        """
        with self._lock:
            store = self._store
            target = persistence.snapshot_path(path) if path is not None else None
            if target is None or (store is not None and target.resolve() == store.path.resolve()):
                if store is None:
                    raise ValueError("save() needs a path for an engine without a run_dir")
                self.state.dirty = {s.task_id for s in self.state.ledger}
                persistence.flush(self.state, store)
                self.events.flush()
                return store.path
            return persistence.save(self.state, store, target)

    # -- synthesis worker ----------------------------------------------------------------------------

    def attach_worker(self, worker) -> None:
        """Send each step's seeds to `worker`; its candidates come back through `submit`."""
        with self._lock:
            self._worker = worker
        worker.set_sink(self.submit)

    def close(self) -> None:
        """Flush, stop the worker (without waiting) and close the store."""
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            worker.set_sink(None)
            worker.close(wait=False)
        with self._lock:
            if self._store is not None:
                persistence.flush(self.state, self._store)
                self.events.flush()
                self._store.close()
                self._store = None

    def __enter__(self) -> DataEngine:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
