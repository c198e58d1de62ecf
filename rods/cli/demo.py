"""`rods demo`: an end-to-end run without a model (interim, until training lands).

Loads the BFCL train split, rolls each task's ground truth through its own
environment turn by turn (as a rollout loop would), scores it with the
incremental progress scorer, and prints a per-category table.
"""

from __future__ import annotations

import argparse
import time


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("demo", help="replay the train split's ground truth and score it", description=__doc__)
    p.add_argument("--split", choices=("train", "test", "all"), default="train")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from collections import defaultdict

    from rich.console import Console
    from rich.progress import track
    from rich.table import Table

    from rods.reward import ProgressScorer, is_empty_response
    from rods.reward.perturb import replay
    from rods.tasks import CATEGORIES, load_split

    console = Console()
    tasks = load_split(args.split)
    stats: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for task in track(tasks, description=f"replaying {len(tasks)} {args.split} tasks", console=console):
        started = time.perf_counter()
        scorer = ProgressScorer(task)
        env = scorer.new_env()
        calls = 0
        for turn_steps in replay(task):
            results = [env.execute(call) for step in turn_steps for call in step]
            calls += len(results)
            scorer.end_turn(env, results, empty=is_empty_response(turn_steps))
        result = scorer.result()
        row = stats[task.category]
        row["tasks"] += 1
        row["rp"] += result.progress
        row["binary"] += result.binary
        row["calls"] += calls
        row["time"] += time.perf_counter() - started

    table = Table(title=f"BFCL {args.split} split: ground truth replayed through rods.envs, scored by rods.reward")
    for col in ("category", "tasks", "RP mean", "binary acc", "calls", "time (s)"):
        table.add_column(col, justify="left" if col == "category" else "right")
    total: dict[str, float] = defaultdict(float)
    for category in CATEGORIES:
        row = stats.get(category)
        if not row:
            continue
        for k, v in row.items():
            total[k] += v
        n = row["tasks"]
        table.add_row(category, f"{n:.0f}", f"{row['rp'] / n:.3f}", f"{row['binary'] / n:.3f}", f"{row['calls']:.0f}", f"{row['time']:.2f}")
    n = total["tasks"]
    if n:
        table.add_row("all", f"{n:.0f}", f"{total['rp'] / n:.3f}", f"{total['binary'] / n:.3f}", f"{total['calls']:.0f}", f"{total['time']:.2f}", style="bold")
    console.print(table)
    return 0
