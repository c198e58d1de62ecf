"""Micro-batches under one optimizer step: `grpo.gradient_accumulation_steps` and gradient checkpointing.

What a smaller memory peak must not change: the engine still receives each GRPO group once and
whole (K rewards per task, `tasks_per_step` groups per step), and the tasks served per step are
the same as without accumulation. The paper's config uses 16 micro-batches; the CPU configs use
them to bound a step's memory (docs/guides/training.md, "Memory").
"""

import pytest

from rods.engine import DataEngine
from rods.engine.events import read_jsonl
from rods.envs.slices import turn_slices
from rods.tasks import load_split, write_tasks
from rods.train import config_from_dict
from rods.train.run import train

pytestmark = pytest.mark.slow


def _run(tmp_path, model_dir, seeds_file, name, **grpo):
    run_dir = tmp_path / name
    config = config_from_dict({
        "name": name,
        "output_dir": str(run_dir),
        "model": {"name_or_path": str(model_dir)},
        "data": {"seeds": str(seeds_file)},
        "rollout": {"max_steps_per_turn": 1, "max_reply_tokens": 4, "max_completion_tokens": 256,
                    "tool_docs": "signatures"},
        "grpo": {"num_generations": 2, "tasks_per_step": 2, "steps_per_epoch": 2, "max_steps": 2,
                 "save_steps": 2, "learning_rate": 1e-3, **grpo},
        "engine": {"K": 2, "min_observations": 2, "burn_in_rollouts": 2, "capacity": 0},
        "synthesis": {"enabled": False},
    })
    summary = train(config)
    return run_dir, summary


def test_micro_batches_keep_groups_whole_and_the_same_tasks(tmp_path, tiny_model_dir):
    seeds_file = tmp_path / "seeds.jsonl"
    write_tasks(seeds_file, turn_slices(load_split("train"), max_calls=1)[:4])
    plain_dir, plain = _run(tmp_path, tiny_model_dir, seeds_file, "plain")
    micro_dir, micro = _run(tmp_path, tiny_model_dir, seeds_file, "micro", gradient_accumulation_steps=2,
                            gradient_checkpointing=True)
    assert plain.steps == micro.steps == 2
    for run_dir in (plain_dir, micro_dir):
        groups = {m["step"]: m["groups"] for m in read_jsonl(run_dir / "metrics.jsonl") if m.get("groups")}
        assert groups == {1: 2, 2: 2}, run_dir.name  # one observation per group per step
        log = read_jsonl(run_dir / "trainer_log.jsonl")
        assert [r["step"] for r in log if "loss" in r] == [1, 2]
    observed = {}
    for run_dir in (plain_dir, micro_dir):
        with DataEngine.resume(run_dir) as engine:
            observed[run_dir.name] = {tid: engine.stats(tid)["n_rewards"] for tid in engine.active_ids()}
    assert observed["micro"] == observed["plain"]  # the same tasks, each with K rewards per draw
    assert sum(observed["micro"].values()) == 2 * 2 * 2  # steps x tasks_per_step x K
