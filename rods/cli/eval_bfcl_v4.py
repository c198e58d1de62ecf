"""`rods eval --suite bfcl_v4`: BFCL V4's offline single-turn categories, scored by bfcl-eval's own checkers.

The policy is `rods eval`'s (`--model`, `--base-url`, `--max-new-tokens`,
`--threads`, `--native-tools` / `--tools-in-prompt`, ...); this module adds the
"BFCL V4" options. Prints a table per category with BFCL's summary columns,
lists the categories not run and why, and writes `report.json` and
`results.jsonl` (each entry's raw reply, decoded calls and verdict) under
`--out` (see `rods.eval.bfcl_v4`).
"""

from __future__ import annotations

import argparse
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "BFCL V4", "with --suite bfcl_v4: BFCL V4's single-turn categories that need no network"
    )
    group.add_argument(
        "--v4-categories", default=None,
        help="comma-separated BFCL V4 categories or collections (e.g. simple_python,live,non_live,"
             "format_sensitivity); default: all of them (those that need the network are listed as skipped)",
    )
    group.add_argument("--v4-limit", type=int, default=None, help="entries per category (a seeded draw)")
    group.add_argument("--v4-seed", type=int, default=0, help="seed of the --v4-limit draw")


#: `rods eval` options of the multi-turn suite that this suite does not read: (flag, dest, default).
_MULTI_TURN_ONLY = (("--categories", "categories", None), ("--limit", "limit", None), ("--tasks", "tasks", None),
                    ("--k", "k", 1))


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from rods.cli.eval import _set_threads, build_policy
    from rods.eval.bfcl_v4 import evaluate_v4, load_entries, resolve_categories

    console = Console(stderr=True)
    ignored = [flag for flag, dest, default in _MULTI_TURN_ONLY if getattr(args, dest, default) != default]
    if ignored:
        console.print(f"[yellow]--suite bfcl_v4 does not read {', '.join(ignored)} (see --v4-categories, --v4-limit)")
    categories, skipped = resolve_categories(args.v4_categories)
    if not categories:
        raise ValueError(f"--v4-categories: nothing runnable offline; not run: {skipped}")
    entries, sizes = load_entries(categories, limit=args.v4_limit, seed=args.v4_seed)
    restore = _set_threads(args.threads) if args.threads and not args.base_url else None
    try:
        policy = build_policy(args)
        if hasattr(policy, "prefix_cache_size"):  # single-turn prompts share only BFCL's system prompt
            policy.prefix_cache_size = min(policy.prefix_cache_size, 4)
        native = None if args.tools_in_prompt is None else not args.tools_in_prompt
        with Progress(TextColumn("bfcl v4"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            job = bar.add_task("entries", total=len(entries))
            report, _ = evaluate_v4(
                policy, entries, sizes, native=native, skipped=skipped, model=args.model or "",
                out_dir=args.out, progress=lambda done, _total: bar.update(job, completed=done),
            )
    finally:
        if restore is not None:
            _set_threads(restore)
    Console().print(report_table(report))
    for name, why in report.skipped.items():
        console.print(f"not run: {name}: {why}")
    console.print(f"{report.n_entries} entries in {report.seconds:.1f}s; wrote {args.out}/report.json")
    return 0


def report_table(report: Any) -> Any:
    """The per-category table, then BFCL's summary columns."""
    from rich.table import Table

    table = Table(title=f"BFCL V4 single-turn ({report.mode}, {report.n_entries} entries): {report.model}")
    for column in ("category", "n", "of", "accuracy", "replies with calls", "unreadable calls"):
        table.add_column(column, justify="left" if column == "category" else "right")
    for name, c in report.categories.items():
        table.add_row(name, str(c.n), str(c.size), f"{100 * c.accuracy:.2f}", f"{100 * c.call_rate:.1f}%",
                      f"{100 * c.decode_error_rate:.1f}%")
    for name, s in report.summaries.items():
        table.add_row(f"{name} (BFCL)", "", str(s["total_count"]), f"{100 * s['accuracy']:.2f}", "", "", style="bold")
    spread = report.format_sensitivity
    if spread:
        table.add_row(f"format sensitivity spread ({len(spread['by_config'])} variants)", "", "",
                      f"std {spread['accuracy_std']:.2f}", f"max-min {spread['accuracy_max_delta']:.2f}", "")
    return table
