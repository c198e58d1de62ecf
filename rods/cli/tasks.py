"""`rods tasks`: export BFCL splits (or tau2-bench's domains) as task files, cut them into turn slices, and
validate task files: every gold call exists, fits its schema and succeeds (or fails where the task expects it),
two replays agree, and the ground truth scores RP = 1 against itself."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rods.tasks import Task

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

    val = sub.add_parser(
        "validate",
        help="check a task file: every gold call valid and succeeding, replays deterministic, RP = 1",
        description="Check every task of a task file: each gold call names a function of the task's environment, "
        "fits its schema and succeeds (or fails, where the task's expected_errors says it must); two replays give "
        "the same results and states; the ground truth scores RP = 1 against itself. Each failure is one line "
        "(file:line: task ID: turn T, call C TEXT: reason). Without --keep-going the check stops at the first "
        "failing task; with it every task is checked, and --out writes those that pass. The exit code is 1 when "
        "any task fails.",
    )
    val.add_argument("file", type=Path, help="a JSONL (or parquet) task file")
    val.add_argument("--keep-going", action="store_true", help="check every task instead of stopping at the first "
                     "failing one")
    val.add_argument("--out", type=Path, default=None, help="with --keep-going: write the tasks that pass here")
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
    """Check every task of a file (see the parser's description); one line per failure, exit 1 if any."""
    from rods.tasks import write_tasks
    from rods.tasks.jsonlines import output_file
    from rods.tasks.task_files import TaskFileError, task_lines

    if args.out is not None and not args.keep_going:
        raise ValueError("--out needs --keep-going (without it the check stops at the first failing task)")
    if args.out is not None:
        output_file(args.out)  # a bad output path fails now, not after every task is checked
    passed, failed, seen = [], 0, {}
    for lineno, task in task_lines(args.file):
        where = f"{args.file}:{lineno}"
        if isinstance(task, TaskFileError):
            lines = [f"{where}: {task.reason if task.field is None else f'field {task.field!r}: {task.reason}'}"]
        elif task.id in seen:
            lines = [f"{where}: task {task.id}: duplicate task id (first at line {seen[task.id]})"]
        else:
            seen[task.id] = lineno
            lines = task_failures(task, where)
        if not lines:
            passed.append(task)
            continue
        failed += 1
        for line in lines:
            print(line, file=sys.stderr)
        if not args.keep_going:
            print(f"stopped at the first failing task ({where}); --keep-going checks every task", file=sys.stderr)
            return 1
    total = len(passed) + failed
    print(f"{len(passed)}/{total} tasks pass (gold calls valid, replays agree, RP = 1)", file=sys.stderr)
    if args.out is not None:
        count = write_tasks(args.out, passed)
        print(f"wrote the {count} passing tasks to {args.out}", file=sys.stderr)
    return 1 if failed else 0


def task_failures(task: Task, where: str) -> list[str]:
    """One line per reason `task` fails: its gold calls (`rods.envs.validation`), then RP = 1 against itself."""
    from rods.envs.validation import describe, validate_task
    from rods.reward import score
    from rods.reward.perturb import replay

    failures = validate_task(task)
    if failures:
        return [describe(f, task.id, where) for f in failures]
    result = score(task, replay(task))
    if result.progress == 1.0 and result.binary == 1:
        return []
    turns = [t for t, (s, e) in enumerate(zip(result.state_pass, result.exec_pass)) if s is False or e is False]
    said = (f"turn {turns[0]}: the state check {'passes' if result.state_pass[turns[0]] else 'fails'}, the execution "
            f"check {'passes' if result.exec_pass[turns[0]] else 'fails'}; ") if turns else ""
    return [f"{where}: task {task.id}: {said}the ground truth scores RP = {result.progress:.2f} against itself"]
