"""The synthesis worker's own process (docs/design.md §3.5): off the trainer's interpreter, at a lower
priority, and restarted when it dies, without losing or repeating a batch's candidates."""

from __future__ import annotations

import logging
import os
import signal
import time
from functools import partial
from pathlib import Path

import pytest

from rods.engine import DataEngine, EngineConfig, PoolSynthesisWorker

from engine_factory import make_seeds, make_task


def where_am_i(seeds):
    """Module-level (picklable): one variant per seed, its id naming the process and its niceness."""
    return [make_task(f"{s.id}-syn-{os.getpid()}-{os.nice(0)}", s.task_type, origin="synthetic", parent=s.id)
            for s in seeds]


def dies_once(marker: str, seeds):
    """SIGKILLs its own process on the first call (no marker yet), synthesizes on the next."""
    if not Path(marker).exists():
        Path(marker).write_text("died once")
        os.kill(os.getpid(), signal.SIGKILL)
    return [make_task(f"{s.id}-syn", s.task_type, origin="synthetic", parent=s.id) for s in seeds]


def dies_on_poison(seeds):
    """A batch holding the seed `poison` kills its worker every time; others are synthesized."""
    if any(s.id == "poison" for s in seeds):
        os.kill(os.getpid(), signal.SIGKILL)
    return [make_task(f"{s.id}-syn", s.task_type, origin="synthetic", parent=s.id) for s in seeds]


def sink_into(received: list):
    return lambda tasks: received.extend(tasks)


def wait_until(condition, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_synthesis_runs_in_its_own_lower_priority_process_and_feeds_the_engine():
    engine = DataEngine(EngineConfig(K=4, min_observations=4, burn_in_rollouts=4), make_seeds(4))
    worker = PoolSynthesisWorker(where_am_i, nice=5)
    assert worker.kind == "process"
    assert worker.wait_started(timeout=60)  # the process is up before any batch (a benchmark times from here)
    engine.attach_worker(worker)
    seeds = make_seeds(3)
    worker.submit(seeds, step=1)
    worker.close(wait=True)
    queued = engine.queued_tasks()
    assert sorted(t.provenance.parent_id for t in queued) == [s.id for s in seeds]
    (pid, niceness), = {tuple(int(part) for part in t.id.rsplit("-", 2)[1:]) for t in queued}
    assert pid != os.getpid()
    assert niceness == min(19, os.nice(0) + 5) and (niceness > os.nice(0) or os.nice(0) == 19)
    assert worker.counters()["synthesis_produced"] == 3 and worker.pending == 0
    engine.close()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_worker_killed_mid_batch_is_restarted_and_the_batch_delivered_once(tmp_path, workers):
    """The first batch to run kills its process; every batch's candidates still arrive, each once."""
    received: list = []
    worker = PoolSynthesisWorker(partial(dies_once, str(tmp_path / "died")), max_workers=workers, batch_size=1)
    worker.set_sink(sink_into(received))
    seeds = make_seeds(3)
    worker.submit(seeds)
    worker.close(wait=True)
    assert (tmp_path / "died").exists(), "the first try never ran"
    assert sorted(t.id for t in received) == [f"{s.id}-syn" for s in seeds]  # once each, nothing lost
    counters = worker.counters()
    assert counters["synthesis_restarts"] == 1 and counters["synthesis_failures"] == 0
    assert counters["synthesis_produced"] == 3 and counters["synthesis_pending"] == 0


def test_a_batch_that_always_kills_its_worker_is_dropped_and_a_later_one_still_works(caplog):
    received: list = []
    worker = PoolSynthesisWorker(dies_on_poison, max_tries=2)
    worker.set_sink(sink_into(received))
    with caplog.at_level(logging.ERROR, logger="rods.engine.synthesis_worker"):
        worker.submit([make_task("poison")])
        wait_until(lambda: worker.pending == 0)
    assert worker.failures == 1 and worker.restarts == 2 and received == []
    assert any("dropped" in r.getMessage() for r in caplog.records)
    worker.submit(make_seeds(2))
    worker.close(wait=True)
    assert sorted(t.id for t in received) == ["seed-0000-syn", "seed-0001-syn"]
    assert worker.counters() == {"synthesis_submitted_seeds": 3, "synthesis_produced": 2, "synthesis_failures": 1,
                                 "synthesis_pending": 0, "synthesis_restarts": 2}


def test_a_callable_that_cannot_be_pickled_runs_in_a_thread(caplog):
    received: list = []
    with caplog.at_level(logging.WARNING, logger="rods.engine.synthesis_worker"):
        worker = PoolSynthesisWorker(lambda seeds: where_am_i(seeds))
    assert worker.kind == "thread" and "cannot be pickled" in caplog.text
    worker.set_sink(sink_into(received))
    worker.submit(make_seeds(1))
    worker.close(wait=True)
    assert [t.id.rsplit("-", 2)[1] for t in received] == [str(os.getpid())]


def test_close_without_waiting_stops_a_busy_worker_process():
    worker = PoolSynthesisWorker(slow_synthesize)
    worker.submit(make_seeds(1))
    wait_until(lambda: worker._running == 1)
    start = time.monotonic()
    worker.close(wait=False)
    assert time.monotonic() - start < 10
    assert worker.failures == 0 and worker.restarts == 0


def slow_synthesize(seeds):
    time.sleep(60)
    return []


def broken_factory():
    raise RuntimeError("no backend")


def test_a_worker_process_that_cannot_build_synthesize_fails_its_batches_without_a_restart_loop():
    worker = PoolSynthesisWorker(factory=broken_factory)
    worker.submit(make_seeds(1))
    worker.submit(make_seeds(1))
    worker.close(wait=True)
    assert worker.failures == 2 and worker.restarts == 0 and worker.collect() == []


def test_the_training_worker_builds_the_pipeline_in_its_process_and_reports_its_backbones():
    from rods.tasks import load_split
    from rods.train.config import SynthesisSettings
    from rods.train.run import make_synthesis_worker

    seeds = [t for t in load_split("train") if t.category == "miss_param"][:2]
    worker = make_synthesis_worker(SynthesisSettings(backend="template", options={"per_seed": 1}))
    assert worker.kind == "process" and worker._synthesize is None  # nothing synthesizes in this process
    worker.submit(seeds)
    worker.close(wait=True)
    assert worker.failures == 0
    accepted = worker.collect()
    assert accepted and {t.provenance.parent_id for t in accepted} <= {s.id for s in seeds}
    assert worker.backbones()["template"]["tried"] == 2
    assert worker.backbones()["template"]["accepted"] == len(accepted)
