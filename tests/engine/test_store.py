"""Persistence: atomic saves, epoch decisions committed before they apply, resume checks."""

from __future__ import annotations

import pytest

from rods.engine import DataEngine, EngineConfig
from rods.engine.store import EngineStore

from engine_factory import make_seeds, variant


def cfg(**kw):
    base = dict(K=8, min_observations=4, burn_in_rollouts=4, max_injection_fraction=1.0, capacity=10)
    base.update(kw)
    return EngineConfig(**base)


def busy_engine(run_dir) -> DataEngine:
    seeds = make_seeds(12)
    eng = DataEngine(cfg(), seeds, run_dir=run_dir)
    eng.submit([variant(seeds[i], i) for i in range(6)])
    eng.on_epoch_end(0)
    for step in range(1, 4):
        for i, t in enumerate(eng.active_tasks()):
            eng.observe(step, t.id, [float((i + step) % 3 == 0), 0.5, 1.0, 0.0])
        eng.select_seeds(step)
    return eng


def test_a_crash_mid_save_leaves_the_previous_state(tmp_path, monkeypatch):
    eng = busy_engine(tmp_path)
    eng.save()
    saved = eng.state_dict()
    for t in eng.active_tasks():
        eng.observe(9, t.id, [1.0, 1.0])

    def boom(*a, **k):
        raise OSError("disk vanished mid-write")

    monkeypatch.setattr(EngineStore, "_write_meta", staticmethod(boom))
    with pytest.raises(OSError):
        eng.save()
    monkeypatch.undo()
    resumed = DataEngine.resume(tmp_path)
    assert resumed.state_dict() == saved
    resumed.close()


def test_epoch_decisions_apply_only_after_they_are_committed(tmp_path, monkeypatch):
    eng = busy_engine(tmp_path)
    eng.submit([variant(eng.active_tasks()[0], 99)])
    before = eng.state_dict()

    def boom(*a, **k):
        raise OSError("commit failed")

    monkeypatch.setattr(EngineStore, "commit_epoch", boom)
    with pytest.raises(OSError):
        eng.on_epoch_end(5)
    assert eng.state_dict() == before, "memory changed although the decisions were not durable"
    monkeypatch.undo()
    rep = eng.on_epoch_end(5)
    assert rep.injected
    state = eng.state_dict()
    eng.close()
    assert DataEngine.resume(tmp_path).state_dict() == state


def test_snapshot_keeps_retired_tasks_and_their_bodies(tmp_path):
    eng = busy_engine(tmp_path / "live")
    for t in eng.active_tasks():
        eng.observe(4, t.id, [1.0] * 8)
    rep = eng.on_epoch_end(4)
    assert rep.retired
    tid = next(iter(rep.retired))
    eng.save(tmp_path / "snap")
    snap = DataEngine.resume(tmp_path / "snap")
    assert snap.state_dict() == eng.state_dict()
    assert snap.retired()[tid] == rep.retired[tid]
    assert snap.task(tid).id == tid
    # a snapshot never collides with the retired ids when new candidates arrive
    assert snap.submit([eng.task(tid)]).rejected[tid] == "task id already retired"
    snap.close()
    eng.close()


def test_resume_checks_the_seeds_and_the_directory(tmp_path):
    DataEngine(cfg(), make_seeds(8), run_dir=tmp_path).close()
    with pytest.raises(ValueError, match="do not match"):
        DataEngine(cfg(), make_seeds(9), run_dir=tmp_path)
    again = DataEngine(cfg(), make_seeds(8), run_dir=tmp_path)  # same seeds: resumes
    assert len(again.active_tasks()) == 8
    again.close()
    with pytest.raises(FileNotFoundError):
        DataEngine.resume(tmp_path / "missing")
    with pytest.raises(ValueError, match="seed tasks"):
        DataEngine(cfg(), [], run_dir=tmp_path / "empty")


def test_events_and_metrics_are_written_as_jsonl(tmp_path):
    from rods.engine.events import read_jsonl

    eng = busy_engine(tmp_path)
    eng.on_epoch_end(4)
    eng.close()
    events = read_jsonl(tmp_path / "events.jsonl")
    kinds = {e["event"] for e in events}
    assert {"submit", "inject", "select", "epoch_end"} <= kinds
    metrics = read_jsonl(tmp_path / "metrics.jsonl")
    assert [m["step"] for m in metrics if not m.get("epoch_end")] == [1, 2, 3]
    with open(tmp_path / "events.jsonl", "a") as fh:
        fh.write('{"event": "torn')  # a crash mid-line
    assert len(read_jsonl(tmp_path / "events.jsonl")) == len(events)


def test_persistence_round_trips_the_engine_state_alone(tmp_path):
    """What persistence writes from an `EngineState` restores to an equal one, in a store or a snapshot file."""
    from rods.engine import EngineState, persistence

    eng = busy_engine(tmp_path / "run")
    eng.save()
    live = persistence.state_dict(eng.state)
    store = EngineStore(tmp_path / "run" / "engine.sqlite")
    try:
        restored = persistence.restore(store.load(), None, None, tmp_path / "run")
    finally:
        store.close()
    assert isinstance(restored, EngineState) and persistence.state_dict(restored) == live
    snapshot = persistence.save(eng.state, None, tmp_path / "copy.sqlite")
    copy = EngineStore(snapshot)
    try:
        again = persistence.restore(copy.load(), None, None, snapshot)
    finally:
        copy.close()
    assert persistence.state_dict(again) == live
    assert again.metrics(3)["zones"] == eng.metrics(3)["zones"]
    eng.close()
