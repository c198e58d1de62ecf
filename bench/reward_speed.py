"""Reward speed and agreement: rods.reward vs BFCL's official multi-turn checker.

The same trajectories (ground-truth replays and perturbed ones, all four
categories) are scored by both, in one run:

* single: one trajectory per task at a time, rods with a cold ground-truth cache
  (it executes the ground truth for every trajectory, like the official checker);
* K=16: 16 rollouts per task (the GRPO regime) written to a JSONL file; rods is
  timed end to end as a `rods reward` subprocess (interpreter start-up, imports,
  task loading included), the official checker in-process over the same lines.
  `rods reward` keeps ground truths in a disk cache between runs: it is timed
  with that cache warm (a folder of this run, filled by one untimed run: the
  steady state of a user scoring rollouts again and again) and cold
  (`--no-cache`, every ground truth computed in the process).

Each is timed twice: CPU time (user + sys of this process or of the child) and
wall-clock. The JSON figures use CPU time, which is what the work costs; on a
shared machine wall-clock mostly measures the neighbours (both are printed).
The K=16 runs alternate official and rods `--repeats` times and keep each side's
best run.

Prints a table, where rods' time goes, and as its last line one JSON object:
`{"agreement", "speedup_single", "speedup_k16_cli", "speedup_k16_cli_cold", "speedup_k16_wall", "timing"}`.

Usage: python bench/reward_speed.py [--per-category 50] [--k 16] [--repeats 3] [--smoke]
(the defaults are the published run; `--smoke`, 1 task per category, K=2, one repeat, takes every
code path, the `rods reward` subprocesses included)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rods.envs.bfcl.official import official_verdict
from rods.reward import ProgressScorer, clear_ground_truth_cache, ground_truth_for, is_empty_response, score
from rods.reward.perturb import KINDS, perturb
from rods.reward.progress import _same_calls
from rods.tasks import CATEGORIES, load_bfcl_tasks

#: --smoke: one task per category, K=2, one timing of each side.
SMOKE = {"per_category": 1, "k": 2, "repeats": 1}


def choose_tasks(per_category: int):
    tasks = load_bfcl_tasks(copy=False)
    chosen = []
    for category in CATEGORIES:
        of_cat = [t for t in tasks if t.category == category]
        chosen += of_cat[:: max(1, len(of_cat) // per_category)][:per_category]
    return chosen


def rollouts(task, k: int):
    """K trajectories for a task: a replay, then perturbations cycling through the kinds and seeds."""
    out, seed = [perturb(task, "replay")], 0
    kinds = [k_ for k_ in KINDS if k_ not in ("replay", "truncated")]
    while len(out) < k:
        steps = perturb(task, kinds[len(out) % len(kinds)], seed)
        seed += 1
        if steps is not None:
            out.append(steps)
        if seed > 10 * k:  # task admits few perturbations: pad with replays
            out.append(perturb(task, "replay"))
    return out[:k]


class Clock:
    """CPU time (this process + finished children) and wall-clock, in seconds."""

    def __enter__(self):
        self._cpu, self._wall = self._cpu_now(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.cpu = self._cpu_now() - self._cpu
        self.wall = time.perf_counter() - self._wall

    @staticmethod
    def _cpu_now() -> float:
        t = os.times()
        return t.user + t.system + t.children_user + t.children_system


def ratio(a: float, b: float) -> float:
    """a / b; nan when b's clock did not tick (os.times counts in 10 ms steps: tiny runs, `--smoke`)."""
    return a / b if b > 0 else float("nan")


def figure(x: float) -> float | None:
    """A ratio for the JSON line: rounded, or null when it could not be measured."""
    return None if math.isnan(x) else round(x, 2)


def time_official(pairs):
    with Clock() as clock:
        verdicts = [int(official_verdict(task, steps)["valid"]) for task, steps in pairs]
    return clock, verdicts


def time_rods_single(pairs):
    verdicts = []
    with Clock() as clock:
        for task, steps in pairs:
            clear_ground_truth_cache()
            verdicts.append(score(task, steps).binary)
    return clock, verdicts


def time_rods_cli(path: Path, out: Path, cache: Path | None):
    """`rods reward` as a subprocess: with the ground-truth cache in `cache`, or `--no-cache`."""
    flags = ["--cache-dir", str(cache)] if cache is not None else ["--no-cache"]
    with Clock() as clock:
        subprocess.run(
            [sys.executable, "-m", "rods", "reward", "--trajectories", str(path), "--out", str(out), *flags],
            check=True, capture_output=True,
        )
    return clock, [json.loads(line)["binary"] for line in out.read_text().splitlines()]


def breakdown(pairs, empty_file: Path, out: Path):
    """Where rods' K=16 CPU time goes: one empty `rods reward` run, then `score`'s steps timed in-process."""
    with Clock() as startup:
        subprocess.run(
            [sys.executable, "-m", "rods", "reward", "--trajectories", str(empty_file), "--out", str(out),
             "--no-cache"],
            check=True, capture_output=True,
        )
    clear_ground_truth_cache()
    cpu = time.process_time
    tasks = {t.id: t for t, _ in pairs}
    t0 = cpu()
    gts = {tid: ground_truth_for(t) for tid, t in tasks.items()}
    t_gt = cpu() - t0
    t_keys = t_fast = t_spawn = t_exec = t_check = 0.0
    n_fast = n_exec = 0
    for task, steps in pairs:
        gt = gts[task.id]
        scorer = ProgressScorer(task, gt)
        env = None
        for t, turn_steps in enumerate(steps):
            calls = [c for step in turn_steps for c in step]
            empty = is_empty_response(turn_steps)
            a = cpu()
            on_path = env is None and _same_calls(calls, gt, t)
            b = cpu()
            t_keys += b - a
            if on_path:
                scorer.end_turn_as_ground_truth(empty=empty)
                t_fast += cpu() - b
                n_fast += 1
                continue
            if env is None:
                env = gt.env_after(t - 1)
            c = cpu()
            results = env.execute_all(calls)
            d = cpu()
            scorer.end_turn(env, results, empty=empty)
            t_spawn += c - b
            t_exec += d - c
            t_check += cpu() - d
            n_exec += 1
        scorer.result()
    parts = {
        "process start-up, imports (empty `rods reward` run)": startup.cpu,
        "ground truth, once per task": t_gt,
        "matching turns against the ground truth's calls": t_keys + t_fast,
        "env for the first off-path turn (thaw a GT turn)": t_spawn,
        "executing off-path calls (parse + API + format)": t_exec,
        "state + response checks of off-path turns": t_check,
    }
    return parts, n_fast, n_exec


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-category", type=int, default=50, help="tasks per category")
    parser.add_argument("--k", type=int, default=16, help="rollouts per task in the GRPO regime")
    parser.add_argument("--repeats", type=int, default=3, help="K=16 timings: best (least disturbed) of this many runs")
    parser.add_argument("--smoke", action="store_true", help=f"tiny run of every code path: {SMOKE}")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)

    tasks = choose_tasks(args.per_category)
    kinds = ("replay", "dropped", "wrong_argument", "moved_between_turns")
    single = [(t, perturb(t, kind)) for t in tasks for kind in kinds]
    single = [(t, s) for t, s in single if s is not None]
    group = [(t, s) for t in tasks for s in rollouts(t, args.k)]

    official_single_t, official_single = time_official(single)
    rods_single_t, rods_single = time_rods_single(single)

    with tempfile.TemporaryDirectory() as tmp:
        path, out, empty = Path(tmp) / "k.jsonl", Path(tmp) / "out.jsonl", Path(tmp) / "empty.jsonl"
        path.write_text("".join(json.dumps({"task_id": t.id, "steps": s}) + "\n" for t, s in group))
        empty.write_text("")
        cache = Path(tmp) / "cache"
        time_rods_cli(path, out, cache)  # fills the cache
        # Alternate the three so all see the same neighbours; keep each one's best run.
        official_runs, rods_runs, cold_runs = [], [], []
        for _ in range(max(1, args.repeats)):
            official_runs.append(time_official(group))
            rods_runs.append(time_rods_cli(path, out, cache))
            cold_runs.append(time_rods_cli(path, out, None))
        official_k_t, official_k = min(official_runs, key=lambda r: r[0].cpu)
        rods_k_t, rods_k = min(rods_runs, key=lambda r: r[0].cpu)
        rods_cold_t, rods_cold = min(cold_runs, key=lambda r: r[0].cpu)
        clear_ground_truth_cache()
        with Clock() as rods_k_inproc_t:
            warm = [score(t, s).binary for t, s in group]
        parts, n_fast, n_exec = breakdown(group, empty, out)

    agree = sum(a == b for a, b in zip(official_single + official_k, rods_single + rods_k))
    agreement = agree / (len(single) + len(group))
    assert warm == rods_k == rods_cold
    speedup_single = ratio(official_single_t.cpu, rods_single_t.cpu)
    speedup_k16 = ratio(official_k_t.cpu, rods_k_t.cpu)

    print(f"{len(tasks)} tasks ({args.per_category} per category); {len(single)} single trajectories; "
          f"{len(group)} trajectories at K={args.k}; {sum(official_k)} of the K={args.k} pass BFCL")
    print(f"{'regime':<34}{'official cpu/wall (s)':>22}{'rods cpu/wall (s)':>19}"
          f"{'ms/traj off/rods (cpu)':>24}{'speedup cpu/wall':>18}")
    rows = [
        ("single, cold GT cache (in-process)", official_single_t, rods_single_t, len(single)),
        (f"K={args.k}, `rods reward`, cached GT", official_k_t, rods_k_t, len(group)),
        (f"K={args.k}, `rods reward --no-cache`", official_k_t, rods_cold_t, len(group)),
        (f"K={args.k}, rods in-process", official_k_t, rods_k_inproc_t, len(group)),
    ]
    for name, off, ours, n in rows:
        print(
            f"{name:<34}{off.cpu:>12.2f} /{off.wall:>7.2f}{ours.cpu:>10.2f} /{ours.wall:>6.2f}"
            f"{1e3 * off.cpu / n:>14.3f} /{1e3 * ours.cpu / n:>6.3f}"
            f"{ratio(off.cpu, ours.cpu):>10.1f}x /{ratio(off.wall, ours.wall):>4.1f}x"
        )
    print(f"agreement with BFCL (binary verdict): {agree}/{len(single) + len(group)}")
    total = sum(parts.values())
    print(f"where rods' K={args.k} CPU time goes ({total:.2f}s; {n_fast} of {n_fast + n_exec} turns "
          f"matched the ground truth's calls from its state and reused its cached outcome):")
    for name, secs in parts.items():
        print(f"  {name:<54}{secs:>7.2f}s {100 * secs / total:>5.1f}%")
    print(json.dumps({
        "agreement": round(agreement, 6),
        "speedup_single": figure(speedup_single),
        "speedup_k16_cli": figure(speedup_k16),
        "speedup_k16_cli_cold": figure(ratio(official_k_t.cpu, rods_cold_t.cpu)),
        "speedup_k16_wall": figure(ratio(official_k_t.wall, rods_k_t.wall)),
        "timing": "cpu",
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
