"""`rods envs check`: does an environment keep the contract rods relies on (`rods.envs.check`)?"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("envs", help="check environments", description=__doc__)
    sub = p.add_subparsers(dest="envs_command", metavar="ACTION", required=True)

    chk = sub.add_parser(
        "check",
        help="run an environment's conformance checks (resets, forks, read/write tools, errors, JSON state)",
        description="Run an environment as rods will and check, one line per finding, that its resets are "
        "deterministic, its forks isolated, its read tools read and its write tools write, its errors are seen "
        "as errors and its state is JSON. Exits non-zero on any FAIL. Drawn calls run every tool with made-up "
        "arguments: check an environment whose tools touch nothing outside it.",
    )
    chk.add_argument("environment", metavar="ENV",
                     help="an environment name as tasks write it: bfcl, an import path package.module:Class, "
                     "or an MCP manifest path")
    chk.add_argument("--seeds", metavar="FILE",
                     help="seeds of this environment, a task file (or for bfcl a split: train, test, all): "
                     "their initial configs and gold calls are run too (without it, the empty config and drawn "
                     "calls only)")
    chk.add_argument("--calls-per-tool", type=int, default=3, metavar="N",
                     help="calls drawn from each tool's schema (default 3)")
    chk.add_argument("--seed", type=int, default=0, help="the seed of the drawn calls (default 0)")
    chk.set_defaults(func=check)


def check(args: argparse.Namespace) -> int:
    from rods.envs.check import check_environment
    from rods.tasks import read_task_source

    if args.calls_per_tool < 1:
        raise ValueError("--calls-per-tool must be at least 1")
    tasks = []
    if args.seeds is not None:
        if Path(args.seeds).is_dir():
            raise ValueError(f"--seeds {args.seeds}: is a directory, not a task file")
        tasks = read_task_source(args.seeds)
        if not tasks:
            raise ValueError(f"--seeds {args.seeds}: holds no tasks")
    report = check_environment(args.environment, tasks, calls_per_tool=args.calls_per_tool, seed=args.seed)
    for finding in report.findings:
        print(finding.line())
        for detail in finding.details:
            print(f"     {detail}")
    print(report.summary(), file=sys.stderr)
    return 1 if report.failed else 0
