"""Runs of a comparison: only the seed, run directory and warm-start cache differ from the arm."""

from pathlib import Path

from rods.compare.arms import Arm, plan_runs
from rods.train.config import TrainConfig


def test_runs_share_a_warm_start_cache_only_when_the_arm_warm_starts(tmp_path):
    warm = TrainConfig(synthesis={"enabled": False}, warm_start={"enabled": True})
    cold = TrainConfig(synthesis={"enabled": False})
    own = TrainConfig(synthesis={"enabled": False}, warm_start={"enabled": True, "cache_dir": "/elsewhere"})
    arms = [Arm("warm", Path("warm.yaml"), warm), Arm("cold", Path("cold.yaml"), cold),
            Arm("own", Path("own.yaml"), own)]
    runs = plan_runs(arms, 2, tmp_path)
    assert [(r.arm, r.seed) for r in runs] == [(a, s) for s in (0, 1) for a in ("warm", "cold", "own")]
    caches = {(r.arm, r.seed): r.config.warm_start.cache_dir for r in runs}
    assert caches[("warm", 0)] == caches[("warm", 1)] == str(tmp_path / "warm_starts")
    assert caches[("cold", 0)] is None and caches[("own", 1)] == "/elsewhere"
    for run in runs:
        arm = next(a for a in arms if a.name == run.arm)
        assert run.config.grpo.seed == run.seed and run.config.run_dir == str(run.run_dir)
        mine = run.config.model_dump(exclude={"output_dir": True, "grpo": {"seed"}, "warm_start": {"cache_dir"}})
        theirs = arm.config.model_dump(exclude={"output_dir": True, "grpo": {"seed"}, "warm_start": {"cache_dir"}})
        assert mine == theirs


def test_each_attempt_names_the_code_it_ran():
    """A comparison spans sessions; the rods arm's synthesis runs the working tree's code: each attempt says which
    commit, read from `.git` without starting a process."""
    import subprocess

    from rods.compare.runner import code_version

    root = Path(__file__).resolve().parents[2]
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert len(head) == 40 and code_version() == head
