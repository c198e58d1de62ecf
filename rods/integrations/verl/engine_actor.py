"""The data engine as a named Ray actor, and a client with the engine's own method names.

`EngineService` is `rods.engine.DataEngine` plus the bookkeeping a
distributed trainer needs around it:

- rewards arrive one trajectory at a time from many agent-loop workers
  (`report`); the service keeps them per GRPO group (verl's per-step `uid`) and
  calls `DataEngine.observe` once a group's K rewards are in; a group cut short
  (a failed trajectory) is observed with what arrived when its step ends;
- `begin_step(step)` ends the previous step: leftover groups are observed, the
  step's boundary seeds are selected (and sent to the attached synthesis
  workers, which never block the trainer), and the ledger is flushed, so a
  killed actor loses nothing up to the last finished step;
- `end_epoch(step)` runs the epoch boundary and returns the new active pool.

The engine's own persistence lives in `run_dir`: a restarted actor (same
name, same `run_dir`) resumes the saved state. `RemoteEngine` calls the actor
with `.remote()` + `ray.get` under the same method names as `DataEngine`
(`observe`, `select_seeds`, `submit`, `on_epoch_end`, `active_tasks`, `save`),
so code does not care whether the engine is local or remote.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ray

from rods.engine import DataEngine, EpochReport, SubmitResult
from rods.engine.store import DB_FILE
from rods.integrations.verl.settings import RodsVerlSettings
from rods.tasks import Task, read_task_source

logger = logging.getLogger(__name__)


class EngineService:
    """`DataEngine` with group buffering, step bookkeeping and synthesis dispatch (see module docstring).

    Args:
        settings: the `rods:` section (a dict, so it crosses process boundaries as is).
        seeds: the seed tasks; default: loaded from `settings['seeds']`.
    """

    def __init__(self, settings: dict[str, Any], seeds: Sequence[Task] | None = None) -> None:
        self.settings = RodsVerlSettings.from_dict(settings)
        config = self.settings.engine_config()
        if seeds is None and (Path(self.settings.run_dir) / DB_FILE).exists():
            self.engine = DataEngine.resume(self.settings.run_dir, config)  # a restarted actor
        else:
            seeds = list(seeds) if seeds is not None else read_task_source(self.settings.seeds)
            self.engine = DataEngine(config, seeds, run_dir=self.settings.run_dir)
        last = getattr(self.engine, "last_step", getattr(self.engine, "_last_step", -1))
        self._step = max(int(last), 0)
        self._finished = self._step  # steps up to here have been finished (seeds selected, flushed)
        self._groups: dict[str, tuple[str, list[float]]] = {}
        self._observed_groups = 0
        self._partial_groups = 0
        self.worker = None
        synthesis = self.settings.synthesis
        if synthesis is not None and synthesis.num_workers > 0:
            from rods.integrations.verl.synthesis import RaySynthesisWorker

            self.worker = RaySynthesisWorker(synthesis)
            self.engine.attach_worker(self.worker)
        logger.info("engine service ready: %d active tasks, step %d", len(self.engine.active_ids()), self._step)

    # -- the DataEngine contract, unchanged ----------------------------------------------------

    def observe(self, step: int, task_id: str, rewards: Sequence[float]) -> str | None:
        return self.engine.observe(step, task_id, rewards)

    def select_seeds(self, step: int) -> list[Task]:
        return self.engine.select_seeds(step)

    def submit(self, candidates: Sequence[Task | dict], step: int | None = None) -> SubmitResult:
        return self.engine.submit(candidates, step)

    def on_epoch_end(self, step: int) -> EpochReport:
        return self.engine.on_epoch_end(step)

    def active_tasks(self) -> list[Task]:
        return self.engine.active_tasks()

    def tasks(self, task_ids: Sequence[str]) -> list[Task]:
        """The tasks with these ids, in this order (active, queued or retired)."""
        return [self.engine.task(t) for t in task_ids]

    def save(self, path: str | None = None) -> str | None:
        saved = self.engine.save(path)
        return str(saved) if saved is not None else None

    def flush(self) -> None:
        self.engine.flush()

    def stats(self, task_id: str) -> dict[str, Any]:
        return self.engine.stats(task_id)

    def metrics(self, step: int | None = None) -> dict[str, Any]:
        out = self.engine.metrics(self._step if step is None else step)
        out.update(
            observed_groups=self._observed_groups,
            partial_groups=self._partial_groups,
            buffered_groups=len(self._groups),
        )
        if self.worker is not None:
            out.update(self.worker.counters())
        return out

    def state_dict(self) -> dict[str, Any]:
        return self.engine.state_dict()

    def status(self, task_id: str) -> str | None:
        return self.engine.status(task_id)

    # -- what the verl side adds -------------------------------------------------------------------

    def current_step(self) -> int:
        return self._step

    def report(self, group: str, task_id: str, reward: float, group_size: int) -> str | None:
        """One trajectory's reward; observed with its group once `group_size` rewards are in."""
        held = self._groups.get(group)
        if held is None:
            held = self._groups[group] = (task_id, [])
        elif held[0] != task_id:
            raise ValueError(f"group {group!r} mixes tasks {held[0]!r} and {task_id!r}")
        held[1].append(float(reward))
        if len(held[1]) < group_size:
            return None
        del self._groups[group]
        return self._observe_group(task_id, held[1])

    def _observe_group(self, task_id: str, rewards: list[float]) -> str | None:
        self._observed_groups += 1
        try:
            return self.engine.observe(self._step, task_id, rewards)
        except KeyError:  # a task the engine never had (e.g. a validation row)
            logger.warning("rewards for unknown task %s ignored", task_id)
            return None

    def begin_step(self, step: int) -> int:
        """The trainer starts `step`: finish the previous one (leftover groups, seeds, flush).

        Returns the number of seeds sent to synthesis for the finished step.
        """
        if step <= self._step:
            return 0
        finished = self._finish_step()
        self._step = step
        return finished

    def _finish_step(self) -> int:
        if self._finished >= self._step:
            return 0
        self._finished = self._step
        for group, (task_id, rewards) in list(self._groups.items()):
            self._partial_groups += 1
            logger.warning("group %s of task %s ended with %d rewards", group, task_id, len(rewards))
            self._observe_group(task_id, rewards)
        self._groups.clear()
        seeds = self.engine.select_seeds(self._step)
        self.engine.flush()
        return len(seeds)

    def end_epoch(self, step: int) -> dict[str, Any]:
        """Epoch boundary after `step`: finish the step, retire and inject, return the new pool."""
        self._step = max(self._step, step)
        self._finish_step()
        report = self.engine.on_epoch_end(step)
        return {"report": report.to_dict(), "tasks": self.engine.active_tasks()}

    def close(self) -> None:
        self.engine.close()


# -- the actor and its client ---------------------------------------------------------------------

EngineActor = ray.remote(EngineService)

_HANDLES: dict[tuple[str, str], Any] = {}


def engine_actor(settings: RodsVerlSettings, seeds: Sequence[Task] | None = None):
    """Get the named engine actor, creating it (with its persisted state) if it does not exist."""
    options: dict[str, Any] = {
        "name": settings.engine_actor,
        "namespace": settings.namespace,
        "get_if_exists": True,
        "num_cpus": 0,
        "max_restarts": 0,
    }
    if settings.detached:
        options["lifetime"] = "detached"
    if ray.is_initialized():
        # Next to its creator (verl's trainer process), so run_dir is that node's path; a
        # restart elsewhere only finds its state if run_dir is on a shared filesystem.
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        node = ray.get_runtime_context().get_node_id()
        options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(node_id=node, soft=True)
    handle = EngineActor.options(**options).remote(settings.to_dict(), list(seeds) if seeds is not None else None)
    _HANDLES[(settings.engine_actor, settings.namespace)] = handle
    return handle


def lookup_engine_actor(name: str, namespace: str, timeout_s: float = 60.0):
    """The running engine actor `name` (cached per process); waits up to `timeout_s` for it."""
    key = (name, namespace)
    if key in _HANDLES:
        return _HANDLES[key]
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            handle = ray.get_actor(name, namespace=namespace)
            break
        except ValueError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no engine actor {name!r} in Ray namespace {namespace!r}") from None
            time.sleep(0.5)
    _HANDLES[key] = handle
    return handle


def forget_engine_actor(name: str, namespace: str) -> None:
    """Drop a cached handle (after the actor was killed and recreated)."""
    _HANDLES.pop((name, namespace), None)


class RemoteEngine:
    """Client of the engine actor with `DataEngine`'s method names (blocking calls)."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    @classmethod
    def connect(cls, settings: RodsVerlSettings, seeds: Sequence[Task] | None = None) -> RemoteEngine:
        """Create or attach to the named engine actor described by `settings`."""
        return cls(engine_actor(settings, seeds))

    def _call(self, method: str, *args: Any) -> Any:
        return ray.get(getattr(self.handle, method).remote(*args))

    def observe(self, step: int, task_id: str, rewards: Sequence[float]) -> str | None:
        return self._call("observe", step, task_id, list(rewards))

    def select_seeds(self, step: int) -> list[Task]:
        return self._call("select_seeds", step)

    def submit(self, candidates: Sequence[Task | dict], step: int | None = None) -> SubmitResult:
        return self._call("submit", list(candidates), step)

    def on_epoch_end(self, step: int) -> EpochReport:
        return self._call("on_epoch_end", step)

    def active_tasks(self) -> list[Task]:
        return self._call("active_tasks")

    def tasks(self, task_ids: Sequence[str]) -> list[Task]:
        return self._call("tasks", list(task_ids))

    def save(self, path: str | None = None) -> str | None:
        return self._call("save", path)

    def flush(self) -> None:
        return self._call("flush")

    def stats(self, task_id: str) -> dict[str, Any]:
        return self._call("stats", task_id)

    def metrics(self, step: int | None = None) -> dict[str, Any]:
        return self._call("metrics", step)

    def state_dict(self) -> dict[str, Any]:
        return self._call("state_dict")

    def status(self, task_id: str) -> str | None:
        return self._call("status", task_id)

    def current_step(self) -> int:
        return self._call("current_step")

    def report(self, group: str, task_id: str, reward: float, group_size: int) -> str | None:
        return self._call("report", group, task_id, reward, group_size)

    def begin_step(self, step: int) -> int:
        return self._call("begin_step", step)

    def end_epoch(self, step: int) -> dict[str, Any]:
        return self._call("end_epoch", step)
