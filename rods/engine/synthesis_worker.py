"""Asynchronous synthesis: seeds go in, candidate tasks come out later (docs/design.md §3.5).

Training never waits for synthesis. A worker takes seed batches with `submit`
and returns at once; finished candidates are handed to a *sink* (the engine's
`submit`, set by `DataEngine.attach_worker`) as soon as each batch is done, or
collected with `collect()` when no sink is set. Failures are logged and
counted, never raised into the trainer.

`PoolSynthesisWorker` runs any callable `synthesize(seeds: list[Task]) ->
list[Task]` off the trainer's interpreter: by default in its own process (or
processes), started with `spawn` at a lower scheduling priority (`nice`) and
with one torch thread (library code sets no environment variable), so synthesis competes with the trainer's
rollouts neither for the GIL nor, beyond its share, for the cores. The
callable (or a `factory` that builds it) is pickled once per worker process
and built there once, not per batch; one that cannot be pickled (a lambda, a
closure, an object holding locks) runs on a thread pool instead, with a
warning. If a worker process dies (killed, segfault, out of memory) the pool
is restarted and the batches it was running are submitted again; a batch that
kills its worker `max_tries` times is dropped and counted as a failure. A
batch's candidates reach the sink once: only a batch whose result never came
back is run again.
"""

from __future__ import annotations

import logging
import multiprocessing
import pickle
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError, Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from rods.engine.synthesis_process import ready, report_backbones, run_batch, start_process
from rods.tasks import Task

logger = logging.getLogger(__name__)

Synthesize = Callable[[list[Task]], list[Task]]
Sink = Callable[[list[Task]], Any]

class SynthesisWorker(Protocol):
    """What the engine needs from a synthesis worker."""

    def submit(self, seeds: Sequence[Task], step: int | None = None) -> None: ...

    def collect(self) -> list[Task]: ...

    def set_sink(self, sink: Sink | None) -> None: ...

    def close(self, wait: bool = True) -> None: ...


class AsyncSynthesisWorker:
    """The bookkeeping every worker shares: in-flight batches, the sink, counters.

    Subclasses implement `_launch(batch, step)`, which starts one batch and
    returns a handle plus a future-like object (`add_done_callback`, `result`).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sink: Sink | None = None
        self._done: list[Task] = []
        self._pending: set[Any] = set()
        self.submitted_seeds = 0
        self.produced = 0
        self.failures = 0
        self.restarts = 0

    def _launch(self, batch: list[Task], step: int | None) -> tuple[Any, Any]:
        raise NotImplementedError

    def _batches(self, seeds: list[Task]) -> list[list[Task]]:
        return [seeds]

    def set_sink(self, sink: Sink | None) -> None:
        """Where finished candidates go (e.g. `engine.submit`); None buffers them for `collect`."""
        with self._lock:
            self._sink = sink
            buffered, self._done = self._done, []
        if sink is not None and buffered:
            sink(buffered)

    def submit(self, seeds: Sequence[Task], step: int | None = None) -> None:
        """Queue seeds for synthesis; returns immediately."""
        seeds = list(seeds)
        if not seeds:
            return
        for batch in self._batches(seeds):
            handle, future = self._launch(batch, step)
            with self._lock:
                self._pending.add(handle)
                self.submitted_seeds += len(batch)
            future.add_done_callback(lambda fut, handle=handle: self._finished(handle, fut))

    def _finished(self, handle: Any, future: Any) -> None:
        with self._lock:
            self._pending.discard(handle)
        try:
            tasks = list(future.result())
        except Exception:  # a failed batch must never reach the trainer
            with self._lock:
                self.failures += 1
            logger.exception("synthesis batch failed")
            return
        self._deliver(tasks)

    def _deliver(self, tasks: list[Task]) -> None:
        """Hand a finished batch's candidates to the sink (or buffer them for `collect`)."""
        with self._lock:
            self.produced += len(tasks)
            sink = self._sink
            if sink is None:
                self._done.extend(tasks)
                return
        if not tasks:
            return
        try:
            sink(tasks)
        except Exception:
            with self._lock:
                self.failures += 1
            logger.exception("could not hand %d synthesized tasks to the sink", len(tasks))

    def collect(self) -> list[Task]:
        """Candidates finished so far (only when no sink is set)."""
        with self._lock:
            out, self._done = self._done, []
        return out

    @property
    def pending(self) -> int:
        """Batches submitted but not finished."""
        with self._lock:
            return len(self._pending)

    def counters(self) -> dict[str, int]:
        """Totals for metrics logs."""
        with self._lock:
            return {
                "synthesis_submitted_seeds": self.submitted_seeds,
                "synthesis_produced": self.produced,
                "synthesis_failures": self.failures,
                "synthesis_pending": len(self._pending),
                "synthesis_restarts": self.restarts,
            }


@dataclass(eq=False)
class _Batch:
    seeds: list[Task]
    step: int | None
    crashes: int = 0  # times a worker process died while running it


class PoolSynthesisWorker(AsyncSynthesisWorker):
    """Runs `synthesize` on seed batches in worker processes (default) or threads.

    Args:
        synthesize: seeds -> accepted candidate tasks (already verified).
        factory: instead of `synthesize`, a picklable zero-argument callable that builds it
            (e.g. `functools.partial(make_synthesizer, settings)`): called once in each worker
            process (in this process for threads).
        max_workers: concurrent batches (worker processes or threads).
        kind: "process" (default: each batch runs in a worker process, off this interpreter)
            or "thread". "process" falls back to "thread", with a warning, when `synthesize`
            (or `factory`) cannot be pickled.
        batch_size: seeds per call of `synthesize` (None: all seeds of a step together).
        nice: how much lower the worker processes' scheduling priority is (`os.nice`; 0 keeps it;
            default 19, the lowest: they use cores training leaves idle).
        max_tries: runs of a batch whose worker process dies before it is dropped (a failure).
            With several workers, every batch running when a process dies counts one try.
    """

    def __init__(
        self,
        synthesize: Synthesize | None = None,
        *,
        factory: Callable[[], Synthesize] | None = None,
        max_workers: int = 1,
        kind: str = "process",
        batch_size: int | None = None,
        nice: int = 19,
        max_tries: int = 3,
    ) -> None:
        if kind not in ("thread", "process"):
            raise ValueError(f"kind must be 'thread' or 'process', got {kind!r}")
        if (synthesize is None) == (factory is None):
            raise ValueError("give either synthesize or factory")
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size must be >= 1 or None, got {batch_size}")
        if max_workers < 1 or max_tries < 1:
            raise ValueError(f"max_workers and max_tries must be >= 1, got {max_workers} and {max_tries}")
        super().__init__()
        self._idle = threading.Condition(self._lock)
        self._batch_size = batch_size
        self._max_workers = max_workers
        self._nice = nice
        self._max_tries = max_tries
        self._waiting: deque[_Batch] = deque()
        self._running = 0
        self._closing = self._closed = False
        self._generation = 0  # bumped by every restart of the process pool
        self._backbones: dict[tuple[int, int], dict[str, Any]] = {}  # (pool, pid) -> its latest totals
        self._payload = b""
        self._started: list[Future] = []
        self._synthesize: Synthesize | None = None
        if kind == "process":
            try:
                self._payload = pickle.dumps(("factory", factory) if factory is not None else ("call", synthesize))
            except Exception as exc:  # PicklingError, TypeError, AttributeError: a lambda, closure, lock ...
                logger.warning(
                    "synthesis runs in a thread of the trainer's process, not in its own process: %r cannot be "
                    "pickled (%s); pass a module-level function or a picklable factory to run it in a process",
                    factory if factory is not None else synthesize, exc)
                kind = "thread"
        self.kind = kind
        if kind == "thread":
            self._synthesize = synthesize if synthesize is not None else factory()  # type: ignore[misc]
        self._executor = self._new_executor()
        if kind == "process":
            self._start_processes(self._executor)

    # -- the pool ----------------------------------------------------------------------------------

    def _new_executor(self) -> Executor:
        if self.kind == "thread":
            return ThreadPoolExecutor(max_workers=self._max_workers, thread_name_prefix="rods-synth")
        return ProcessPoolExecutor(max_workers=self._max_workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=start_process, initargs=(self._nice, self._payload))

    def _start_processes(self, executor: Executor) -> None:
        """Start the worker processes now (they import and build while training goes on)."""
        self._started = []
        for _ in range(self._max_workers):
            try:
                self._started.append(executor.submit(ready))
            except (BrokenProcessPool, RuntimeError):  # a pool that broke already: the next batch restarts it
                return

    def wait_started(self, timeout: float | None = None) -> bool:
        """Block until the worker processes have started and built `synthesize`; False if `timeout` passed first.

        Training never needs this (it goes on while they start); a benchmark that times steady
        steps does.
        """
        return not wait(self._started, timeout).not_done

    def _call(self, seeds: list[Task]) -> tuple[list[Task], int, dict[str, Any] | None]:
        assert self._synthesize is not None
        return list(self._synthesize(seeds)), 0, None

    def _restart(self, generation: int) -> None:
        """Replace the broken pool `generation` with a fresh one (once, however many batches it broke)."""
        with self._lock:
            if self._closed or generation != self._generation:
                return
            self._generation += 1
            self.restarts += 1
            restarts = self.restarts
            # The broken pool has already failed its futures and stops its processes itself.
            self._executor = executor = self._new_executor()
        logger.warning("a synthesis worker process died; started a fresh pool (restart %d)", restarts)
        self._start_processes(executor)

    # -- batches -----------------------------------------------------------------------------------

    def _batches(self, seeds: list[Task]) -> list[list[Task]]:
        size = self._batch_size or len(seeds)
        return [seeds[i : i + size] for i in range(0, len(seeds), size)]

    def submit(self, seeds: Sequence[Task], step: int | None = None) -> None:
        """Queue seeds for synthesis; returns immediately."""
        seeds = list(seeds)
        if not seeds:
            return
        batches = [_Batch(b, step) for b in self._batches(seeds)]
        with self._lock:
            if self._closing or self._closed:
                logger.warning("synthesis worker is closed: %d seeds not synthesized", len(seeds))
                return
            self._pending.update(batches)
            self._waiting.extend(batches)
            self.submitted_seeds += len(seeds)
        self._dispatch()

    def _dispatch(self) -> None:
        """Start waiting batches while fewer than `max_workers` run (the pool only ever holds running ones)."""
        while True:
            with self._lock:
                if self._closed or not self._waiting or self._running >= self._max_workers:
                    return
                batch = self._waiting.popleft()
                self._running += 1
                executor, generation = self._executor, self._generation
            try:
                future: Future = executor.submit(run_batch if self.kind == "process" else self._call, batch.seeds)
            except (BrokenProcessPool, RuntimeError) as exc:  # the pool broke (or was replaced) meanwhile
                with self._idle:
                    self._running -= 1
                    current, closed = self._generation, self._closed
                    if closed:
                        self._pending.discard(batch)
                        self._idle.notify_all()
                    else:
                        self._waiting.appendleft(batch)
                if closed:
                    return
                if isinstance(exc, BrokenProcessPool):
                    self._restart(generation)
                elif current == generation:  # shut down (interpreter exit): nothing more runs
                    return
                continue
            future.add_done_callback(partial(self._ended, batch, generation))

    def _ended(self, batch: _Batch, generation: int, future: Future) -> None:
        try:
            tasks, pid, backbones = future.result()
        except BrokenProcessPool:
            self._crashed(batch, generation)
            return
        except (CancelledError, Exception) as exc:
            with self._lock:
                self._running -= 1
                closed = self._closed
                if not closed:
                    self.failures += 1
            if not closed:  # a failed batch must never reach the trainer
                logger.error("synthesis batch of %d seeds failed", len(batch.seeds), exc_info=exc)
            self._settle(batch)
            return
        with self._lock:
            self._running -= 1
            if backbones is not None:
                self._backbones[(generation, pid)] = backbones
        self._deliver(tasks)
        self._settle(batch)

    def _settle(self, batch: _Batch) -> None:
        """A batch is over (delivered, failed or dropped): start the next, wake `close(wait=True)`."""
        with self._idle:
            self._pending.discard(batch)
            self._idle.notify_all()
        self._dispatch()

    def _crashed(self, batch: _Batch, generation: int) -> None:
        """The batch's worker process died: run it again in a fresh pool, or drop it after `max_tries`."""
        with self._idle:
            self._running -= 1
            if self._closed:
                self._pending.discard(batch)
                self._idle.notify_all()
                return
            batch.crashes += 1
            dropped = batch.crashes >= self._max_tries
            if dropped:
                self.failures += 1
                self._pending.discard(batch)
                self._idle.notify_all()
            else:
                self._waiting.appendleft(batch)
        if dropped:
            logger.error("synthesis batch of %d seeds (%s, ...) dropped: its worker process died %d times",
                         len(batch.seeds), batch.seeds[0].id, batch.crashes)
        self._restart(generation)
        self._dispatch()

    # -- reports and shutdown ----------------------------------------------------------------------

    def backbones(self) -> dict[str, dict[str, Any]]:
        """Per synthesis model: variants tried, accepted, acceptance rate (what `Pipeline.report` gives).

        Empty when `synthesize` has no `report()`. From worker processes: the totals of each
        process's last finished batch, summed over processes.
        """
        if self.kind == "thread":
            return report_backbones(self._synthesize) or {}
        with self._lock:
            reports = list(self._backbones.values())
        if len(reports) == 1:
            return reports[0]
        merged: dict[str, dict[str, Any]] = {}
        for report in reports:
            for name, row in report.items():
                into = merged.setdefault(name, {"tried": 0, "accepted": 0})
                into["tried"] += row.get("tried", 0)
                into["accepted"] += row.get("accepted", 0)
        for row in merged.values():
            row["acceptance_rate"] = row["accepted"] / row["tried"] if row["tried"] else 0.0
        return dict(sorted(merged.items()))

    def close(self, wait: bool = True) -> None:
        """Stop: with `wait`, after every submitted batch is finished and handed on; else at once
        (batches not started are dropped, worker processes are stopped)."""
        if wait:
            with self._idle:
                self._closing = True
                while self._pending:
                    self._idle.wait()
        with self._lock:
            self._closed = True
            executor = self._executor
            for batch in self._waiting:
                self._pending.discard(batch)
            self._waiting.clear()
        processes = list((getattr(executor, "_processes", None) or {}).values()) if not wait else []
        executor.shutdown(wait=wait, cancel_futures=not wait)
        for process in processes:  # a batch in flight is not waited for (its result would go nowhere)
            if process.is_alive():
                process.terminate()
