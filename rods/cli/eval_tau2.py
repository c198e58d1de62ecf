"""`rods eval --suite tau2`: tau2-bench's own protocol on its airline and retail domains.

A user simulator (an LLM given tau2's user guidelines and the task's scenario)
talks to the policy under evaluation (`--model` / `--base-url`, as for BFCL)
through tau2's orchestrator until the user ends it with a stop token, or max
turns or errors cut it; tau2's evaluator scores each conversation (final
database, communicated information). Reports pass^1 .. pass^k over k trials
per task (`--k` / `--trials`), per domain, and writes `report.json` and
`conversations.jsonl` under `--out` (docs/guides/evaluation.md).

    rods eval --suite tau2 --domain airline --model embedded \\
        --user-base-url http://127.0.0.1:8080/v1 --trials 4 --out runs/tau2
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from rods.cli.eval import _set_threads, build_policy


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group(
        "tau2 conversation",
        "--suite tau2: tau2-bench's protocol; the policy options above are the agent's, --split/--limit pick "
        "tau2's tasks (the first N of each domain's split)",
    )
    g.add_argument("--domain", default="airline", help="airline, retail, or both comma-separated")
    g.add_argument("--task-ids", default=None,
                   help="comma-separated tau2 task ids (domain:id for one domain), instead of a whole split")
    g.add_argument("--trials", dest="k", type=int, default=argparse.SUPPRESS,
                   help="trials per task for pass^k (tau2's num_trials; the same as --k)")
    g.add_argument("--max-turns", type=int, default=200,
                   help="tau2's max_steps: messages (tool results included) before a conversation is cut")
    g.add_argument("--max-errors", type=int, default=10, help="tau2's max_errors: failing tool calls before it is cut")
    g.add_argument("--trial-seed", type=int, default=300, help="tau2's seed, from which each trial's seed is drawn")
    g.add_argument("--user-base-url", default=None,
                   help="the user simulator's OpenAI-compatible endpoint (default: --user-model run locally)")
    g.add_argument("--user-model", default=None,
                   help="the user simulator's model: the served name (default: the server's first), "
                        "or without --user-base-url a model folder, .gguf file or 'embedded' (default)")
    g.add_argument("--user-api-key", default=None, help="its key (default: $OPENAI_API_KEY or 'EMPTY')")
    g.add_argument("--user-temperature", type=float, default=0.0, help="the user's temperature (tau2's default 0)")
    g.add_argument("--user-max-tokens", type=int, default=256, help="the user's reply length cap")


def task_selection(args: argparse.Namespace) -> dict[str, list[Any]]:
    """Domain -> tau2's tasks this run plays."""
    from rods.eval.tau2_conversation import select_tasks

    domains = [d.strip() for d in args.domain.split(",") if d.strip()]
    wanted: dict[str, list[str]] = {d: [] for d in domains}
    for item in (args.task_ids or "").split(","):
        domain, _, task_id = item.strip().rpartition(":")
        for d in [domain] if domain else domains:
            if d not in wanted:
                raise ValueError(f"--task-ids: {item.strip()!r} names a domain not in --domain {args.domain}")
            if task_id:
                wanted[d].append(task_id)
    return {d: select_tasks(d, args.split, wanted[d] or None, args.limit) for d in domains}


def build_user(args: argparse.Namespace) -> tuple[Any, str]:
    """The user simulator's `rods.llm` backend and its name for the report."""
    from rods.llm import make_backend

    if args.user_base_url:
        backend = make_backend("openai", base_url=args.user_base_url, model=args.user_model,
                               api_key=args.user_api_key or os.environ.get("OPENAI_API_KEY", "EMPTY"),
                               timeout_s=600, max_retries=2, max_concurrency=max(1, args.concurrency))
        return backend, f"{getattr(backend, 'model', args.user_model)} @ {args.user_base_url}"
    model = args.user_model or "embedded"
    return make_backend("local", model=model, timeout_s=600), f"{model} (local)"


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from rods.eval.tau2_conversation import evaluate_conversations
    from rods.eval.tau2_llm import BackendUser, PolicyAgent

    console = Console(stderr=True)
    tasks = task_selection(args)
    restore = _set_threads(args.threads) if args.threads and not args.base_url else None
    try:
        policy = build_policy(args)
        agent = PolicyAgent(policy, tool_format=args.tool_format, tools_in_prompt=args.tools_in_prompt,
                            tool_docs=args.tool_docs)
        user_backend, user_model = build_user(args)
        user = BackendUser(user_backend, temperature=args.user_temperature, max_tokens=args.user_max_tokens)
        total = sum(map(len, tasks.values())) * args.k
        with Progress(TextColumn("tau2"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            job = bar.add_task("conversations", total=total)
            report = evaluate_conversations(
                tasks, agent, user, trials=args.k, model=args.model or policy.model, user_model=user_model,
                split=args.split, max_steps=args.max_turns, max_errors=args.max_errors, seed=args.trial_seed,
                concurrency=args.concurrency if args.base_url else 1, out_dir=args.out,
                progress=lambda done, _total: bar.update(job, completed=done),
            )
    finally:
        if restore is not None:
            _set_threads(restore)
    report.settings.update(agent_parse_errors=agent.parse_errors, temperature=args.temperature,
                           max_new_tokens=args.max_new_tokens, tool_docs=args.tool_docs,
                           tools_in_prompt=agent.tools_in_prompt, user_temperature=args.user_temperature,
                           user_max_tokens=args.user_max_tokens)
    (args.out / "report.json").write_text(report.model_dump_json(indent=2) + "\n")
    Console().print(report_table(report))
    check = report.recheck or {}
    console.print(f"tau2's evaluator on conversations.jsonl agrees on {check.get('agree')}/{check.get('total')}; "
                  f"{total} conversations in {report.seconds:.1f}s; wrote {args.out}/report.json")
    return 0


def report_table(report: Any) -> Any:
    """The per-domain table `rods eval --suite tau2` prints."""
    from rich.table import Table

    ks = [f"pass^{k}" for k in range(1, report.trials + 1)]
    table = Table(title=f"tau2-bench ({report.split}, k={report.trials}): agent {report.model}, "
                        f"user {report.user_model}")
    for column in ("domain", "tasks", "conversations", *ks, "avg reward", "ended by a stop", "DB match"):
        table.add_column(column, justify="left" if column == "domain" else "right")
    for name, d in report.domains.items():
        table.add_row(name, str(d.n_tasks), str(d.n_conversations),
                      *(f"{d.pass_hat_k[k]:.3f}" if k in d.pass_hat_k else "" for k in ks),
                      f"{d.avg_reward:.3f}", f"{d.scored}/{d.n_conversations}",
                      "n/a" if d.db_match is None else f"{100 * d.db_match:.1f}%")
    return table
