"""The DataEngine facade: observe from threads, submit rules, epoch decisions, ablations, worker."""

from __future__ import annotations

import threading

import pytest

from rods.engine import DataEngine, EngineConfig, PoolSynthesisWorker

from engine_factory import make_seeds, make_task, variant


def small_config(**kw) -> EngineConfig:
    base = dict(K=8, min_observations=4, burn_in_rollouts=4, exclusion_window=3, max_seeds_per_step=4,
                quotas={"basic": 2, "miss_func": 1, "miss_param": 1}, capacity=10)
    base.update(kw)
    return EngineConfig(**base)


def test_observe_from_many_threads_loses_nothing():
    seeds = make_seeds(40)
    eng = DataEngine(small_config(), seeds)

    def work(offset: int) -> None:
        for i in range(200):
            eng.observe(i, seeds[(offset + i) % 40].id, [1.0, 0.0])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    total = sum(eng.stats(t.id)["n_rewards"] for t in seeds)
    assert total == 8 * 200 * 2
    assert sum(eng.metrics(0)["zones"].values()) == 40


def test_unknown_task_is_an_error_and_late_observations_are_ignored():
    seeds = make_seeds(12)
    eng = DataEngine(small_config(capacity=5, max_injection_fraction=1.0), seeds)
    with pytest.raises(KeyError, match="nope"):
        eng.observe(0, "nope", [0.5])
    with pytest.raises(ValueError, match=seeds[0].id):
        eng.observe(0, seeds[0].id, [2.0])
    v = variant(seeds[0], 1)
    eng.submit([v])
    assert eng.observe(0, v.id, [0.5]) is None  # queued, not active: ignored
    eng.on_epoch_end(1)
    eng.observe(2, v.id, [0.0] * 4)
    rep = eng.on_epoch_end(3)
    assert rep.retired == {v.id: "burn_in"}
    assert eng.observe(4, v.id, [0.5]) is None  # retired: ignored
    assert eng.metrics(4)["ignored_observations"] == 2


def test_submit_rejects_non_synthetic_known_and_duplicate_content():
    seeds = make_seeds(8)
    eng = DataEngine(small_config(), seeds)
    v1 = variant(seeds[0], 1)
    same_content = v1.model_copy(update={"id": "other-id"})
    res = eng.submit([v1, seeds[1], same_content, v1.model_dump()])
    assert res.accepted == [v1.id]
    assert "origin" in res.rejected[seeds[1].id]
    assert "same content" in res.rejected["other-id"] or "duplicate" in res.rejected["other-id"]
    assert eng.submit([v1]).rejected[v1.id] == "task id already queued"
    bad = eng.submit([{"id": "broken", "category": "base"}])
    assert "invalid task" in bad.rejected["broken"]


def test_queue_capacity_drops_the_oldest_and_logs_it():
    seeds = make_seeds(8)
    eng = DataEngine(small_config(queue_capacity=3), seeds)
    eng.submit([variant(seeds[0], i) for i in range(3)])
    res = eng.submit([variant(seeds[1], 9), variant(seeds[1], 10)])
    assert res.dropped == [f"{seeds[0].id}-v0", f"{seeds[0].id}-v1"]
    assert [t.id for t in eng.queued_tasks()] == [f"{seeds[0].id}-v2", f"{seeds[1].id}-v9", f"{seeds[1].id}-v10"]
    assert eng.retired()[f"{seeds[0].id}-v0"] == "queue_overflow"


def test_injection_is_staged_until_the_epoch_boundary_and_capped():
    seeds = make_seeds(20)
    eng = DataEngine(small_config(capacity=100, inject_order="oldest"), seeds)
    eng.submit([variant(seeds[i % 20], i) for i in range(30)])
    assert len(eng.active_tasks()) == 20  # nothing injected before the boundary
    rep = eng.on_epoch_end(5)
    assert len(rep.injected) == 4  # 20% of 20
    assert rep.injected == [f"{seeds[i].id}-v{i}" for i in range(4)]  # FIFO
    assert [t.id for t in eng.active_tasks()][-4:] == rep.injected
    assert len(eng.on_epoch_end(6).injected) == 4  # 20% of 24 = 4.8 -> 4


def test_newest_candidates_go_first_and_old_ones_expire():
    seeds = make_seeds(20)
    eng = DataEngine(small_config(capacity=100, candidate_max_age_steps=10), seeds)
    old = [variant(seeds[i], i) for i in range(3)]
    new = [variant(seeds[i], 10 + i) for i in range(6)]
    eng.submit(old, step=0)
    eng.submit(new, step=8)
    rep = eng.on_epoch_end(9)
    assert rep.injected == [t.id for t in reversed(new)][:4] and rep.expired == []
    rep = eng.on_epoch_end(11)  # the first batch is now 11 steps old
    assert sorted(rep.expired) == sorted(t.id for t in old)
    assert rep.injected == [new[1].id, new[0].id]
    assert all(eng.retired()[t.id] == "expired" for t in old)
    assert eng.queued_tasks() == []


def test_drift_and_staleness_retire_synthetic_tasks_never_seeds():
    seeds = make_seeds(20)
    eng = DataEngine(small_config(stale_after_steps=5, max_injection_fraction=1.0), seeds)
    vs = [variant(seeds[i], i) for i in range(4)]
    eng.submit(vs)
    eng.on_epoch_end(0)
    eng.observe(1, vs[0].id, [1.0] * 4)  # mastered
    eng.observe(1, vs[1].id, [0.5, 0.0, 0.0, 0.0] + [0.0] * 4)  # first mean 0.125 >= 0.1: not burn-in, but hard
    eng.observe(1, vs[2].id, [0.5] * 4)  # boundary
    for s in seeds:
        eng.observe(1, s.id, [1.0] * 8)  # seeds mastered too, but never retired
    rep = eng.on_epoch_end(3)
    assert rep.retired == {vs[0].id: "drift_mastered", vs[1].id: "drift_hard"}
    rep = eng.on_epoch_end(6)
    assert rep.retired == {vs[2].id: "stale", vs[3].id: "stale"}
    assert {t.id for t in eng.active_tasks()} == {t.id for t in seeds}


def test_capacity_prunes_lowest_variance_first():
    seeds = make_seeds(20)
    eng = DataEngine(small_config(capacity=3, max_injection_fraction=1.0, alpha_minus=0.0, alpha_plus=1.0), seeds)
    vs = [variant(seeds[i], i) for i in range(3)]
    eng.submit(vs)
    eng.on_epoch_end(0)
    eng.observe(1, vs[0].id, [0.5, 0.5, 0.5, 0.5])  # variance 0
    eng.observe(1, vs[1].id, [0.0, 1.0, 0.0, 1.0])  # variance .25
    eng.observe(1, vs[2].id, [0.25, 0.75, 0.25, 0.75])  # variance .0625
    eng.submit([variant(seeds[5], 50)])
    rep = eng.on_epoch_end(2)
    assert rep.retired == {vs[0].id: "capacity"}
    assert rep.injected == [f"{seeds[5].id}-v50"]
    assert rep.active_synthetic == 3


def test_no_retirement_ablation_keeps_everything_and_stops_at_capacity():
    seeds = make_seeds(20)
    eng = DataEngine(small_config(no_retirement=True, capacity=5, max_injection_fraction=1.0), seeds)
    vs = [variant(seeds[i], i) for i in range(8)]
    eng.submit(vs)
    eng.on_epoch_end(0)
    for v in vs[:5]:
        eng.observe(1, v.id, [1.0] * 8)
    rep = eng.on_epoch_end(500)
    assert rep.retired == {} and rep.injected == [] and rep.active_synthetic == 5


def boundary_engine(**kw) -> tuple[DataEngine, list]:
    seeds = make_seeds(24)
    eng = DataEngine(small_config(**kw), seeds)
    for s in seeds:
        eng.observe(0, s.id, [0.0, 1.0, 1.0, 0.0])
    return eng, seeds


def test_one_shot_selects_only_in_the_first_epoch_and_each_seed_once():
    eng, seeds = boundary_engine(one_shot=True, exclusion_window=0)
    chosen = []
    for step in range(10):
        chosen += [t.id for t in eng.select_seeds(step)]
    assert len(chosen) == len(set(chosen)) == 24
    eng.submit([variant(seeds[0], 1)])
    eng.on_epoch_end(10)
    for s in seeds:
        eng.observe(11, s.id, [0.0, 1.0, 1.0, 0.0])
    assert eng.select_seeds(11) == []


def test_select_records_event_and_metrics():
    eng, _ = boundary_engine()
    seeds = eng.select_seeds(1)
    assert len(seeds) == 4
    ev = [e for e in eng.events.recent_events if e["event"] == "select"][-1]
    assert [s["task_id"] for s in ev["seeds"]] == [t.id for t in seeds]
    m = eng.events.recent_metrics[-1]
    assert m["step"] == 1 and m["zones"]["boundary"] == 24
    assert eng.metrics(0)["informative_fraction"] == 1.0
    assert eng.metrics(0)["mean_phi"] == pytest.approx(1.0)


def synthesize_variants(seeds):
    """Module-level, so a process pool can pickle it."""
    return [make_task(f"{s.id}-syn", s.task_type, origin="synthetic", parent=s.id) for s in seeds]


def test_worker_runs_asynchronously_and_feeds_the_queue():
    """select_seeds returns while synthesis is still blocked; candidates arrive when it finishes."""
    started, release = threading.Event(), threading.Event()

    def blocked_synthesize(seeds):
        started.set()
        assert release.wait(timeout=60), "the test never released synthesis"
        return synthesize_variants(seeds)

    eng, _ = boundary_engine()
    worker = PoolSynthesisWorker(blocked_synthesize, max_workers=2, batch_size=2)
    eng.attach_worker(worker)
    seeds = eng.select_seeds(1)  # would never return if it waited for the blocked synthesis
    assert started.wait(timeout=60), "synthesis never started"
    assert not release.is_set() and eng.metrics(1)["queue"] == 0
    assert len(seeds) == 4
    release.set()
    worker.close(wait=True)  # both batches done and handed to the engine's sink
    assert {t.id for t in eng.queued_tasks()} == {f"{s.id}-syn" for s in seeds}
    assert eng.metrics(1)["queue"] == 4
    eng.close()


def failing_synthesize(seeds):
    raise RuntimeError("judge exploded")


def test_worker_failures_never_reach_the_trainer():
    worker = PoolSynthesisWorker(failing_synthesize)
    worker.submit(make_seeds(2))
    worker.close(wait=True)
    assert worker.failures == 1 and worker.collect() == []


def test_process_worker_collects_without_a_sink():
    worker = PoolSynthesisWorker(synthesize_variants, kind="process")
    worker.submit(make_seeds(3))
    worker.close(wait=True)
    assert sorted(t.id for t in worker.collect()) == [f"seed-000{i}-syn" for i in range(3)]


def test_static_baseline_selects_nothing():
    eng, _ = boundary_engine(capacity=0)
    assert eng.select_seeds(1) == []
