"""Arms of a comparison: training configs made comparable, one resolved config per (arm, random seed).

An arm is a training config file (`configs/ablations/static_pool.yaml`, ...).
Arms of one comparison must train on the same seed tasks for the same number
of steps; `load_arms` checks both and says which arm differs. Each run of an
arm overrides only the trainer seed and the run directory
(``OUT/runs/<arm>/seed-<s>``), and points the warm start, if the arm has
one, at a cache shared by the comparison (``OUT/warm_starts``): arms whose
warm starts read the same things (in the miniature: every arm, for one
seed) start GRPO from one policy, trained once. The held-out split is drawn once, from the
test split shaped like the arms' seeds (same task mix and filters), and kept
in ``OUT/heldout.jsonl`` so every arm and every rerun evaluates the same tasks.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from rods.tasks import Task, read_tasks, write_tasks
from rods.train.config import TrainConfig
from rods.train.load import apply_overrides, config_from_dict, dump_config, load_config

log = logging.getLogger(__name__)

RUNS_DIR = "runs"
HELDOUT_FILE = "heldout.jsonl"
WARM_STARTS_DIR = "warm_starts"
#: The resolved config a job trains with (written by the runner, read by the job).
RUN_CONFIG = "arm.yaml"
#: Written last by a finished run's job: a run with it is never run again.
DONE_FILE = "done.json"
#: One line per launch of a run's job (written by the runner): start, end, seconds, exit code.
ATTEMPTS_FILE = "attempts.jsonl"


@dataclass(frozen=True)
class Arm:
    """One training config of the comparison, named after its file."""

    name: str
    path: Path
    config: TrainConfig


@dataclass(frozen=True)
class RunSpec:
    """One (arm, random seed) run."""

    arm: str
    seed: int
    run_dir: Path
    config: TrainConfig


def load_arms(paths: list[str | Path], *, steps: int | None = None, overrides: list[str] | None = None) -> list[Arm]:
    """Read the arm configs and check they are comparable.

    `overrides` (``section.key=value``) and `steps` (everyone's `grpo.max_steps`) apply to every arm.
    """
    if not paths:
        raise ValueError("--arms: give at least one training config")
    arms = []
    for path in map(Path, paths):
        changes = list(overrides or []) + ([f"grpo.max_steps={steps}"] if steps is not None else [])
        arms.append(Arm(path.stem, path, load_config(path, changes)))
    names = [a.name for a in arms]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"--arms: two arms are named {duplicates} (arms are named after their file)")
    budgets = {a.name: a.config.grpo.max_steps for a in arms}
    if len(set(budgets.values())) > 1:
        raise ValueError(f"arms have different step budgets {budgets}; pass --steps to give them the same")
    _check_same_seeds(arms)
    return arms


def _check_same_seeds(arms: list[Arm]) -> None:
    from rods.train.run import load_seeds

    first, reference = arms[0], [t.id for t in load_seeds(arms[0].config.data)]
    for arm in arms[1:]:
        ids = [t.id for t in load_seeds(arm.config.data)]
        if set(ids) != set(reference):
            raise ValueError(
                f"arm {arm.name} ({arm.path}) trains on other seed tasks than {first.name} ({first.path}): "
                f"{len(set(ids) - set(reference))} extra, {len(set(reference) - set(ids))} missing; "
                "arms of a comparison must share their data section"
            )


def plan_runs(arms: list[Arm], seeds: int, out: str | Path) -> list[RunSpec]:
    """Every (arm, seed) run, each in its own directory, seed by seed (seed 0 of every arm, then seed 1, ...): a
    comparison that spans sessions has whole seeds to compare at every stop, and all the arms of a seed use its
    warm start before the next seed's is made."""
    if seeds < 1:
        raise ValueError(f"--seeds must be >= 1, got {seeds}")
    out = Path(out)
    runs = []
    for seed in range(seeds):
        for arm in arms:
            run_dir = out / RUNS_DIR / arm.name / f"seed-{seed}"
            changes = [f"grpo.seed={seed}", f"output_dir={run_dir}"]
            if arm.config.warm_start.enabled and arm.config.warm_start.cache_dir is None:
                changes.append(f"warm_start.cache_dir={out / WARM_STARTS_DIR}")
            data = apply_overrides(arm.config.model_dump(mode="json"), changes)
            runs.append(RunSpec(arm.name, seed, run_dir, config_from_dict(data, f"{arm.path} (seed {seed})")))
    return runs


def write_run_config(run: RunSpec) -> Path:
    """The run's resolved config, where its job reads it."""
    run.run_dir.mkdir(parents=True, exist_ok=True)
    path = run.run_dir / RUN_CONFIG
    path.write_text(dump_config(run.config), encoding="utf-8")
    return path


def heldout_tasks(arms: list[Arm], n: int, out: str | Path, *, split: str = "test") -> list[Task]:
    """The fixed held-out split: kept from an earlier run of this comparison, else drawn and written."""
    path = Path(out) / HELDOUT_FILE
    if path.is_file():
        tasks = read_tasks(path)
        log.info("held-out split: %d tasks kept from %s", len(tasks), path)
        return tasks
    from rods.eval import stratified_subset
    from rods.train.run import load_seeds

    data = arms[0].config.data.model_copy(update={"seeds": split, "max_slices": None, "per_category": None})
    pool = load_seeds(data)
    tasks = stratified_subset(pool, min(n, len(pool)), seed=0)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_tasks(path, tasks)
    log.info("held-out split: %d of %d %s tasks shaped like %s's seeds -> %s", len(tasks), len(pool), split,
             arms[0].name, path)
    return tasks
