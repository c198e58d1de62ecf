"""TrainerCallbacks that drive the data engine from TRL's training loop.

* after every optimizer step: `engine.select_seeds(step)` (the attached
  synthesis worker receives the seeds and works in the background; the step
  never waits for it);
* at every epoch boundary: `engine.on_epoch_end(step)` (retire, inject), so the
  next epoch's dataset reads the refreshed pool;
* at every checkpoint: the engine's full state is written next to the
  trainer's (`checkpoint-N/engine/engine.sqlite`), so both resume together;
* every log: TRL's metrics appended to the run's `trainer_log.jsonl`.
"""

from __future__ import annotations

import json
import logging
import time
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
    """

    def __init__(self, engine: Any, on_epoch: Any = None) -> None:
        self.engine = engine
        self.on_epoch = on_epoch
        self.reports: list[Any] = []
        self.select_seconds = 0.0
        self.selected = 0

    def on_step_end(self, args, state, control, **kwargs):
        start = time.perf_counter()
        seeds = self.engine.select_seeds(state.global_step)
        self.selected += len(seeds)
        self.select_seconds += time.perf_counter() - start
        return control

    def on_epoch_end(self, args, state, control, **kwargs):
        report = self.engine.on_epoch_end(state.global_step)
        self.reports.append(report)
        log.info(
            "epoch boundary at step %d: injected %d, retired %d, active %d (%d synthetic), queue %d",
            state.global_step, len(report.injected), len(report.retired), report.active,
            report.active_synthetic, report.queue,
        )
        if self.on_epoch is not None:
            self.on_epoch(report)
        return control

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
    """Wall time of each optimizer step (for the overhead benchmark and progress output)."""

    def __init__(self) -> None:
        self.durations: list[float] = []
        self._start: float | None = None

    def on_step_begin(self, args, state, control, **kwargs):
        self._start = time.perf_counter()
        return control

    def on_step_end(self, args, state, control, **kwargs):
        if self._start is not None:
            self.durations.append(time.perf_counter() - self._start)
        return control
