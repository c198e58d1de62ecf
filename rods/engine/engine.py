"""`DataEngine`: the trainer-agnostic facade over ledger, selector and replay pool (DESIGN §3).

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

All public methods take one re-entrant lock; none blocks on synthesis.
"""

from __future__ import annotations

import itertools
import logging
import random
import threading
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rods.engine.config import TASK_TYPES, EngineConfig
from rods.engine.events import EventLog
from rods.engine.ledger import RewardLedger, TaskStats, check_rewards
from rods.engine.persistence import PersistenceMixin
from rods.engine.pool import ReplayPool, fingerprint
from rods.engine.select import BoundarySeedSelector
from rods.engine.store import DB_FILE, EngineStore
from rods.engine.zones import ZONES, phi
from rods.tasks import Task

logger = logging.getLogger(__name__)

@dataclass
class SubmitResult:
    """Which candidates were accepted into the queue, and why others were not."""

    accepted: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)  # older candidates pushed out of a full queue


@dataclass
class EpochReport:
    """What one epoch boundary did."""

    step: int
    epoch: int
    injected: list[str] = field(default_factory=list)
    retired: dict[str, str] = field(default_factory=dict)  # active task id -> reason
    expired: list[str] = field(default_factory=list)  # queued candidates that aged out
    active: int = 0
    active_synthetic: int = 0
    queue: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class DataEngine(PersistenceMixin):
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
            self._restore(self._store.load(), config, expected_seed_ids=[t.id for t in seeds] if seeds else None)
            logger.info("resumed engine state from %s (step %s)", self.run_dir, self._last_step)
        else:
            if not seeds:
                raise ValueError("DataEngine needs the human seed tasks (or a run_dir holding a saved state)")
            self._fresh(config or EngineConfig(), seeds)
            if self._store is not None:
                self._store.write_full(self._full_state())

    # -- construction -------------------------------------------------------------------------

    def _fresh(self, config: EngineConfig, seeds: list[Task]) -> None:
        self.config = config
        self.rng = random.Random(config.seed)
        self.pool = ReplayPool(seeds)
        self._seeded_once: set[str] = set()
        self._init_indexes()
        self._seq = 0
        self._active_seq: dict[str, int] = {}
        self._accepted_step: dict[str, int | None] = {}
        self._entry_step: dict[str, int] = {}
        self._retired_step: dict[str, int] = {}
        for task in seeds:
            self._seq += 1
            self._active_seq[task.id] = self._seq
            self._entry_step[task.id] = 0
            self._activate(task, 0)
        self._last_step = -1
        self._epochs = 0
        self._counters = {"accepted": 0, "rejected": 0, "injected": 0, "retired": 0, "expired": 0, "selected": 0}

    def _init_indexes(self) -> None:
        cfg = self.config
        self.ledger = RewardLedger(
            K=cfg.K,
            alpha_minus=cfg.alpha_minus,
            alpha_plus=cfg.alpha_plus,
            min_observations=cfg.min_observations,
            burn_in_rollouts=cfg.burn_in_rollouts,
        )
        self.selector = BoundarySeedSelector(cfg)
        self._zone_counts = {z: 0 for z in ZONES}
        self._phi_sum = 0.0
        self._dirty: set[str] = set()
        self._step_groups: dict[int, list[int]] = {}  # step -> [groups, informative groups]
        self._ignored = 0

    def _eligible_seed(self, task: Task) -> bool:
        if self.config.one_shot:
            return task.id in self.pool.seed_ids and task.id not in self._seeded_once
        return task.id in self.pool.seed_ids or self.config.seeds_from_synthetic

    def _activate(self, task: Task, entry_step: int, row: dict[str, Any] | None = None) -> TaskStats:
        if row is None:
            stats = self.ledger.add(task.id, task.task_type, task.origin, entry_step)
        else:
            stats = self.ledger.load_row(row)
        self._zone_counts[stats.zone] += 1
        if stats.zone != "new":
            self._phi_sum += phi(stats.mean)
        if self._eligible_seed(task):
            self.selector.add(task.id, task.task_type)
            self.selector.update(task.id, stats.zone, stats.mean)
        return stats

    def _deactivate(self, task_id: str) -> TaskStats:
        stats = self.ledger.remove(task_id)
        self._zone_counts[stats.zone] -= 1
        if stats.zone != "new":
            self._phi_sum -= phi(stats.mean)
        self.selector.remove(task_id)
        self._dirty.discard(task_id)
        return stats

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
            stats = self.ledger.get_or_none(task_id)
            if stats is None:
                if self.pool.knows(task_id):
                    self._ignored += 1
                    return None
                raise KeyError(f"observe: unknown task id {task_id!r} (not in the engine's pool)")
            old_zone, old_mean = stats.zone, stats.mean
            self.ledger.observe_stats(stats, step, values)
            zone, mean = stats.zone, stats.mean
            if old_zone != zone:
                self._zone_counts[old_zone] -= 1
                self._zone_counts[zone] += 1
            if old_zone != "new":
                self._phi_sum -= 4.0 * old_mean * (1.0 - old_mean)
            if zone != "new":
                self._phi_sum += 4.0 * mean * (1.0 - mean)
            self.selector.update(task_id, zone, mean)
            self._dirty.add(task_id)
            counts = self._step_groups.get(step)
            if counts is None:
                counts = self._step_groups[step] = [0, 0]
            counts[0] += 1
            if varied:
                counts[1] += 1
            if step > self._last_step:
                self._last_step = step
            burn_in = self.config.burn_in_rollouts
            if stats.origin == "synthetic" and stats.n_rewards - len(values) < burn_in <= stats.n_rewards:
                self.events.emit("first_rewards", step=step, task_id=task_id, mean=stats.first_mean(burn_in))
            return zone

    def select_seeds(self, step: int) -> list[Task]:
        """This step's boundary seeds (at most M, per-type quotas, exclusion window).

        Empty with `capacity=0` (the static baseline: nothing would be injected).
        Records a `select` event and the step's metrics, flushes the ledger every
        `flush_every_steps` steps, and hands the seeds to the attached worker.
        """
        with self._lock:
            if self.config.capacity == 0 or (self.config.one_shot and self._epochs > 0):
                ids: list[str] = []  # nothing could ever be injected: spend no synthesis
            else:
                ids = self.selector.select(step, self.rng)
            if self.config.one_shot:
                for tid in ids:
                    self._seeded_once.add(tid)
                    self.selector.remove(tid)
            if step > self._last_step:
                self._last_step = step
            seeds = [self.pool.active[tid] for tid in ids]
            self._counters["selected"] += len(ids)
            if ids:
                self.events.emit(
                    "select", step=step,
                    seeds=[
                        {"task_id": t.id, "type": t.task_type, "mean": round(self.ledger.get(t.id).mean, 6),
                         "phi": round(phi(self.ledger.get(t.id).mean), 6)}
                        for t in seeds
                    ],
                )
            self.events.record_metrics(self.metrics(step))
            every = self.config.flush_every_steps
            if self._store is not None and every and step % every == 0:
                self._flush()
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
            step = self._last_step if step is None else step
            rows, accepted, seen = [], [], set()
            for cand in candidates:
                try:
                    task = cand if isinstance(cand, Task) else Task.model_validate(cand)
                except Exception as err:  # pydantic.ValidationError and friends
                    cid = cand.get("id", "?") if isinstance(cand, dict) else "?"
                    result.rejected[str(cid)] = f"invalid task: {err}"
                    continue
                fp = fingerprint(task)
                reason = self.pool.check_candidate(task, fp)
                if reason is None and (task.id in seen or fp in seen):
                    reason = "duplicate within this submission"
                if reason is not None:
                    result.rejected[task.id] = reason
                    continue
                seen.update((task.id, fp))
                self._seq += 1
                rows.append({
                    "id": task.id, "seq": self._seq, "origin": task.origin, "fingerprint": fp,
                    "body": task.model_dump_json(), "accepted_step": step,
                })
                accepted.append((task, fp))
            cap = self.config.queue_capacity
            overflow = 0 if cap is None else max(0, len(self.pool.queue) + len(accepted) - cap)
            dropped_queue = list(itertools.islice(self.pool.queue, min(overflow, len(self.pool.queue))))
            dropped_new = max(0, overflow - len(dropped_queue))
            if dropped_new:  # the queue is smaller than the overflow: the oldest new ones go too
                for task, _ in accepted[:dropped_new]:
                    result.dropped.append(task.id)
            dropped = [(tid, step) for tid in dropped_queue] + [(tid, step) for tid in result.dropped]
            counters = dict(self._counters)
            counters["accepted"] += len(accepted)
            counters["rejected"] += len(result.rejected)
            if self._store is not None and (rows or dropped):
                self._store.add_candidates(rows, dropped, self._meta(counters=counters))
            self._counters = counters
            for task, fp in accepted:
                self.pool.enqueue(task, fp, step)
                self._accepted_step[task.id] = step
                result.accepted.append(task.id)
            for tid in dropped_queue + result.dropped:
                self.pool.drop_queued(tid, "queue_overflow")
                self._retired_step[tid] = step
            result.dropped = dropped_queue + result.dropped
            self.events.emit(
                "submit", step=step, accepted=result.accepted, rejected=result.rejected, dropped=result.dropped
            )
        return result

    def on_epoch_end(self, step: int) -> EpochReport:
        """Retire, then inject (at most `max_injection_fraction` of the active pool), atomically."""
        with self._lock:
            plan = self.pool.plan_epoch(step, self.ledger, self.config)
            counters = dict(self._counters)
            counters["injected"] += len(plan.inject)
            counters["retired"] += len(plan.retire)
            counters["expired"] = counters.get("expired", 0) + len(plan.expire)
            inject_seq = []
            seq = self._seq
            for tid in plan.inject:
                seq += 1
                inject_seq.append((tid, seq))
            if self._store is not None:
                rows = [self.ledger.get(t).to_row() for t in self._dirty if t not in plan.retire]
                rows += [
                    {"task_id": tid, "task_type": self.pool.queue[tid].task_type, "origin": "synthetic",
                     "entry_step": step, "rewards": [], "n_groups": 0, "n_rewards": 0, "last_step": None,
                     "first_rewards": []}
                    for tid in plan.inject
                ]
                excl = {t: u for t, u in self.selector.excluded_until.items() if t not in plan.retire}
                self._store.commit_epoch(
                    step, {**plan.retire, **{t: "expired" for t in plan.expire}}, inject_seq, rows, excl,
                    self._meta(epochs=self._epochs + 1, seq=seq, last_step=max(self._last_step, step),
                               counters=counters),
                )
            # -- the decisions are durable: apply them
            self._seq = seq
            for tid, reason in plan.retire.items():
                stats = self._deactivate(tid)
                self._retired_step[tid] = step
                self._active_seq.pop(tid, None)
                self.events.emit(
                    "retire", step=step, task_id=tid, reason=reason, mean=round(stats.mean, 6),
                    variance=round(stats.variance, 6), n_rewards=stats.n_rewards,
                )
            for tid in plan.expire:
                self._retired_step[tid] = step
            if plan.expire:
                self.events.emit("expire", step=step, task_ids=list(plan.expire))
            injected = self.pool.apply(plan)
            for (tid, s), task in zip(inject_seq, injected):
                self._active_seq[tid] = s
                self._entry_step[tid] = step
                self._activate(task, step)
                self.events.emit(
                    "inject", step=step, task_id=tid, type=task.task_type,
                    parent_id=task.provenance.parent_id, generation=task.provenance.generation,
                    backend=task.provenance.backend,
                )
            self._dirty.clear()
            self._epochs += 1
            self._last_step = max(self._last_step, step)
            self._counters = counters
            report = EpochReport(
                step=step, epoch=self._epochs, injected=list(plan.inject), retired=dict(plan.retire),
                expired=list(plan.expire),
                active=len(self.pool.active), active_synthetic=self.pool.n_synthetic_active,
                queue=len(self.pool.queue),
            )
            reasons: dict[str, int] = {}
            for r in plan.retire.values():
                reasons[r] = reasons.get(r, 0) + 1
            self.events.emit("epoch_end", step=step, epoch=self._epochs, injected=len(plan.inject),
                             retired=reasons, expired=len(plan.expire), active=report.active, queue=report.queue)
            metrics = self.metrics(step)
            metrics["epoch_end"] = True
            self.events.record_metrics(metrics)
            self.events.flush()
        return report

    @property
    def last_step(self) -> int:
        """The latest step seen (-1 before any); a resumed trainer continues after it."""
        with self._lock:
            return self._last_step

    @property
    def epochs(self) -> int:
        """Epoch boundaries processed so far."""
        with self._lock:
            return self._epochs

    def active_tasks(self) -> list[Task]:
        """The active pool: human seeds first, then synthesized tasks in injection order."""
        with self._lock:
            return list(self.pool.active.values())

    def active_ids(self) -> list[str]:
        with self._lock:
            return list(self.pool.active)

    def queued_tasks(self) -> list[Task]:
        with self._lock:
            return list(self.pool.queue.values())

    def task(self, task_id: str) -> Task:
        """Any task the engine knows (active, queued, or retired when a store is attached)."""
        with self._lock:
            task = self.pool.active.get(task_id) or self.pool.queue.get(task_id)
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
            return self.pool.status(task_id)

    def retired(self) -> dict[str, str]:
        """Every retired task id with its reason."""
        with self._lock:
            return dict(self.pool.retired)

    def stats(self, task_id: str) -> dict[str, Any]:
        """The ledger entry of an active task, with mean, variance, zone and φ."""
        with self._lock:
            s = self.ledger.get(task_id)
            row = s.to_row()
            row.update(mean=s.mean, variance=s.variance, zone=s.zone, phi=phi(s.mean))
            return row

    def zone(self, task_id: str) -> str:
        with self._lock:
            return self.ledger.get(task_id).zone

    def metrics(self, step: int) -> dict[str, Any]:
        """Per-step metrics: zones, pool by origin, queue, informative fraction, mean φ."""
        with self._lock:
            groups, informative = self._step_groups.get(step, (0, 0))
            for old in [s for s in self._step_groups if s < step - 64]:
                del self._step_groups[old]
            classified = len(self.ledger) - self._zone_counts["new"]
            return {
                "step": step,
                "epoch": self._epochs,
                "zones": dict(self._zone_counts),
                "boundary_by_type": {t: self.selector.boundary_count(t) for t in TASK_TYPES},
                "active": len(self.pool.active),
                "active_seed": len(self.pool.active) - self.pool.n_synthetic_active,
                "active_synthetic": self.pool.n_synthetic_active,
                "queue": len(self.pool.queue),
                "retired": len(self.pool.retired),
                "groups": groups,
                "informative_fraction": (informative / groups) if groups else None,
                "mean_phi": (self._phi_sum / classified) if classified else None,
                "ignored_observations": self._ignored,
                **{f"total_{k}": v for k, v in self._counters.items()},
            }

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
                self._flush()
                self.events.flush()
                self._store.close()
                self._store = None

    def __enter__(self) -> DataEngine:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
