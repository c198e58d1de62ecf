"""The live-pool dataset (re-read each epoch, whole groups, fresh tasks first) and the engine-reporting reward."""

from types import SimpleNamespace

import pytest

from rods.engine import DataEngine, EngineConfig
from rods.integrations.trl.dataset import LivePool, live_pool_dataset
from rods.integrations.trl.rewards import EngineReward, groups
from rods.tasks import load_split
from rods.envs.slices import turn_slices


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
