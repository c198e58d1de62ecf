"""`rods compare --arms A.yaml B.yaml ... --seeds N --out DIR`: training configs side by side.

Runs every arm (a `rods train` config) for the same number of steps on the same
seed tasks, once per random seed (0..N-1: the trainer seed and run directory
are overridden, nothing else), each run in its own process under
DIR/runs/<arm>/seed-<s>/. Each run evaluates a fixed held-out split
(DIR/heldout.jsonl, drawn once from the test split shaped like the arms'
seeds) greedily before GRPO (after any warm start) and after it. Then writes
DIR/comparison.json, DIR/table.md and the figures informative_fraction.png and
heldout.png. Rerun the same command after an interruption: finished runs are
skipped, unfinished ones resume from their newest checkpoint. With --summarize,
nothing runs: the table and figures of the runs finished so far are written,
the unfinished ones named (a comparison that spans sessions).
"""

from __future__ import annotations

import argparse
import signal
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("compare", help="run training configs side by side over several seeds",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arms", nargs="+", required=True, metavar="CONFIG.yaml", help="training configs, one per arm")
    p.add_argument("--seeds", type=int, default=2, help="random seeds per arm (default: 2)")
    p.add_argument("--out", type=Path, required=True, help="comparison directory (reuse it to resume)")
    p.add_argument("--steps", type=int, default=None, help="GRPO steps of every run (default: the configs' max_steps, "
                   "which must then agree)")
    p.add_argument("--heldout", type=int, default=16, help="held-out tasks evaluated before/after (0: none)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override one field of every arm, e.g. --set warm_start.max_steps=2 (repeatable)")
    p.add_argument("--parallel", type=int, default=1, help="runs at a time (CPU threads are split between them)")
    p.add_argument("--ood", action="append", default=[], metavar="'SUITE[: ARGS]'",
                   help="also score each run's last checkpoint with rods eval's suite SUITE and these eval arguments "
                   "(repeatable), e.g. 'bfcl_v4: --v4-limit 20' or 'tau2: --domain airline --user-base-url URL'")
    p.add_argument("--summarize", action="store_true",
                   help="run nothing: write the table and figures of the runs finished so far")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.table import Table

    from rods.compare import run_comparison
    from rods.compare.summary import ood_column

    def interrupted(signum, frame):  # SIGTERM stops the running jobs too (see run_comparison)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    console = Console()
    if args.summarize:
        from rods.compare import summarize_finished

        summary, pending = summarize_finished(args.arms, args.out, seeds=args.seeds, steps=args.steps,
                                              overrides=args.overrides)
        console.print(f"{len(summary['runs'])} finished runs summarized, {len(pending)} not yet: "
                      f"{', '.join(f'{r.arm}/seed-{r.seed}' for r in pending) or 'none'}; wrote {args.out}/table.md")
        return 0
    console.print(f"[bold]rods compare[/bold]: {len(args.arms)} arms x {args.seeds} seeds -> {args.out}")
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console) as bar:
        job = bar.add_task("runs", total=len(args.arms) * args.seeds)

        def on_event(kind: str, spec) -> None:
            name = f"{spec.arm}/seed-{spec.seed}"
            if kind == "skip":
                bar.console.print(f"  {name}: finished before, skipped")
                bar.advance(job)
            elif kind == "start":
                bar.update(job, description=f"running {name}")
            elif kind == "done":
                bar.console.print(f"  {name}: done ({spec.run_dir})")
                bar.advance(job)
            else:
                bar.console.print(f"  [red]{name}: failed[/red], see {spec.run_dir / 'job.log'}")
                bar.advance(job)

        result = run_comparison(args.arms, args.out, seeds=args.seeds, steps=args.steps, heldout=args.heldout,
                                parallel=args.parallel, overrides=args.overrides, ood=args.ood, on_event=on_event)
    table = Table(title=f"{result.summary['steps']} steps, {args.seeds} seeds per arm (mean ± std over seeds)")
    for column in ("arm", "informative fraction (late)", "mean reward", "held-out RP before", "held-out RP after",
                   "synthesized", "injected"):
        table.add_column(column, justify="left" if column == "arm" else "right")

    def fmt(s) -> str:
        return "n/a" if s["mean"] is None else f"{s['mean']:.3f} ± {s['std']:.3f}"

    ood = sorted({k for a in result.summary["arms"].values() for k in a if k.startswith("ood/")})
    for key in ood:
        table.add_column(ood_column(key), justify="right")
    for name, a in result.summary["arms"].items():
        table.add_row(name, fmt(a["informative_fraction_late"]), fmt(a["mean_reward"]),
                      fmt(a["heldout_progress_before"]), fmt(a["heldout_progress_after"]),
                      fmt(a["synthesized"]), fmt(a["injected"]), *(fmt(a[k]) if k in a else "-" for k in ood))
    console.print(table)
    console.print(f"ran {len(result.ran)}, skipped {len(result.skipped)} finished runs; wrote {args.out}/table.md, "
                  f"{args.out}/comparison.json and {len(result.summary['figures'])} figures")
    return 0
