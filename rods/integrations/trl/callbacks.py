"""TrainerCallbacks that drive the data engine from TRL's training loop.

* after every optimizer step: `engine.select_seeds(step)` (the attached
  synthesis worker receives the seeds and works in the background; the step
  never waits for it);
* at every epoch boundary: `engine.on_epoch_end(step)` (retire, inject), so the
  next epoch's dataset reads the refreshed pool. The boundary is handled at the
  epoch's last optimizer step (known from the live pool), before that step's
  checkpoint is written, so a checkpoint never misses a boundary it follows;
* at every checkpoint: the engine's full state is written next to the
  trainer's (`checkpoint-N/engine/engine.sqlite`), so both resume together;
* every log: TRL's metrics appended to the run's `trainer_log.jsonl`.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

log = logging.getLogger(__name__)

#: Where a checkpoint keeps the engine's snapshot.
ENGINE_SUBDIR = "engine"


class EngineCallback(TrainerCallback):
    """Seed selection each step, pool refresh each epoch, engine snapshot with each checkpoint.

    Args:
        engine: the `DataEngine`.
        on_epoch: optional `f(EpochReport)` (e.g. to print what was injected).
        wait_for: optional synthesis worker whose in-flight batches an epoch boundary
            waits for (demos and tests; by default training never waits).
        pool: the `LivePool` feeding the trainer; with it the boundary is taken at
            the epoch's last step (else at the trainer's `on_epoch_end`).
    """

    def __init__(
        self, engine: Any, on_epoch: Any = None, wait_for: Any = None, wait_timeout_s: float = 600.0,
        pool: Any = None,
    ) -> None:
        self.engine = engine
        self.pool = pool
        self._steps_in_epoch = 0
        self.on_epoch = on_epoch
        self.wait_for = wait_for
        self.wait_timeout_s = wait_timeout_s
        self.waited_seconds = 0.0
        self.reports: list[Any] = []
        self.select_seconds = 0.0
        self.boundary_seconds = 0.0
        self.selected = 0

    def on_step_end(self, args, state, control, **kwargs):
        start = time.perf_counter()
        seeds = self.engine.select_seeds(state.global_step)
        self.selected += len(seeds)
        self.select_seconds += time.perf_counter() - start
        if self.pool is not None:
            self._steps_in_epoch += 1
            if self.pool.epoch_steps is not None and self._steps_in_epoch >= self.pool.epoch_steps:
                self._boundary(state)
        return control

    def on_epoch_begin(self, args, state, control, **kwargs):
        self._steps_in_epoch = 0
        return control

    def on_epoch_end(self, args, state, control, **kwargs):
        if self.pool is None:
            self._boundary(state)
        return control

    def _boundary(self, state) -> None:
        self._steps_in_epoch = 0
        start = time.perf_counter()
        if self.wait_for is not None:
            start = time.perf_counter()
            while self.wait_for.pending and time.perf_counter() - start < self.wait_timeout_s:
                time.sleep(0.05)
            self.waited_seconds += time.perf_counter() - start
        waited = time.perf_counter() - start
        report = self.engine.on_epoch_end(state.global_step)
        self.boundary_seconds += time.perf_counter() - start - waited
        self.reports.append(report)
        log.info(
            "epoch boundary at step %d: injected %d, retired %d, active %d (%d synthetic), queue %d",
            state.global_step, len(report.injected), len(report.retired), report.active,
            report.active_synthetic, report.queue,
        )
        if self.on_epoch is not None:
            self.on_epoch(report)

    def on_save(self, args, state, control, **kwargs):
        checkpoint = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        if checkpoint.is_dir():
            self.engine.save(checkpoint / ENGINE_SUBDIR)
        else:  # pragma: no cover - transformers always writes it before on_save
            log.warning("no checkpoint directory %s; engine state not saved with it", checkpoint)
        return control


class JsonlMetricsCallback(TrainerCallback):
    """Appends every TRL log record (with its step) to a JSONL file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs:
            record = {"step": state.global_step, "epoch": state.epoch, **logs}
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(record, default=float) + "\n")
        return control


class StepTimer(TrainerCallback):
    """Wall time of each optimizer step, and how it splits (for the benchmarks, the GPU check and progress output).

    `sources` name running totals of seconds (e.g. the rollout's generation time); each step
    records how much each grew during it in `splits`, with the rest of the step as ``training``
    (TRL's log-probabilities, the backward pass and the optimizer).
    """

    def __init__(self, sources: dict[str, Callable[[], float]] | None = None) -> None:
        self.durations: list[float] = []
        self.splits: list[dict[str, float]] = []
        self.sources = dict(sources or {})
        self._start: float | None = None
        self._totals: dict[str, float] = {}

    def on_step_begin(self, args, state, control, **kwargs):
        self._start = time.perf_counter()
        self._totals = {name: read() for name, read in self.sources.items()}
        return control

    def on_step_end(self, args, state, control, **kwargs):
        if self._start is not None:
            duration = time.perf_counter() - self._start
            self.durations.append(duration)
            split = {name: read() - self._totals.get(name, 0.0) for name, read in self.sources.items()}
            if split:
                split["training"] = max(0.0, duration - sum(split.values()))
                self.splits.append({name: round(value, 4) for name, value in split.items()})
        return control
