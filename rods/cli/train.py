"""`rods train --config FILE.yaml`: closed-loop GRPO with the data engine (TRL, one machine).

The YAML file is a `rods.train.TrainConfig` (see `configs/`: the embedded CPU
demo, the paper's Qwen3-4B setting, and the baselines and ablations under
`configs/ablations/`). `--set section.key=value` overrides single fields.
Everything the run produces goes to its run directory (see `rods.train.run`).
"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("train", help="GRPO training with the RODS data engine", description=__doc__)
    p.add_argument("--config", required=True, help="experiment YAML (e.g. configs/demo.yaml)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override one field, e.g. --set grpo.max_steps=20 (repeatable)")
    p.add_argument("--output-dir", default=None, help="run directory (default: the config's output_dir or runs/<name>)")
    p.add_argument("--resume", nargs="?", const=True, default=False, metavar="CHECKPOINT",
                   help="continue the run from its newest checkpoint (or the one given)")
    p.add_argument(
        "--print-config", action="store_true", help="print the resolved config, every field with its help, and exit"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from rods.train import load_config
    from rods.train.load import explain_config

    overrides = list(args.overrides)
    if args.output_dir:
        overrides.append(f"output_dir={args.output_dir}")
    config = load_config(args.config, overrides)
    if args.print_config:
        print(explain_config(config))  # plain: rich would re-wrap the YAML
        return 0
    console = Console()
    summary = train_and_print(config, resume=args.resume, console=console)
    return 0 if summary.steps > 0 else 1


def train_and_print(config, *, resume=False, console=None):
    """Run `config` and print what happened (shared with `rods demo`)."""
    from rich.console import Console
    from rich.table import Table

    from rods.train.run import train

    console = console or Console()
    console.print(f"[bold]rods train[/bold] {config.name}: {config.description or ''}")
    console.print(f"run directory: {config.run_dir}")

    def on_epoch(report) -> None:
        console.print(
            f"  epoch {report.epoch} ends at step {report.step}: injected {len(report.injected)}, "
            f"retired {len(report.retired)} {sorted(set(report.retired.values())) or ''}, "
            f"active {report.active} ({report.active_synthetic} synthetic), queue {report.queue}"
        )

    summary = train(config, resume=resume, on_epoch=on_epoch)
    if summary.warm_start:
        ws = summary.warm_start
        console.print(
            f"warm start: {ws['examples']} gold turns, {ws['steps']} SFT steps; tool-call parse rate "
            f"{ws['before']['parse_rate']:.2f} -> {ws['after']['parse_rate']:.2f}, greedy progress "
            f"{ws['before']['mean_progress']:.2f} -> {ws['after']['mean_progress']:.2f} "
            f"(on {ws['before']['tasks']} held-out seeds)"
        )
    table = Table(title=f"{config.name}: {summary.steps} GRPO steps in {summary.seconds:.0f}s")
    for col in ("seeds", "epochs", "selected", "injected", "retired", "active", "synthetic active"):
        table.add_column(col, justify="right")
    table.add_row(*map(str, (summary.seeds, summary.epochs, summary.selected, summary.injected, summary.retired,
                             summary.active, summary.active_synthetic)))
    console.print(table)
    if summary.step_seconds:
        mean = sum(summary.step_seconds) / len(summary.step_seconds)
        console.print(f"mean step time {mean:.1f}s; trainer log: {config.run_dir}/trainer_log.jsonl")
    return summary
