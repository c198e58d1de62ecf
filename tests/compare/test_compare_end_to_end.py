"""`rods compare` end to end with a tiny random model: two arms, one seed each, a kill in the middle, a rerun.

Summaries over several seeds (mean, min, max per arm) are tests/compare/test_summary.py's.

Arms: a static pool (no synthesis, capacity 0) and RODS with template synthesis,
on seeds a random tiny model partly solves (miss_param tasks whose first turn
has empty gold score 1/N without any call; base turn slices score 0), so the
RODS arm selects boundary seeds and injects synthesized tasks.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from rods.compare import run_comparison
from rods.engine.events import read_jsonl
from rods.envs.slices import turn_slices
from rods.tasks import load_split, write_tasks

pytestmark = pytest.mark.slow

STEPS = 4
#: An out-of-distribution suite scored on each run's last checkpoint (two BFCL V4 entries, short replies).
OOD = "bfcl_v4: --v4-categories simple_python --v4-limit 2 --max-new-tokens 8"


@pytest.fixture(scope="module")
def arms(tmp_path_factory, tiny_model_dir):
    folder = tmp_path_factory.mktemp("arms")
    train = load_split("train")
    boundary = [t for t in train if t.category == "miss_param" and t.num_turns == 3 and not t.ground_truth[0]]
    write_tasks(folder / "seeds.jsonl", boundary[:2] + turn_slices(train, max_calls=1)[:2])
    base = {
        "model": {"name_or_path": str(tiny_model_dir)},
        "data": {"seeds": str(folder / "seeds.jsonl")},
        "rollout": {"max_steps_per_turn": 1, "max_reply_tokens": 4, "max_completion_tokens": 512,
                    "tool_docs": "signatures"},
        "grpo": {"num_generations": 2, "tasks_per_step": 2, "steps_per_epoch": 2, "max_steps": 50,
                 "save_steps": 2, "learning_rate": 1e-3},
        "engine": {"K": 2, "min_observations": 2, "burn_in_rollouts": 2, "max_seeds_per_step": 2,
                   "quotas": {"basic": 1, "miss_func": 0, "miss_param": 1}, "exclusion_window": 1,
                   "capacity": 8, "max_injection_fraction": 1.0},
    }
    (folder / "base.yaml").write_text(yaml.safe_dump(base))
    (folder / "static.yaml").write_text(yaml.safe_dump(
        {"base": "base.yaml", "name": "static", "synthesis": {"enabled": False}, "engine": {"capacity": 0}}))
    (folder / "rods.yaml").write_text(yaml.safe_dump(
        {"base": "base.yaml", "name": "rods", "synthesis": {"backend": "template", "wait_at_epoch_end": True}}))
    return [folder / "static.yaml", folder / "rods.yaml"]


def _cli(arms, out):
    return [sys.executable, "-m", "rods", "compare", "--arms", *map(str, arms), "--seeds", "1", "--steps",
            str(STEPS), "--heldout", "4", "--out", str(out)]


def _started(run_dir):
    return any(a["event"] == "start" for a in read_jsonl(run_dir / "attempts.jsonl"))


def test_compare_killed_then_rerun_finishes_without_repeating_a_finished_run(tmp_path, arms):
    out = tmp_path / "cmp"
    first = out / "runs" / "static" / "seed-0"
    second = out / "runs" / "rods" / "seed-0"
    proc = subprocess.Popen(_cli(arms, out), start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ})
    try:
        deadline = time.time() + 600
        while not (first / "done.json").exists():
            assert proc.poll() is None, "rods compare exited before the first run finished"
            assert time.time() < deadline, "the first run did not finish in time"
            time.sleep(0.5)
        # Kill once the second run has recorded its start (a fixed pause raced it on a loaded machine).
        while not _started(second):
            assert proc.poll() is None, "rods compare exited before the second run started"
            assert time.time() < deadline, "the second run did not start in time"
            time.sleep(0.2)
        time.sleep(1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    finished_mark = (first / "done.json").read_text()
    assert not (out / "comparison.json").exists()
    assert not (second / "done.json").exists()

    result = run_comparison(arms, out, seeds=1, steps=STEPS, heldout=4, ood=[OOD])

    # Nothing finished before ran again; everything else did.
    assert (result.skipped[0].arm, result.skipped[0].seed) == ("static", 0)
    assert ("static", 0) not in [(r.arm, r.seed) for r in result.ran]
    assert len(result.skipped) + len(result.ran) == 2 and not result.failed
    assert (first / "done.json").read_text() == finished_mark
    assert sum(1 for a in read_jsonl(first / "attempts.jsonl") if a["event"] == "start") == 1
    assert sum(1 for a in read_jsonl(second / "attempts.jsonl") if a["event"] == "start") == 2  # killed, rerun

    # The outputs, consistent with the runs' own logs.
    comparison = json.loads((out / "comparison.json").read_text())
    assert set(comparison["arms"]) == {"static", "rods"} and comparison["steps"] == STEPS
    assert (out / "table.md").read_text().count("\n| ") == 2  # one row per arm under the header
    for name in ("informative_fraction.png", "heldout.png"):
        assert (out / name).stat().st_size > 1000
    heldout_ids = [json.loads(line)["id"] for line in (out / "heldout.jsonl").read_text().splitlines()]
    assert len(heldout_ids) == 4
    for run in comparison["runs"]:
        run_dir = out / "runs" / run["arm"] / f"seed-{run['seed']}"
        metrics = {m["step"]: m for m in read_jsonl(run_dir / "metrics.jsonl") if not m.get("epoch_end")}
        late = [metrics[s]["informative_fraction"] for s in metrics if s > STEPS / 2
                and metrics[s]["informative_fraction"] is not None]
        assert run["informative_fraction_late"] == pytest.approx(sum(late) / len(late))
        rewards = {r["step"]: r["reward"] for r in read_jsonl(run_dir / "trainer_log.jsonl") if "reward" in r}
        assert run["mean_reward"] == pytest.approx(sum(rewards.values()) / len(rewards))
        summary = json.loads((run_dir / "summary.json").read_text())
        assert run["injected"] == summary["injected"] and summary["steps"] == STEPS
        config = yaml.safe_load((run_dir / "config.yaml").read_text())
        assert config["grpo"]["seed"] == run["seed"] and config["grpo"]["max_steps"] == STEPS
        for when in ("before", "after"):
            report = json.loads((run_dir / f"heldout_{when}" / "report.json").read_text())
            assert report["n_tasks"] == 4 and run[f"heldout_progress_{when}"] == report["overall_progress"]
            ids = [json.loads(line)["task_id"] for line in (run_dir / f"heldout_{when}" / "trajectories.jsonl")
                   .read_text().splitlines()]
            assert sorted(ids) == sorted(heldout_ids)
        # The out-of-distribution suite scored the run's last checkpoint, and the run's figure is its report's.
        v4 = json.loads((run_dir / "ood" / "bfcl_v4" / "report.json").read_text())
        assert v4["n_entries"] == 2 and f"checkpoint-{STEPS}" in v4["model"]
        assert run["ood"]["ood/bfcl_v4/accuracy"] == pytest.approx(v4["categories"]["simple_python"]["accuracy"])
    assert "bfcl_v4 accuracy (OOD)" in (out / "table.md").read_text()
    static, rods = comparison["arms"]["static"], comparison["arms"]["rods"]
    assert static["injected"]["max"] == 0 and static["synthesized"]["max"] == 0
    assert rods["injected"]["min"] >= 1, "template synthesis injected tasks in the RODS arm"
    by_arm = [r["informative_fraction_late"] for r in comparison["runs"] if r["arm"] == "rods"]
    assert rods["informative_fraction_late"]["mean"] == pytest.approx(sum(by_arm) / len(by_arm))
    assert rods["informative_fraction_late"]["min"] == pytest.approx(min(by_arm))

    # A third call finds everything finished: it runs nothing, scores nothing again, rewrites the same numbers.
    scored = {r: (out / "runs" / r / "seed-0" / "ood" / "bfcl_v4" / "report.json").stat().st_mtime
              for r in ("static", "rods")}
    again = run_comparison(arms, out, seeds=1, steps=STEPS, heldout=4, ood=[OOD])
    assert not again.ran and len(again.skipped) == 2
    assert again.summary["arms"] == comparison["arms"]
    assert scored == {r: (out / "runs" / r / "seed-0" / "ood" / "bfcl_v4" / "report.json").stat().st_mtime
                      for r in ("static", "rods")}
