"""`rods tasks`: export BFCL splits (or tau2-bench's domains) as task files, cut them into turn slices, and
validate task files by replay."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

#: `rods tasks export` sources beside BFCL.
TAU2_SOURCES = ("tau2:airline", "tau2:retail")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("tasks", help="export and validate task files", description=__doc__)
    sub = p.add_subparsers(dest="tasks_command", metavar="ACTION", required=True)

    exp = sub.add_parser("export", help="write a BFCL split (or a tau2-bench domain's tasks) as a JSONL task file")
    exp.add_argument(
        "source",
        nargs="?",
        default="bfcl",
        choices=("bfcl", *TAU2_SOURCES),
        help="where the tasks come from (default bfcl); tau2:DOMAIN converts tau2-bench's tasks to seeds",
    )
    exp.add_argument("--split", choices=("train", "test", "all"), default="train", help="the source's own split")
    exp.add_argument("--out", type=Path, required=True, help="output JSONL file")
    exp.set_defaults(func=export)

    cut = sub.add_parser("slice", help="write the turn slices of a task file (each turn with its history) as tasks")
    cut.add_argument("file", help="a JSONL/parquet task file, or a BFCL split: train, test, all")
    cut.add_argument("--out", type=Path, required=True, help="output JSONL file")
    cut.add_argument("--max-calls", type=int, default=None, help="keep slices with at most this many gold calls")
    cut.set_defaults(func=slice_tasks)

    val = sub.add_parser("validate", help="check a task file: every task's ground truth replays with RP = 1")
    val.add_argument("file", type=Path)
    val.set_defaults(func=validate)


def export(args: argparse.Namespace) -> int:
    from rods.tasks import load_split, write_tasks

    if args.source in TAU2_SOURCES:
        return export_tau2(args)
    tasks = load_split(args.split)
    count = write_tasks(args.out, tasks)
    print(f"wrote {count} tasks ({args.split}) to {args.out}", file=sys.stderr)
    return 0


def export_tau2(args: argparse.Namespace) -> int:
    """tau2-bench's tasks of one domain as seeds; the tasks that cannot be one are named with the reason."""
    from rods.envs.tau2.tasks import convert
    from rods.tasks import write_tasks

    domain = args.source.split(":", 1)[1]
    result = convert(domain, args.split)
    for task_id, reason in result.skipped.items():
        print(f"tau2 {domain} task {task_id} left out: {reason}", file=sys.stderr)
    count = write_tasks(args.out, result.tasks)
    print(f"wrote {count} tau2 {domain} seeds ({args.split}) to {args.out}", file=sys.stderr)
    return 0


def slice_tasks(args: argparse.Namespace) -> int:
    """Turn slices (`rods.envs.slices`) of every task, turn by turn; `rods synth` makes variants of them."""
    from rods.envs.slices import turn_slices
    from rods.tasks import read_task_source, write_tasks

    tasks = read_task_source(args.file)
    pieces = turn_slices(tasks, max_calls=args.max_calls)
    count = write_tasks(args.out, pieces)
    print(f"wrote {count} turn slices of {len(tasks)} tasks to {args.out}", file=sys.stderr)
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
