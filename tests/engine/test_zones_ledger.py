"""Reward ledger and zones: latest-K window, thresholds, minimum observations, first rewards."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from rods.engine import EngineConfig, RewardLedger, classify, phi


def make_ledger(**kw) -> RewardLedger:
    cfg = EngineConfig(**kw)
    return RewardLedger(K=cfg.K, alpha_minus=cfg.alpha_minus, alpha_plus=cfg.alpha_plus,
                        min_observations=cfg.min_observations, burn_in_rollouts=cfg.burn_in_rollouts)


def test_paper_defaults():
    cfg = EngineConfig()
    assert (cfg.K, cfg.alpha_minus, cfg.alpha_plus) == (16, 0.20, 0.85)
    assert cfg.max_injection_fraction == 0.20
    assert cfg.capacity == 400
    assert sum(cfg.quotas.values()) == cfg.max_seeds_per_step


@pytest.mark.parametrize(
    ("mean", "zone"),
    [(0.0, "hard"), (0.19, "hard"), (0.20, "boundary"), (0.5, "boundary"), (0.85, "boundary"),
     (0.86, "mastered"), (1.0, "mastered")],
)
def test_zone_thresholds(mean, zone):
    assert classify(mean, 16, alpha_minus=0.2, alpha_plus=0.85, min_observations=8) == zone


def test_unclassified_until_min_observations():
    assert classify(0.5, 7, alpha_minus=0.2, alpha_plus=0.85, min_observations=8) == "new"
    assert classify(0.5, 8, alpha_minus=0.2, alpha_plus=0.85, min_observations=8) == "boundary"


def test_phi_peaks_at_half():
    assert phi(0.5) == 1.0
    assert phi(0.0) == phi(1.0) == 0.0
    assert phi(0.25) == pytest.approx(0.75)


@given(st.lists(st.lists(st.floats(0, 1), min_size=1, max_size=20), min_size=1, max_size=10),
       st.integers(1, 16))
def test_window_holds_latest_k(groups, K):
    ledger = make_ledger(K=K, min_observations=1, burn_in_rollouts=1)
    ledger.add("t", "basic", "seed", 0)
    flat = []
    for step, group in enumerate(groups):
        ledger.observe("t", step, group)
        flat.extend(group)
    stats = ledger.get("t")
    assert list(stats.rewards) == flat[-K:]
    assert stats.n_rewards == len(flat)
    assert stats.n_groups == len(groups)
    assert stats.last_step == len(groups) - 1
    assert stats.mean == pytest.approx(sum(flat[-K:]) / len(flat[-K:]))
    m = stats.mean
    assert stats.variance == pytest.approx(sum((r - m) ** 2 for r in flat[-K:]) / len(flat[-K:]), abs=1e-12)
    assert stats.first_rewards == flat[:1]
    assert stats.zone == classify(stats.mean, len(flat), alpha_minus=0.2, alpha_plus=0.85, min_observations=1)


def test_first_rewards_are_the_first_burn_in_rollouts():
    ledger = make_ledger(burn_in_rollouts=4, min_observations=4)
    ledger.add("t", "basic", "synthetic", 3)
    ledger.observe("t", 4, [0.0, 0.5])
    assert ledger.get("t").first_mean(4) is None
    ledger.observe("t", 5, [1.0, 1.0, 1.0])
    assert ledger.get("t").first_rewards == [0.0, 0.5, 1.0, 1.0]
    assert ledger.get("t").first_mean(4) == pytest.approx(0.625)


@pytest.mark.parametrize("bad", [[], [1.5], [-0.1], [math.nan], ["x"]])
def test_bad_rewards_name_the_task(bad):
    from rods.engine.ledger import check_rewards

    with pytest.raises(ValueError, match="task-7"):
        check_rewards("task-7", bad)


@pytest.mark.parametrize(
    "kw",
    [{"alpha_minus": 0.9, "alpha_plus": 0.1}, {"quotas": {"basic": 9}}, {"quotas": {"other": 1}},
     {"min_observations": 0}, {"max_injection_fraction": 1.5}, {"quota_order": ("basic",)}],
)
def test_bad_config_is_a_clear_error(kw):
    with pytest.raises(ValueError, match="validation error for EngineConfig"):
        EngineConfig(**kw)


def test_config_round_trips_through_dict():
    cfg = EngineConfig(capacity=50, random_seeds=True, stale_after_steps=None)
    assert EngineConfig.from_dict(cfg.to_dict()) == cfg
    with pytest.raises(ValueError, match=r"capacty\s+Extra inputs are not permitted"):
        EngineConfig.from_dict({"capacty": 3})


@given(st.lists(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=2, max_size=4), min_size=1, max_size=40),
       st.integers(0, 45))
def test_lowest_variance_matches_a_full_sort(groups, k):
    from rods.engine.pool import lowest_variance

    ledger = make_ledger(K=4, min_observations=1, burn_in_rollouts=1)
    ids = [f"t{i:02d}" for i in range(len(groups))][::-1]
    for tid, group in zip(ids, groups):
        ledger.add(tid, "basic", "synthetic", 0)
        ledger.observe(tid, 0, group)
    expected = sorted(ids, key=lambda t: (ledger.get(t).variance, t))[:k]
    assert sorted(lowest_variance(ids, k, ledger)) == sorted(expected)
