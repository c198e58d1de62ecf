"""The engine service and the pool dataset in one process (no Ray cluster): fast checks of their logic."""

from __future__ import annotations

import pytest

pytest.importorskip("ray", reason="ray is not installed (scripts/install_verl_cpu.sh)")

from rods.integrations.verl.dataset import RodsTaskDataset  # noqa: E402
from rods.integrations.verl.engine_actor import EngineService  # noqa: E402
from rods.integrations.verl.settings import RodsVerlSettings  # noqa: E402
from rods.tasks import read_task_source  # noqa: E402

from verl_variants import make_variant  # noqa: E402

ENGINE = {"K": 4, "min_observations": 4, "burn_in_rollouts": 4, "exclusion_window": 1}


@pytest.fixture
def seeds(train_tasks):
    return train_tasks[:10]


@pytest.fixture
def service(seeds, tmp_path):
    svc = EngineService(RodsVerlSettings(run_dir=str(tmp_path / "run"), engine=dict(ENGINE)).to_dict(), seeds)
    yield svc
    svc.close()


def test_rewards_are_observed_once_per_complete_group(service, seeds):
    tid = seeds[0].id
    service.begin_step(1)
    for reward in (1.0, 0.0, 1.0):
        assert service.report("uid-a", tid, reward, 4) is None
    assert service.stats(tid)["n_groups"] == 0
    assert service.report("uid-a", tid, 0.0, 4) == "boundary"
    assert service.stats(tid)["rewards"] == [1.0, 0.0, 1.0, 0.0] and service.stats(tid)["n_groups"] == 1
    service.report("uid-b", tid, 1.0, 4)
    with pytest.raises(ValueError, match="mixes tasks"):
        service.report("uid-b", seeds[1].id, 1.0, 4)


def test_a_step_end_flushes_partial_groups_selects_seeds_once(service, seeds):
    service.begin_step(1)
    for i in range(4):
        service.report("g", seeds[0].id, float(i % 2), 4)  # boundary: mean 0.5
    service.report("short", seeds[1].id, 1.0, 4)  # one trajectory of four came back
    assert service.begin_step(2) == 1  # the boundary seed went to selection
    assert service.stats(seeds[1].id)["rewards"] == [1.0]
    assert service.metrics()["partial_groups"] == 1
    assert service.begin_step(2) == 0 and service.begin_step(1) == 0  # idempotent, never backwards
    assert service.current_step() == 2
    assert service.report("late", "not-a-task", 1.0, 1) is None  # unknown ids are logged, not raised


def test_resume_from_run_dir_without_seeds(service, seeds, tmp_path):
    service.begin_step(1)
    for r in (1.0, 0.0, 0.0, 0.0):
        service.report("g", seeds[2].id, r, 4)
    service.begin_step(2)  # flushes the ledger
    before = service.state_dict()
    service.close()
    again = EngineService(RodsVerlSettings(run_dir=str(tmp_path / "run"), engine=dict(ENGINE)).to_dict())
    assert again.state_dict() == before and again.current_step() >= 1
    again.close()


def steps(loader, dataset):
    """Iterate one epoch as verl's trainer does: a batch per step, then `on_batch_end`."""
    for batch in loader:
        yield batch
        dataset.on_batch_end(batch)


def test_pool_dataset_epoch_boundary_in_process(service, seeds):
    from torch.utils.data import DataLoader
    from torchdata.stateful_dataloader.sampler import RandomSampler

    config = {"train_batch_size": 3, "gen_batch_size": None}
    dataset = RodsTaskDataset("rods://pool", None, config, engine=service)
    loader = DataLoader(dataset, batch_size=3, drop_last=True, sampler=RandomSampler(dataset), collate_fn=list)
    first = []
    for batch in steps(loader, dataset):
        first += [row["extra_info"]["task_id"] for row in batch]
        if len(first) == 6:  # synthesis delivers mid-epoch; nothing changes before the epoch's last step
            service.submit([make_variant(seeds[0], 1), make_variant(seeds[1], 1)])
            assert len(dataset) == 10 and dataset.epoch == 0 and len(dataset) == 10  # len() has no side effect
    assert len(first) == 9 and dataset.step == 3 and service.current_step() == 3
    injected = dataset.last_report["injected"]  # the boundary ran at on_batch_end of step 3
    assert dataset.epoch == 1 and sorted(injected) == sorted(f"{seeds[i].id}__v1" for i in (0, 1))  # 20% of 10
    assert dataset.task_ids == [t.id for t in seeds] + injected and len(dataset) == 12
    second = [row["extra_info"]["task_id"] for batch in steps(loader, dataset) for row in batch]
    assert len(second) == 12 and set(injected) <= set(second) and dataset.step == 7 and dataset.epoch == 2
    row = dataset.rows[0]
    assert row["agent_name"] == "rods_multiturn" and row["extra_info"]["report"] is True


def test_a_trainer_that_never_signals_the_step_end_gets_a_clear_error(service):
    from torch.utils.data import DataLoader

    dataset = RodsTaskDataset("rods://pool", None, {"train_batch_size": 5}, engine=service)
    loader = DataLoader(dataset, batch_size=5, drop_last=True, collate_fn=list)
    assert len([b for b in loader]) == 2 and dataset.epoch == 0
    with pytest.raises(RuntimeError, match="on_batch_end"):
        next(iter(loader))


def test_resume_continues_the_epochs_served_row_count(service, seeds):
    """verl saves the dataloader's state (with the dataset's) at a checkpoint; a new process loads it."""
    from torchdata.stateful_dataloader import StatefulDataLoader
    from torchdata.stateful_dataloader.sampler import RandomSampler

    def make():
        dataset = RodsTaskDataset("rods://pool", None, {"train_batch_size": 2}, engine=service)
        loader = StatefulDataLoader(dataset, batch_size=2, drop_last=True, sampler=RandomSampler(dataset),
                                    collate_fn=list)
        return dataset, loader

    dataset, loader = make()
    service.submit([make_variant(seeds[2], 3)])
    epoch = steps(loader, dataset)
    served = [row["extra_info"]["task_id"] for _ in range(2) for row in next(epoch)]  # steps 1-2 of 5
    saved = loader.state_dict()  # what verl writes to data.pt with the checkpoint; then the trainer dies

    resumed, resumed_loader = make()  # a restarted trainer: the dataset is built, then the state loaded
    resumed_loader.load_state_dict(saved)  # applied when the next epoch iterator starts
    rest, counts = [], []
    for batch in steps(resumed_loader, resumed):
        rest += [row["extra_info"]["task_id"] for row in batch]
        counts.append((resumed.epoch, resumed.step, resumed._served))
    assert counts == [(0, 3, 6), (0, 4, 8), (0, 5, 10)]  # steps 3-5 of epoch 0 (its boundary after step 5)
    # The epoch served each of the 10 tasks once across the restart, and its boundary fell on step 5.
    assert sorted(served + rest) == sorted(t.id for t in seeds)
    assert resumed.epoch == 1 and resumed.last_report["step"] == 5
    assert resumed.last_report["injected"] == [f"{seeds[2].id}__v3"] and len(resumed) == 11


def test_fixed_sources_and_errors(seeds, tmp_path):
    from rods.tasks import write_tasks

    path = tmp_path / "tasks.jsonl"
    write_tasks(path, seeds[:3])
    dataset = RodsTaskDataset([str(path)], None, {"train_batch_size": 2})
    assert len(dataset) == 3 and dataset[0]["extra_info"]["report"] is False
    assert len(RodsTaskDataset("bfcl:test", None, {"train_batch_size": 2}, max_samples=5)) == 5
    assert len(read_task_source("bfcl:train")) == 400
    with pytest.raises(ValueError, match="unknown BFCL split"):
        read_task_source("bfcl:dev")
    with pytest.raises(ValueError, match="cannot be combined"):
        RodsTaskDataset(["rods://pool", str(path)], None, {"train_batch_size": 2})
    with pytest.raises(ValueError, match=r"data.rods: \$\{rods\}"):
        RodsTaskDataset("rods://pool", None, {"train_batch_size": 2})
