"""The live-pool dataset (re-read each epoch, whole groups, fresh tasks first) and the engine-reporting reward."""

from types import SimpleNamespace

import pytest

from rods.engine import DataEngine, EngineConfig
from rods.envs.slices import turn_slices
from rods.integrations.trl.dataset import LivePool, live_pool_dataset
from rods.integrations.trl.rewards import EngineReward, groups
from rods.tasks import load_split


@pytest.fixture(scope="module")
def tasks():
    return turn_slices(load_split("train"), max_calls=1)[:10]


def test_dataset_rereads_the_pool_every_epoch(tasks):
    current = list(tasks[:3])
    pool = LivePool(lambda: list(current), tasks_per_step=2)
    dataset = live_pool_dataset(pool)
    first = [row["task_id"] for row in dataset]
    assert sorted(set(first)) == sorted(t.id for t in tasks[:3])
    assert len(first) == 4  # ceil(3 / 2) steps of 2 tasks: whole steps, the pool cycled
    current.append(tasks[5])  # "injected" at the epoch boundary
    second = [row["task_id"] for row in dataset]
    assert tasks[5].id in second and len(second) == 4
    assert pool.epochs_started == 2
    assert all(row["prompt"] == row["task_id"] for row in dataset)


def test_epochs_are_seeded_fixed_size_and_fresh_first(tasks):
    fresh_ids = {tasks[7].id, tasks[8].id}
    pool = LivePool(lambda: list(tasks), tasks_per_step=3, steps_per_epoch=2, seed=1,
                    fresh=lambda t: t.id in fresh_ids)
    ids = pool.epoch_ids(0, list(tasks))
    assert len(ids) == 6 and set(ids[:2]) == fresh_ids
    assert ids == pool.epoch_ids(0, list(tasks))  # deterministic per epoch
    assert ids != pool.epoch_ids(1, list(tasks))
    with pytest.raises(RuntimeError, match="empty"):
        pool.epoch_ids(0, [])


def test_groups_follow_consecutive_task_ids():
    assert groups(["a", "a", "b", "b", "a"], [1, 0, 0.5, 0.5, 1]) == [
        ("a", [1.0, 0.0]), ("b", [0.5, 0.5]), ("a", [1.0])
    ]


def test_reward_reports_each_group_to_the_engine(tasks):
    engine = DataEngine(EngineConfig(K=2, min_observations=2, burn_in_rollouts=1), tasks[:2])
    reward = EngineReward("progress", engine)
    a, b = tasks[0].id, tasks[1].id
    logged = {}
    out = reward(
        prompts=[a, a, b, b], completions=["", "", "", ""], task_id=[a, a, b, b],
        progress=[1.0, 0.0, 1.0, 1.0], binary=[1.0, 0.0, 1.0, 1.0], num_calls=[1, 0, 1, 1],
        parse_errors=[0, 0, 0, 0], trainer_state=SimpleNamespace(global_step=4),
        log_metric=lambda k, v: logged.__setitem__(k, v),
    )
    assert out == [1.0, 0.0, 1.0, 1.0]
    assert engine.zone(a) == "boundary" and engine.zone(b) == "mastered"
    assert engine.stats(a)["last_step"] == 5  # rewards of the step being trained
    assert logged["rods/parseable_fraction"] == 0.75
    binary = EngineReward("binary")
    assert binary(prompts=[a], completions=[""], progress=[0.5], binary=[0.0]) == [0.0]
    with pytest.raises(ValueError):
        EngineReward("accuracy")


@pytest.mark.parametrize("signal", [None, "progress", "binary"])
def test_binary_detection_engine_sees_binary_while_the_policy_trains_on_progress(tasks, signal):
    """The paper's binary-detection ablation: the ledger holds binary rewards, the trainer gets RP."""
    engine = DataEngine(EngineConfig(K=4, min_observations=4, burn_in_rollouts=1), tasks[:1])
    reward = EngineReward("progress", engine, engine_signal=signal)
    a = tasks[0].id
    progress, binary = [0.5, 0.75, 0.25, 0.5], [0.0, 0.0, 0.0, 0.0]  # partial progress, never solved
    out = reward(prompts=[a] * 4, completions=[""] * 4, task_id=[a] * 4, progress=progress, binary=binary,
                 trainer_state=SimpleNamespace(global_step=0))
    assert out == progress  # what GRPO optimizes is RP either way
    seen = binary if signal == "binary" else progress
    assert engine.stats(a)["mean"] == pytest.approx(sum(seen) / 4)
    assert engine.zone(a) == ("hard" if signal == "binary" else "boundary")
    with pytest.raises(ValueError, match="engine_signal"):
        EngineReward("progress", engine_signal="accuracy")
