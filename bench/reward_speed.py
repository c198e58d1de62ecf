"""Reward speed and agreement: rods.reward vs BFCL's official multi-turn checker.

The same trajectories (ground-truth replays and perturbed ones, all four
categories) are scored by both, in one run:

* single: one trajectory per task at a time, rods with a cold ground-truth cache
  (it executes the ground truth for every trajectory, like the official checker);
* K=16: 16 rollouts per task (the GRPO regime) written to a JSONL file; rods is
  timed end to end as a `rods reward` subprocess (interpreter start-up, imports,
  task loading included), the official checker in-process over the same lines.

Prints a table, where rods' time goes, and as its last line one JSON object:
`{"agreement": ..., "speedup_single": ..., "speedup_k16": ...}`.

Usage: python bench/reward_speed.py [--per-category 50] [--k 16]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rods.reward import clear_ground_truth_cache, ground_truth_for, is_empty_response, score
from rods.reward.official import official_verdict
from rods.reward.perturb import KINDS, perturb
from rods.tasks import CATEGORIES, load_bfcl_tasks


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


def time_official(pairs):
    verdicts = []
    started = time.perf_counter()
    for task, steps in pairs:
        verdicts.append(int(official_verdict(task, steps)["valid"]))
    return time.perf_counter() - started, verdicts


def time_rods_single(pairs):
    verdicts = []
    started = time.perf_counter()
    for task, steps in pairs:
        clear_ground_truth_cache()
        verdicts.append(score(task, steps).binary)
    return time.perf_counter() - started, verdicts


def time_rods_cli(path: Path, out: Path):
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "rods", "reward", "--trajectories", str(path), "--out", str(out)],
        check=True, capture_output=True,
    )
    elapsed = time.perf_counter() - started
    return elapsed, [json.loads(line)["binary"] for line in out.read_text().splitlines()]


def breakdown(pairs, empty_file: Path, out: Path):
    """Where rods' K=16 time goes, measured in-process (plus one empty CLI run for start-up)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "rods", "reward", "--trajectories", str(empty_file), "--out", str(out)], check=True, capture_output=True)
    startup = time.perf_counter() - started
    clear_ground_truth_cache()
    tasks = {t.id: t for t, _ in pairs}
    t0 = time.perf_counter()
    gts = {tid: ground_truth_for(t) for tid, t in tasks.items()}
    t_gt = time.perf_counter() - t0
    from rods.reward import ProgressScorer

    t_spawn = t_exec = t_check = 0.0
    for task, steps in pairs:
        a = time.perf_counter()
        scorer = ProgressScorer(task, gts[task.id])
        env = scorer.new_env()
        b = time.perf_counter()
        t_spawn += b - a
        for turn_steps in steps:
            c = time.perf_counter()
            results = [env.execute(call) for step in turn_steps for call in step]
            d = time.perf_counter()
            scorer.end_turn(env, results, empty=is_empty_response(turn_steps))
            t_exec += d - c
            t_check += time.perf_counter() - d
        scorer.result()
    return {
        "process start-up + imports + 800 task loads": startup,
        "ground truth, once per task": t_gt,
        "env spawn per rollout (unpickle template)": t_spawn,
        "executing rollout calls (parse + API + format)": t_exec,
        "state + response checks": t_check,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-category", type=int, default=50, help="tasks per category")
    parser.add_argument("--k", type=int, default=16, help="rollouts per task in the GRPO regime")
    args = parser.parse_args()

    tasks = choose_tasks(args.per_category)
    single = [(t, perturb(t, kind)) for t in tasks for kind in ("replay", "dropped", "wrong_argument", "moved_between_turns")]
    single = [(t, s) for t, s in single if s is not None]
    group = [(t, s) for t in tasks for s in rollouts(t, args.k)]

    official_single_s, official_single = time_official(single)
    rods_single_s, rods_single = time_rods_single(single)

    with tempfile.TemporaryDirectory() as tmp:
        path, out, empty = Path(tmp) / "k.jsonl", Path(tmp) / "out.jsonl", Path(tmp) / "empty.jsonl"
        path.write_text("".join(json.dumps({"task_id": t.id, "steps": s}) + "\n" for t, s in group))
        empty.write_text("")
        official_k_s, official_k = time_official(group)
        rods_k_s, rods_k = time_rods_cli(path, out)
        clear_ground_truth_cache()
        started = time.perf_counter()
        warm = [score(t, s).binary for t, s in group]
        rods_k_inproc_s = time.perf_counter() - started
        parts = breakdown(group, empty, out)

    agree = sum(a == b for a, b in zip(official_single + official_k, rods_single + rods_k))
    agreement = agree / (len(single) + len(group))
    assert warm == rods_k
    speedup_single = official_single_s / rods_single_s
    speedup_k16 = official_k_s / rods_k_s

    print(f"{len(tasks)} tasks ({args.per_category} per category); {len(single)} single trajectories; "
          f"{len(group)} trajectories at K={args.k}; {sum(official_k)} of the K={args.k} pass BFCL")
    print(f"{'regime':<34}{'official (s)':>13}{'rods (s)':>10}{'ms/traj official':>18}{'ms/traj rods':>14}{'speedup':>9}")
    rows = [
        ("single, cold GT cache (in-process)", official_single_s, rods_single_s, len(single)),
        (f"K={args.k}, `rods reward` subprocess", official_k_s, rods_k_s, len(group)),
        (f"K={args.k}, rods in-process", official_k_s, rods_k_inproc_s, len(group)),
    ]
    for name, off, ours, n in rows:
        print(f"{name:<34}{off:>13.2f}{ours:>10.2f}{1e3 * off / n:>18.3f}{1e3 * ours / n:>14.3f}{off / ours:>8.1f}x")
    print(f"agreement with BFCL (binary verdict): {agree}/{len(single) + len(group)}")
    total = sum(parts.values())
    print(f"where rods' K={args.k} time goes (in-process re-run, {total:.2f}s):")
    for name, secs in parts.items():
        print(f"  {name:<48}{secs:>7.2f}s {100 * secs / total:>5.1f}%")
    print(json.dumps({"agreement": round(agreement, 6), "speedup_single": round(speedup_single, 2), "speedup_k16": round(speedup_k16, 2)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
