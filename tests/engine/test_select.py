"""Boundary seed selection: φ ranking, per-type quotas, redistribution, exclusion window, ablations."""

from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st

from rods.engine import TASK_TYPES, BoundarySeedSelector, EngineConfig, phi


def selector_with(means: dict[str, tuple[str, float]], **kw) -> BoundarySeedSelector:
    sel = BoundarySeedSelector(EngineConfig(**kw))
    for tid, (task_type, mean) in means.items():
        sel.add(tid, task_type)
        zone = "boundary" if 0.2 <= mean <= 0.85 else ("hard" if mean < 0.2 else "mastered")
        sel.update(tid, zone, mean)
    return sel


def test_ranks_by_phi_within_type():
    means = {"a": ("basic", 0.3), "b": ("basic", 0.5), "c": ("basic", 0.8), "d": ("basic", 0.55),
             "e": ("basic", 0.95), "f": ("basic", 0.1)}
    sel = selector_with(means, max_seeds_per_step=2, quotas={"basic": 2, "miss_func": 0, "miss_param": 0},
                        redistribute_unused_quota=False)
    assert sel.select(0, random.Random(0)) == ["b", "d"]
    # only boundary tasks are seeds: e (mastered) and f (hard) never come out
    assert sel.select(0, random.Random(0)) == ["a", "c"]
    assert sel.select(0, random.Random(0)) == []


def test_ties_break_by_task_id():
    means = {tid: ("miss_func", 0.5) for tid in ["z", "m", "a"]}
    sel = selector_with(means, max_seeds_per_step=2, quotas={"basic": 0, "miss_func": 2, "miss_param": 0},
                        redistribute_unused_quota=False)
    assert sel.select(0, random.Random(0)) == ["a", "m"]


def test_unused_quota_flows_round_robin_in_quota_order():
    means = {f"b{i}": ("basic", 0.5) for i in range(10)}
    means.update({"f0": ("miss_func", 0.5)})
    means.update({f"p{i}": ("miss_param", 0.5) for i in range(10)})
    sel = selector_with(means, max_seeds_per_step=8)  # quotas 4/2/2
    chosen = sel.select(0, random.Random(0))
    types = [means[t][0] for t in chosen]
    # first pass 4 basic + 1 miss_func + 2 miss_param; the free slot goes to basic (first in order)
    assert types.count("basic") == 5 and types.count("miss_func") == 1 and types.count("miss_param") == 2


def test_without_redistribution_types_keep_their_quota():
    means = {f"b{i}": ("basic", 0.5) for i in range(10)}
    sel = selector_with(means, max_seeds_per_step=8, redistribute_unused_quota=False)
    assert len(sel.select(0, random.Random(0))) == 4


def test_zone_change_removes_a_candidate():
    sel = selector_with({"a": ("basic", 0.5), "b": ("basic", 0.4)}, max_seeds_per_step=8)
    sel.update("a", "mastered", 0.9)
    assert sel.select(0, random.Random(0)) == ["b"]


def test_random_ablation_is_deterministic_for_a_seed_and_ignores_zones():
    means = {f"t{i}": (TASK_TYPES[i % 3], 0.95 if i % 2 else 0.5) for i in range(60)}
    runs = []
    for _ in range(2):
        sel = selector_with(means, random_seeds=True)
        rng = random.Random(7)
        runs.append([sel.select(s, rng) for s in range(5)])
    assert runs[0] == runs[1]
    picked = {t for step in runs[0] for t in step}
    assert any(means[t][1] == 0.95 for t in picked)  # mastered tasks can be drawn too


ops = st.lists(
    st.tuples(st.integers(0, 29), st.sampled_from(["boundary", "hard", "mastered"]), st.floats(0.2, 0.85)),
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(
    groups=st.lists(ops, min_size=1, max_size=12),
    quotas=st.tuples(st.integers(0, 4), st.integers(0, 3), st.integers(0, 3)),
    extra=st.integers(0, 3),
    window=st.integers(0, 6),
    redistribute=st.booleans(),
    random_seeds=st.booleans(),
)
def test_quotas_and_exclusion_window_hold(groups, quotas, extra, window, redistribute, random_seeds):
    """Whatever the observations, each step respects M, M_τ and the exclusion window c."""
    q = dict(zip(TASK_TYPES, quotas))
    M = sum(quotas) + extra
    if M == 0:
        return
    cfg = EngineConfig(max_seeds_per_step=M, quotas=q, exclusion_window=window,
                       redistribute_unused_quota=redistribute, random_seeds=random_seeds)
    sel = BoundarySeedSelector(cfg)
    types = {f"t{i}": TASK_TYPES[i % 3] for i in range(30)}
    for tid, tt in types.items():
        sel.add(tid, tt)
    zones: dict[str, tuple[str, float]] = {}
    last_chosen: dict[str, int] = {}
    rng = random.Random(0)
    for step, group in enumerate(groups):
        for i, zone, mean in group:
            tid = f"t{i}"
            sel.update(tid, zone, mean)
            zones[tid] = (zone, mean)
        chosen = sel.select(step, rng)
        assert len(chosen) == len(set(chosen)) <= M
        per_type = {t: sum(types[c] == t for c in chosen) for t in TASK_TYPES}
        if not redistribute:
            assert all(per_type[t] <= q[t] for t in TASK_TYPES)
        for c in chosen:
            if c in last_chosen:
                assert step >= last_chosen[c] + window, "chosen again inside the exclusion window"
            last_chosen[c] = step
            if not random_seeds:
                assert zones[c][0] == "boundary"
        if not random_seeds:
            # the chosen are the best φ among eligible ones of their type (no better one skipped)
            eligible = {
                t for t, (z, _) in zones.items()
                if z == "boundary" and (t not in last_chosen or last_chosen[t] + window <= step or t in chosen)
            }
            for t in TASK_TYPES:
                picked = [c for c in chosen if types[c] == t]
                rest = [e for e in eligible if types[e] == t and e not in chosen]
                if picked and rest:
                    assert min(phi(zones[c][1]) for c in picked) >= max(phi(zones[e][1]) for e in rest) - 1e-12
                slots_left = len(chosen) < M if redistribute else per_type[t] < q[t]
                if rest and slots_left:
                    raise AssertionError(f"type {t} had eligible boundary tasks left but a free slot")
