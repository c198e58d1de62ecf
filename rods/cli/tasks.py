"""`rods tasks`: export BFCL splits as task files, and validate task files by replay."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("tasks", help="export and validate task files", description=__doc__)
    sub = p.add_subparsers(dest="tasks_command", metavar="ACTION", required=True)

    exp = sub.add_parser("export", help="write a BFCL split as a JSONL task file")
    exp.add_argument("--split", choices=("train", "test", "all"), default="train")
    exp.add_argument("--out", type=Path, required=True, help="output JSONL file")
    exp.set_defaults(func=export)

    val = sub.add_parser("validate", help="check a task file: every task's ground truth replays with RP = 1")
    val.add_argument("file", type=Path)
    val.set_defaults(func=validate)


def export(args: argparse.Namespace) -> int:
    from rods.tasks import load_split, write_tasks

    tasks = load_split(args.split)
    count = write_tasks(args.out, tasks)
    print(f"wrote {count} tasks ({args.split}) to {args.out}", file=sys.stderr)
    return 0


def validate(args: argparse.Namespace) -> int:
    from rods.reward import score
    from rods.reward.perturb import replay
    from rods.tasks import read_tasks

    tasks = read_tasks(args.file)
    failed = []
    for task in tasks:
        result = score(task, replay(task))
        if result.progress != 1.0 or result.binary != 1:
            failed.append((task.id, result))
    for task_id, result in failed:
        print(
            f"{task_id}: ground truth does not replay (state {result.state_pass}, exec {result.exec_pass})",
            file=sys.stderr,
        )
    print(f"{len(tasks) - len(failed)}/{len(tasks)} tasks replay with RP = 1", file=sys.stderr)
    return 1 if failed else 0
