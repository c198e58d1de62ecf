"""Two training processes, one engine: `accelerate launch --num_processes 2` on CPU (gloo), then resume.

A tiny random Llama, 4 GRPO steps of 3 tasks x K = 2 rollouts, so each process
scores 3 rollouts a step and one task's group is cut between the two ranks;
an epoch boundary at step 2 injects a template-synthesized task. What must hold:
rank 0 alone owns the engine and every group reaches it exactly once, whole; both
ranks serve the same pool each epoch (the injected task in the second); the
checkpoint holds one engine snapshot; a 2-process resume from it continues to step 4.
"""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from rods.engine import DataEngine
from rods.engine.events import read_jsonl
from rods.envs.slices import turn_slices
from rods.tasks import load_split, write_tasks

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
STEPS, TASKS_PER_STEP, K = 4, 3, 2


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def launch(config_file: Path, out: Path, *extra: str) -> list[dict]:
    repo = HERE.parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")]),
               OMP_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false")
    # `--multi_gpu` is accelerate's multi-process launcher (torchrun); without a GPU the processes join over
    # gloo on CPU (`--cpu` would start one process only).
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--multi_gpu", "--num_processes", "2",
           "--num_machines", "1", "--mixed_precision", "no", "--dynamo_backend", "no",
           "--main_process_port", str(free_port()),
           str(HERE / "launched_train.py"), str(config_file), str(out), *extra]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    return [json.loads((out / f"rank-{r}.json").read_text()) for r in (0, 1)]


def ledger_totals(state: dict) -> tuple[int, int]:
    return sum(r["n_rewards"] for r in state["ledger"]), sum(r["n_groups"] for r in state["ledger"])


def test_two_processes_one_engine_then_resume(tmp_path, tiny_model_dir):
    train_split = load_split("train")
    boundary = [t for t in train_split if t.category == "miss_param" and t.num_turns == 3 and not t.ground_truth[0]]
    seeds = boundary[:2] + turn_slices(train_split, max_calls=1)[:2]
    write_tasks(tmp_path / "seeds.jsonl", seeds)
    run_dir = tmp_path / "run"
    config = {
        "name": "two-ranks", "output_dir": str(run_dir),
        "model": {"name_or_path": str(tiny_model_dir)},
        "data": {"seeds": str(tmp_path / "seeds.jsonl")},
        "rollout": {"max_steps_per_turn": 1, "max_reply_tokens": 4, "max_completion_tokens": 512,
                    "tool_docs": "signatures"},
        "grpo": {"num_generations": K, "tasks_per_step": TASKS_PER_STEP, "steps_per_epoch": 2, "max_steps": STEPS,
                 "save_steps": 2, "learning_rate": 1e-3},
        "engine": {"K": K, "min_observations": 2, "burn_in_rollouts": 2, "max_seeds_per_step": 2,
                   "quotas": {"basic": 1, "miss_func": 0, "miss_param": 1}, "exclusion_window": 1,
                   "capacity": 8, "max_injection_fraction": 1.0},
        "synthesis": {"backend": "template", "wait_at_epoch_end": True},
    }
    config_file = tmp_path / "config.json"
    config_file.write_text(json.dumps(config))

    ranks = launch(config_file, tmp_path / "first")
    assert [r["rank"] for r in ranks] == [0, 1] and {r["world_size"] for r in ranks} == {2}
    assert all(r["steps"] == STEPS for r in ranks)
    # Each rank scored its half of every step; the owner observed every group of both, once.
    assert [r["local_rollouts"] for r in ranks] == [STEPS * TASKS_PER_STEP * K // 2] * 2
    assert ranks[0]["observed_groups"] == STEPS * TASKS_PER_STEP and ranks[1]["observed_groups"] == 0
    # Both ranks served the same pool, epoch by epoch; the second epoch has the injected task.
    assert ranks[0]["epoch_pools"] == ranks[1]["epoch_pools"] and len(ranks[0]["epoch_pools"]) == 2
    events = read_jsonl(run_dir / "events.jsonl")
    injected = [e["task_id"] for e in events if e["event"] == "inject" and e["step"] == 2]
    assert injected and set(injected) <= set(ranks[0]["epoch_pools"][1])
    assert not set(injected) & set(ranks[0]["epoch_pools"][0])
    assert len([e for e in events if e["event"] == "epoch_end"]) == 2  # one engine: each boundary once
    with DataEngine.resume(run_dir) as engine:
        state = engine.state_dict()
        assert engine.last_step == STEPS and engine.epochs == 2
    # Every rollout of both ranks is in the ledger once, in whole groups (none cut at the rank border).
    assert ledger_totals(state) == (STEPS * TASKS_PER_STEP * K, STEPS * TASKS_PER_STEP)
    assert all(r["n_rewards"] == K * r["n_groups"] for r in state["ledger"])
    # One engine snapshot per checkpoint, written by the owner; the run has one engine store.
    checkpoint = run_dir / "checkpoints" / "checkpoint-2"
    assert sorted(p.name for p in (checkpoint / "engine").iterdir() if p.suffix == ".sqlite") == ["engine.sqlite"]
    assert sorted(p.name for p in run_dir.glob("*.sqlite")) == ["engine.sqlite"]
    with DataEngine.resume(checkpoint / "engine") as snapshot:
        at_checkpoint = snapshot.state_dict()
        assert snapshot.last_step == 2 and snapshot.epochs == 1
    assert ledger_totals(at_checkpoint) == (2 * TASKS_PER_STEP * K, 2 * TASKS_PER_STEP)

    # Resume on two processes from checkpoint-2: the engine restarts from its snapshot there.
    resumed = launch(config_file, tmp_path / "resumed", str(checkpoint))
    assert all(r["steps"] == STEPS and r["resumed_from"] == str(checkpoint) for r in resumed)
    assert resumed[0]["epoch_pools"] == resumed[1]["epoch_pools"] and len(resumed[0]["epoch_pools"]) == 1
    assert set(injected) <= set(resumed[0]["epoch_pools"][0])
    assert resumed[0]["observed_groups"] == (STEPS - 2) * TASKS_PER_STEP
    with DataEngine.resume(run_dir) as engine:
        assert engine.last_step == STEPS and engine.epochs == 2
        assert ledger_totals(engine.state_dict()) == (STEPS * TASKS_PER_STEP * K, STEPS * TASKS_PER_STEP)
