"""The must-show: GRPO steps through the full loop with a tiny local model, then resume from a checkpoint.

rollouts -> rewards -> engine (zones, seed selection) -> template synthesis ->
injection at an epoch boundary -> the next epoch trains on the injected tasks;
resuming from a checkpoint restores trainer and engine together and continues.

The seeds are chosen so a random tiny model lands some tasks in the boundary
zone: miss_param tasks whose first turn has empty ground truth score 1/N for a
model that never calls a tool (docs/design.md §2.4), base turn slices score 0 (hard).
"""

import json

import pytest

from rods.engine import DataEngine
from rods.engine.events import read_jsonl
from rods.envs.slices import turn_slices
from rods.tasks import load_split, write_tasks
from rods.train import config_from_dict
from rods.train.run import train

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def seeds():
    train_split = load_split("train")
    boundary = [t for t in train_split if t.category == "miss_param" and t.num_turns == 3 and not t.ground_truth[0]]
    return boundary[:2] + turn_slices(train_split, max_calls=1)[:2]


def test_closed_loop_then_resume(tmp_path, tiny_model_dir, seeds):
    seeds_file = tmp_path / "seeds.jsonl"
    write_tasks(seeds_file, seeds)
    run_dir = tmp_path / "run"
    config = config_from_dict({
        "name": "loop",
        "output_dir": str(run_dir),
        "model": {"name_or_path": str(tiny_model_dir)},
        "data": {"seeds": str(seeds_file)},
        "rollout": {"max_steps_per_turn": 1, "max_reply_tokens": 4, "max_completion_tokens": 512,
                    "tool_docs": "signatures"},
        "grpo": {"num_generations": 2, "tasks_per_step": 2, "steps_per_epoch": 2, "max_steps": 4,
                 "save_steps": 2, "learning_rate": 1e-3},
        "engine": {"K": 2, "min_observations": 2, "burn_in_rollouts": 2, "max_seeds_per_step": 2,
                   "quotas": {"basic": 1, "miss_func": 0, "miss_param": 1}, "exclusion_window": 1,
                   "capacity": 8, "max_injection_fraction": 1.0},
        "synthesis": {"backend": "template", "wait_at_epoch_end": True},
    })
    summary = train(config)
    assert summary.steps == 4 and summary.epochs == 2

    events = read_jsonl(run_dir / "events.jsonl")
    kinds = {e["event"] for e in events}
    assert {"select", "submit", "inject", "epoch_end"} <= kinds
    selected = [s["task_id"] for e in events if e["event"] == "select" for s in e["seeds"]]
    assert not set(selected) & {t.id for t in seeds[2:]}, "hard tasks (the base slices) are never selected"
    assert {t.id for t in seeds[:2]} & set(selected), "boundary seeds are selected"
    injected = [e for e in events if e["event"] == "inject"]
    assert injected and injected[0]["step"] == 2, "injection happens at the first epoch boundary (step 2)"
    new_id = injected[0]["task_id"]

    # The next epoch trained on the injected task (fresh tasks open an epoch): its rewards are from step 3.
    with DataEngine.resume(run_dir) as engine:
        assert engine.task(new_id).origin == "synthetic"
        stats = engine.stats(new_id)
        assert stats["n_rewards"] >= 2 and 3 <= stats["last_step"] <= 4
        zones = engine.metrics(4)["zones"]
        assert zones["boundary"] >= 1 and zones["hard"] >= 1

    # TRL's metrics and the engine's are both in the run directory; the checkpoint has the engine.
    log = read_jsonl(run_dir / "trainer_log.jsonl")
    assert [r["step"] for r in log if "loss" in r] == [1, 2, 3, 4]
    assert (run_dir / "metrics.jsonl").exists() and (run_dir / "config.yaml").exists()
    # The checkpoint at the epoch's last step holds the engine after that boundary.
    checkpoint = run_dir / "checkpoints" / "checkpoint-2"
    assert (checkpoint / "engine" / "engine.sqlite").is_file()
    with DataEngine.resume(checkpoint / "engine") as snapshot:
        at_checkpoint = snapshot.state_dict()
        assert snapshot.last_step == 2 and snapshot.epochs == 1 and new_id in at_checkpoint["active"]

    # Resume from checkpoint-2: trainer and engine continue from step 2 to 4, on the injected pool.
    resumed = train(config, resume=checkpoint)
    assert resumed.steps == 4 and resumed.resumed_from == str(checkpoint)
    log = read_jsonl(run_dir / "trainer_log.jsonl")
    assert [r["step"] for r in log if "loss" in r] == [1, 2, 3, 4, 3, 4]
    with DataEngine.resume(run_dir) as engine:
        assert engine.last_step == 4 and engine.epochs == 2
        assert new_id in engine.active_ids()
        assert engine.stats(new_id)["n_rewards"] >= at_checkpoint_rewards(at_checkpoint, new_id)
    assert json.loads((run_dir / "summary.json").read_text())["resumed_from"] == str(checkpoint)


def at_checkpoint_rewards(state, task_id):
    return next(r["n_rewards"] for r in state["ledger"] if r["task_id"] == task_id)
