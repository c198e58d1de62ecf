"""What runs inside a synthesis worker process (`rods.engine.synthesis_worker.PoolSynthesisWorker`).

The process lowers its priority, keeps torch to one CPU thread and builds its `synthesize`
callable once (`start_process`, the pool's initializer); each batch then runs through
`run_batch`. Module-level functions, so that the `spawn` start method can pickle them.
"""

from __future__ import annotations

import logging
import os
import pickle
import sys
from typing import Any

from rods.tasks import Task

logger = logging.getLogger(__name__)

#: The worker process's own state: its `synthesize` callable, or why it could not be built.
_PROCESS: dict[str, Any] = {}


def _limit_torch_threads() -> None:
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            torch.set_num_threads(1)
        except Exception:  # pragma: no cover - a torch without the knob
            pass


def start_process(nice: int, payload: bytes) -> None:
    """Worker-process initializer: lower the priority, one torch thread, build `synthesize` once.

    Never raises (a raising initializer would look like a crashed process and be
    restarted forever); a failure is kept and raised by each batch instead, so
    it is logged and counted as a failed batch.
    """
    if nice:
        try:
            os.nice(nice)
        except OSError as exc:  # pragma: no cover - a platform without nice
            logger.warning("synthesis worker: could not lower its priority: %s", exc)
    _limit_torch_threads()
    try:
        how, obj = pickle.loads(payload)
        _PROCESS["synthesize"] = obj() if how == "factory" else obj
    except BaseException as exc:  # reported by every batch, see `run_batch`
        _PROCESS["error"] = f"{type(exc).__name__}: {exc}"
        logger.exception("synthesis worker could not build its synthesize callable")
    _limit_torch_threads()  # the factory may have imported torch


def ready() -> int:
    """A no-op that makes the pool start its process(es) now, not on the first batch."""
    return os.getpid()


def report_backbones(synthesize: Any) -> dict[str, Any] | None:
    report = getattr(synthesize, "report", None)
    if report is None:
        return None
    try:
        return dict(report().get("backbones", {}))
    except Exception:  # a report is a nicety; the batch's candidates are what matters
        logger.exception("synthesis worker: report() failed")
        return None


def run_batch(seeds: list[Task]) -> tuple[list[Task], int, dict[str, Any] | None]:
    """One batch in a worker process: its candidates, this process's pid, its backbones' totals so far."""
    if "error" in _PROCESS:
        raise RuntimeError(f"the synthesis worker process could not build synthesize: {_PROCESS['error']}")
    synthesize = _PROCESS["synthesize"]
    tasks = list(synthesize(seeds))
    return tasks, os.getpid(), report_backbones(synthesize)
