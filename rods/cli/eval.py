"""`rods eval`: score a policy on BFCL V3 multi-turn tasks (default: the test split).

A policy is a local model (`--model PATH`: a model folder, a `.gguf` file, or
`embedded` for SmolLM2-135M-Instruct) or an OpenAI-compatible endpoint
(`--base-url URL --model NAME`: vLLM, SGLang, llama.cpp, ...). Prints a table
per category, writes `report.json`, `trajectories.jsonl` and `decoded.jsonl`
(the calls in the form BFCL's checker reads) under `--out`, and re-scores the
decoded calls with BFCL's official checker.
"""

from __future__ import annotations

import argparse
import importlib
import os
from pathlib import Path
from typing import Any

from rods.eval import SUITE_NAMES
from rods.tasks import CATEGORIES

#: Suites beside BFCL V3 multi-turn (the default): name -> the module that adds its options
#: (`add_arguments(parser)`) and runs it (`run(args) -> int`), with the policy options below.
SUITES: dict[str, str] = {name: f"rods.cli.eval_{name}" for name in SUITE_NAMES if name != "multi_turn"}


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("eval", help="score a policy on BFCL multi-turn tasks", description=__doc__)
    p.add_argument("--suite", choices=("multi_turn", *SUITES), default="multi_turn",
                   help="what to evaluate: BFCL V3 multi-turn (default) or another suite")
    src = p.add_argument_group("policy")
    src.add_argument(
        "--model", default=None,
        help="model folder, .gguf file or 'embedded'; with --base-url: the served name (default: the server's first)",
    )
    src.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    src.add_argument("--api-key", default=None, help="endpoint key (default: $OPENAI_API_KEY or 'EMPTY')")
    src.add_argument("--concurrency", type=int, default=8, help="endpoint requests in flight")
    src.add_argument("--batch-size", type=int, default=8, help="local model: prompts per generate call")
    src.add_argument("--max-new-tokens", type=int, default=512, help="reply length cap")
    src.add_argument("--temperature", type=float, default=0.0, help="0 = greedy")
    src.add_argument("--top-p", type=float, default=1.0)
    src.add_argument(
        "--tool-format", choices=("hermes", "pythonic"), default="hermes", help="how the policy writes calls"
    )
    tools = src.add_mutually_exclusive_group()
    tools.add_argument("--tools-in-prompt", dest="tools_in_prompt", action="store_true", default=None,
                       help="describe the tools in the messages (default when the chat template has no tools)")
    tools.add_argument("--native-tools", dest="tools_in_prompt", action="store_false",
                       help="pass tools to the chat template / endpoint")
    src.add_argument("--threads", type=int, default=None,
                     help="local model: torch CPU threads (1 is often faster on a busy or 2-core machine)")
    src.add_argument(
        "--tool-docs",
        choices=("full", "compact", "signatures"),
        default="full",
        help="tool descriptions: full JSON, compact signature lines, or signatures (a short prompt; tiny models)",
    )
    data = p.add_argument_group("tasks")
    data.add_argument("--split", choices=("test", "train", "all"), default="test")
    data.add_argument("--tasks", type=Path, default=None, help="task JSONL file instead of a BFCL split")
    data.add_argument("--categories", default=None, help=f"comma-separated subset of {','.join(CATEGORIES)}")
    data.add_argument("--limit", type=int, default=None, help="evaluate a stratified subset of N tasks")
    data.add_argument("--seed", type=int, default=0, help="seed of the --limit draw")
    run = p.add_argument_group("rollouts")
    run.add_argument("--k", type=int, default=1, help="rollouts per task")
    run.add_argument("--max-steps", type=int, default=20, help="replies with tool calls per user turn (BFCL: 20)")
    run.add_argument("--step-cap", choices=("force_quit", "end_turn"), default="force_quit",
                     help="at the cap: fail the entry as BFCL does, or only end the turn")
    run.add_argument("--no-official-check", action="store_true", help="skip re-scoring with BFCL's checker")
    p.add_argument("--out", type=Path, required=True, help="run directory to write")
    for module in SUITES.values():
        importlib.import_module(module).add_arguments(p)
    p.set_defaults(func=main)


def select_tasks(args: argparse.Namespace) -> list[Any]:
    """The tasks this run evaluates (split or file, categories, stratified limit)."""
    from rods.eval import stratified_subset
    from rods.tasks import load_split, read_tasks

    tasks = read_tasks(args.tasks) if args.tasks else load_split(args.split)
    if args.categories:
        wanted = [c.strip() for c in args.categories.split(",") if c.strip()]
        unknown = [c for c in wanted if c not in CATEGORIES]
        if unknown:
            raise ValueError(f"--categories: unknown {unknown}; expected some of {list(CATEGORIES)}")
        tasks = [t for t in tasks if t.category in wanted]
    if args.limit is not None:
        tasks = stratified_subset(tasks, args.limit, seed=args.seed)
    if not tasks:
        raise ValueError("no tasks selected")
    return tasks


def build_policy(args: argparse.Namespace) -> Any:
    """An `OpenAIPolicy` for --base-url, else a `TransformersPolicy` on the local model."""
    from rods.rollout import OpenAIPolicy, TransformersPolicy

    if args.base_url:
        return OpenAIPolicy(
            args.base_url,
            args.model,
            args.api_key or os.environ.get("OPENAI_API_KEY", "EMPTY"),
            concurrency=args.concurrency,
            max_tokens=args.max_new_tokens,
            temperature=args.temperature,
            top_p=args.top_p if args.top_p < 1.0 else None,
            native_tools=not args.tools_in_prompt,
        )
    from rods.llm.local_backend import load_model
    from rods.llm.weights import EMBEDDED

    if args.model is None:
        raise ValueError("--model is required without --base-url: a model folder, a .gguf file or 'embedded'")
    if args.model != EMBEDDED and Path(args.model).suffix != ".gguf" and not Path(args.model).exists():
        raise FileNotFoundError(f"--model: no model folder at {args.model} (or pass --base-url for an endpoint)")
    model, tokenizer = load_model(args.model)
    return TransformersPolicy(
        model,
        tokenizer,
        max_new_tokens=args.max_new_tokens,
        temperature=args.temperature,
        top_p=args.top_p,
        batch_size=args.batch_size,
    )


def main(args: argparse.Namespace) -> int:
    from rich.console import Console

    if args.suite != "multi_turn":
        return int(importlib.import_module(SUITES[args.suite]).run(args))
    console = Console(stderr=True)
    tasks = select_tasks(args)
    restore_threads = _set_threads(args.threads) if args.threads and not args.base_url else None
    try:
        return _run(args, console, tasks)
    finally:
        if restore_threads is not None:
            _set_threads(restore_threads)


def _set_threads(n: int) -> int:
    """Set torch's CPU threads; returns the previous count."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(max(1, n))
    return previous


def _run(args: argparse.Namespace, console: Any, tasks: list[Any]) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from rods.eval import evaluate
    from rods.rollout import EpisodeOptions

    policy = build_policy(args)
    total = len(tasks) * args.k
    with Progress(
        TextColumn("eval"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True
    ) as bar:
        job = bar.add_task("rollouts", total=total)
        report = evaluate(
            policy,
            tasks,
            k=args.k,
            out_dir=args.out,
            model=args.model or policy.model,
            split=str(args.tasks) if args.tasks else args.split,
            options=EpisodeOptions(
                max_steps_per_turn=args.max_steps,
                tool_format=args.tool_format,
                tools_in_prompt=args.tools_in_prompt,
                on_step_cap=args.step_cap,
                tool_docs=args.tool_docs,
            ),
            official_check=not args.no_official_check,
            progress=lambda done, _total: bar.update(job, completed=done),
        )
    Console().print(report_table(report))
    if report.official is not None:
        o = report.official
        console.print(
            f"the domain's own checker: {o['official_correct']}/{o['total']} correct, "
            f"agrees with rods on {o['agree']}/{o['total']} rollouts"
        )
    console.print(f"{report.n_rollouts} rollouts in {report.seconds:.1f}s; wrote {args.out}/report.json")
    return 0


def report_table(report: Any) -> Any:
    """The per-category table `rods eval` prints."""
    from rich.table import Table

    title = report.environment or "multi-turn"
    table = Table(title=f"{title} ({report.split}, {report.n_tasks} tasks, k={report.k}): {report.model}")
    for column in ("group", "n", "accuracy", "progress RP", "replies with calls", "parse errors / reply"):
        table.add_column(column, justify="left" if column == "group" else "right")
    for name, c in report.categories.items():
        table.add_row(name, str(c.n), f"{100 * c.accuracy:.2f}", f"{c.progress:.3f}", f"{100 * c.call_rate:.1f}%",
                      f"{c.parse_errors_per_reply:.2f}")
    table.add_row("overall", str(report.n_rollouts), f"{100 * report.overall_accuracy:.2f}",
                  f"{report.overall_progress:.3f}", "", "", style="bold")
    return table
