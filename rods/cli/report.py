"""`rods report RUN_DIR`: draw the pool-dynamics figures of a run and print a summary."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("report", help="draw a run's pool-dynamics figures (PNG)", description=__doc__)
    p.add_argument("run_dir", type=Path, help="run directory (holding the engine logs, or an engine/ folder)")
    p.add_argument("--out", type=Path, default=None, help="where to write the PNGs (default: <engine dir>/report)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rods.report import make_report

    paths, summary = make_report(args.run_dir, args.out)
    if args.json:
        print(json.dumps(summary))
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"rods report: {args.run_dir}", show_header=False)
        for key, value in summary.items():
            if isinstance(value, float):
                value = f"{value:.3f}"
            table.add_row(key, str(value))
        Console(stderr=True).print(table)
    for path in paths:
        print(path, file=sys.stderr)
    return 0
