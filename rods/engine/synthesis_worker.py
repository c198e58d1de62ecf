"""Asynchronous synthesis: seeds go in, candidate tasks come out later (docs/design.md §3.5).

Training never waits for synthesis. A worker takes seed batches with `submit`
and returns at once; finished candidates are handed to a *sink* (the engine's
`submit`, set by `DataEngine.attach_worker`) as soon as each batch is done, or
collected with `collect()` when no sink is set. Failures are logged and
counted, never raised into the trainer.

`PoolSynthesisWorker` runs any callable `synthesize(seeds: list[Task]) ->
list[Task]` on a thread pool (default: LLM-bound work waits on I/O) or a
process pool (CPU-bound work; the callable must then be picklable, i.e. a
module-level function).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any, Protocol

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
            }


class PoolSynthesisWorker(AsyncSynthesisWorker):
    """Runs `synthesize` on seed batches in a thread or process pool.

    Args:
        synthesize: seeds -> accepted candidate tasks (already verified).
        max_workers: concurrent batches.
        kind: "thread" or "process".
        batch_size: seeds per call of `synthesize` (None: all seeds of a step together).
    """

    def __init__(
        self,
        synthesize: Synthesize,
        *,
        max_workers: int = 1,
        kind: str = "thread",
        batch_size: int | None = None,
    ) -> None:
        if kind not in ("thread", "process"):
            raise ValueError(f"kind must be 'thread' or 'process', got {kind!r}")
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size must be >= 1 or None, got {batch_size}")
        super().__init__()
        self._synthesize = synthesize
        self._batch_size = batch_size
        self._executor: Executor = (
            ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="rods-synth")
            if kind == "thread"
            else ProcessPoolExecutor(max_workers=max_workers)
        )

    def _batches(self, seeds: list[Task]) -> list[list[Task]]:
        size = self._batch_size or len(seeds)
        return [seeds[i : i + size] for i in range(0, len(seeds), size)]

    def _launch(self, batch: list[Task], step: int | None) -> tuple[Future, Future]:
        future = self._executor.submit(self._synthesize, batch)
        return future, future

    def close(self, wait: bool = True) -> None:
        self._executor.shutdown(wait=wait, cancel_futures=not wait)
