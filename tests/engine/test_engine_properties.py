"""Property tests of the engine facade over random operation sequences (hypothesis).

After every epoch boundary: injection <= 20% of the active pool, human seeds
all active, synthesized tasks <= capacity, retirement reasons legal; at the
end: the same operations give the same decisions, and save/load gives the
same state.
"""

from __future__ import annotations

import math
import tempfile

from hypothesis import event, given, settings, strategies as st

from rods.engine import DataEngine, EngineConfig

from engine_factory import make_seeds, variant

REWARDS = st.one_of(
    st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]), min_size=1, max_size=6),
    st.sampled_from([[0.0] * 4, [1.0] * 4, [0.5] * 4]),
)
OP = st.one_of(
    st.tuples(st.just("obs"), st.integers(0, 10_000), REWARDS),
    st.tuples(st.just("step"), st.just(0), st.just([])),
    st.tuples(st.just("submit"), st.integers(1, 6), st.just([])),
    st.tuples(st.just("epoch"), st.just(0), st.just([])),
)
CONFIGS = st.fixed_dictionaries({
    "capacity": st.sampled_from([0, 3, 8, 50]),
    "min_observations": st.integers(1, 4),
    "burn_in_rollouts": st.integers(1, 4),
    "burn_in_threshold": st.sampled_from([0.0, 0.1, 0.3]),
    "stale_after_steps": st.sampled_from([None, 3, 10]),
    "exclusion_window": st.integers(0, 4),
    "K": st.just(4),
    "max_injection_fraction": st.sampled_from([0.2, 0.5]),
    "no_retirement": st.booleans(),
    "random_seeds": st.booleans(),
    "one_shot": st.booleans(),
    "queue_capacity": st.sampled_from([None, 5]),
    "inject_order": st.sampled_from(["newest", "oldest"]),
    "candidate_max_age_steps": st.sampled_from([None, 0, 3]),
    "max_seeds_per_step": st.just(4),
    "quotas": st.just({"basic": 2, "miss_func": 1, "miss_param": 1}),
})


def run_ops(cfg: EngineConfig, ops, run_dir=None):
    seeds = make_seeds(12)
    seed_ids = {t.id for t in seeds}
    eng = DataEngine(cfg, seeds, run_dir=run_dir)
    step, n = 0, 0
    log = []
    for kind, arg, rewards in ops:
        if kind == "obs":
            active = eng.active_ids()
            tid = active[-1 - arg % min(len(active), 4)]  # mostly the newest (synthesized) tasks
            eng.observe(step, tid, rewards)
        elif kind == "step":
            seeds_now = eng.select_seeds(step)
            log.append(("select", step, [t.id for t in seeds_now]))
            step += 1
        elif kind == "submit":
            pool = eng.active_tasks()
            cands = []
            for _ in range(arg):
                n += 1
                cands.append(variant(pool[(n * 7) % len(pool)], n, step))
            res = eng.submit(cands)
            log.append(("submit", res.accepted, sorted(res.rejected), res.dropped))
        else:
            before = len(eng.active_ids())
            before_synth = eng.metrics(step)["active_synthetic"]
            stats_before = {t: eng.stats(t) for t in eng.active_ids()}
            queued_before = [t.id for t in eng.queued_tasks()]
            rep = eng.on_epoch_end(step)
            log.append(("epoch", rep.to_dict()))
            active = eng.active_ids()
            assert seed_ids <= set(active), "a human seed was retired"
            assert not (set(rep.retired) & seed_ids)
            assert len(active) == len(set(active))
            assert len(rep.injected) <= math.floor(cfg.max_injection_fraction * (before - len(rep.retired)) + 1e-9)
            assert rep.active_synthetic <= max(cfg.capacity, before_synth if cfg.no_retirement else 0)
            assert rep.active_synthetic <= cfg.capacity or cfg.no_retirement
            if cfg.no_retirement:
                assert not rep.retired
            assert set(rep.expired) <= set(queued_before) and not set(rep.expired) & set(rep.injected)
            assert set(rep.injected) <= set(queued_before)
            if rep.expired:
                event("expired")
            if rep.injected:
                event("injected")
            for tid, reason in rep.retired.items():
                event(f"retired: {reason}")
                s = stats_before[tid]
                if reason == "drift_mastered":
                    assert s["zone"] == "mastered"
                elif reason == "drift_hard":
                    assert s["zone"] == "hard"
                elif reason == "burn_in":
                    first = s["first_rewards"]
                    assert len(first) == cfg.burn_in_rollouts
                    assert sum(first) / len(first) < cfg.burn_in_threshold
                elif reason == "stale":
                    last = s["last_step"] if s["last_step"] is not None else s["entry_step"]
                    assert step - last >= cfg.stale_after_steps
                else:
                    assert reason == "capacity"
    return eng, log


@settings(max_examples=40, deadline=None)
@given(CONFIGS, st.lists(OP, min_size=40, max_size=150))
def test_invariants_determinism_and_save_load(cfg_kw, ops):
    cfg = EngineConfig(**cfg_kw)
    eng1, log1 = run_ops(cfg, ops)
    eng2, log2 = run_ops(cfg, ops)
    assert log1 == log2, "decisions differ for the same seed and operations"
    assert eng1.state_dict() == eng2.state_dict()
    with tempfile.TemporaryDirectory() as d:
        eng1.save(d)
        again = DataEngine.resume(d)
        assert again.state_dict() == eng1.state_dict()
        again.close()


@settings(max_examples=15, deadline=None)
@given(CONFIGS, st.lists(OP, min_size=30, max_size=80))
def test_persistent_engine_resumes_identically(cfg_kw, ops):
    """With a run_dir, closing and resuming gives the same state, and the same next decisions."""
    cfg = EngineConfig(**cfg_kw)
    with tempfile.TemporaryDirectory() as d:
        eng, _ = run_ops(cfg, ops, run_dir=d)
        state = eng.state_dict()
        eng.close()
        resumed = DataEngine.resume(d)
        assert resumed.state_dict() == state
        memory, _ = run_ops(cfg, ops)
        assert memory.state_dict() == state
        for step in range(1000, 1003):
            assert [t.id for t in resumed.select_seeds(step)] == [t.id for t in memory.select_seeds(step)]
        assert resumed.on_epoch_end(1003).to_dict() == memory.on_epoch_end(1003).to_dict()
        resumed.close()
