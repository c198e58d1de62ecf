"""The closed loop on tau2-bench's airline domain with a tiny random model (docs/design.md §2.7).

rollouts -> rewards on tau2's database -> engine zones -> seed selection ->
template synthesis of tau2 variants -> injection at the epoch boundary -> the
next epoch trains on them. A random model solves no tau2 task (every reward is
0), so the config sets alpha_minus = 0: a mean of 0 is then `boundary`, not
`hard`, and every path of the engine runs on this environment.
"""

from pathlib import Path

import pytest

from rods.engine import DataEngine
from rods.engine.events import read_jsonl
from rods.reward import score
from rods.synth.profile import profile_of
from rods.tasks import read_tasks, write_tasks
from rods.train import config_from_dict
from rods.train.run import train

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]


def test_closed_loop_on_tau2_airline(tmp_path, tiny_model_dir):
    seeds = read_tasks(ROOT / "examples" / "tau2_airline" / "train.jsonl")[:2]
    seeds_file = tmp_path / "seeds.jsonl"
    write_tasks(seeds_file, seeds)
    run_dir = tmp_path / "run"
    config = config_from_dict({
        "name": "loop_tau2",
        "output_dir": str(run_dir),
        "model": {"name_or_path": str(tiny_model_dir)},
        "data": {"seeds": str(seeds_file)},
        "rollout": {"max_steps_per_turn": 1, "max_reply_tokens": 4, "max_completion_tokens": 64,
                    "tool_docs": "signatures"},
        "grpo": {"num_generations": 2, "tasks_per_step": 2, "steps_per_epoch": 2, "max_steps": 4,
                 "save_steps": 4, "learning_rate": 1e-3},
        "engine": {"K": 2, "alpha_minus": 0.0, "min_observations": 2, "burn_in_rollouts": 2,
                   "max_seeds_per_step": 2, "quotas": {"basic": 2, "miss_func": 0, "miss_param": 0},
                   "exclusion_window": 1, "capacity": 8, "max_injection_fraction": 1.0},
        "synthesis": {"backend": "template", "wait_at_epoch_end": True},
    })
    summary = train(config)
    assert summary.steps == 4 and summary.epochs == 2

    events = read_jsonl(run_dir / "events.jsonl")
    selected = {s["task_id"] for e in events if e["event"] == "select" for s in e["seeds"]}
    assert selected & {t.id for t in seeds}, "tau2 seeds are selected from the boundary zone"
    injected = [e for e in events if e["event"] == "inject"]
    assert injected and injected[0]["step"] == 2, "tau2 variants are injected at the first epoch boundary"
    assert summary.injected == len(injected)

    with DataEngine.resume(run_dir) as engine:
        assert engine.metrics(4)["zones"]["boundary"] >= 1
        for event in injected:
            task = engine.task(event["task_id"])
            assert task.origin == "synthetic"
            assert task.environment == seeds[0].environment  # a tau2 airline task, scored on its database
            parent = engine.task(task.provenance.parent_id)  # a seed, or a variant injected before
            result = score(task, [[list(turn)] if turn else [] for turn in task.ground_truth])
            assert (result.progress, result.binary) == (1.0, 1)
            assert profile_of(task).matches(profile_of(parent))
    # the next epoch trained on what was injected: an injected task got its first (burn-in) rewards
    rewarded = {e["task_id"] for e in events if e["event"] == "first_rewards"}
    assert rewarded & {e["task_id"] for e in injected}
