"""`rods synth`: synthesize verified variants of seed tasks; `rods synth graph`: the API graph.

    rods synth --seeds FILE --per-seed N --llm {template,local,openai} [--base-url URL [--model NAME]] --out FILE
    rods synth graph --out FILE      # JSON at FILE, PNG next to it

`--seeds` takes a task JSONL file, or `train` / `test` for the BFCL split.
Seeds are validated first (as `rods tasks validate` checks their gold calls): a
seed that fails is left out with one line per failure and counted in the report,
and the exit code is then 1 (the variants of the other seeds are still written).
`--llm` must be given (the template backend is a model-free offline fallback,
not the paper's method). Given more than once it makes an ensemble: variants
are spread across the backbones by `--routing`; the i-th openai (or local)
backbone takes the i-th `--base-url` and `--model` (the last one when fewer
are given), e.g. two models behind one server:

    rods synth ... --llm openai --llm openai --base-url URL --model qwen3-32b --model glm-4.5-air
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("synth", help="synthesize new tasks from seed tasks (skill-aligned synthesis)",
                              description=__doc__.splitlines()[0])
    p.add_argument("--seeds", help="seed tasks: a JSONL file, or 'train' / 'test' (BFCL split)")
    p.add_argument("--per-seed", type=int, default=1, help="variants attempted per seed (default 1)")
    p.add_argument("--llm", choices=["template", "local", "openai"], action="append",
                   help="synthesis backend (template: model-free offline fallback); repeat for an ensemble")
    p.add_argument("--base-url", action="append", default=[], help="OpenAI-compatible endpoint (with --llm openai)")
    p.add_argument("--model", action="append", default=[],
                   help="model name (openai; default: the server's first model) or path (local)")
    p.add_argument("--routing", choices=["round_robin", "acceptance"], default="round_robin",
                   help="with several --llm: pick each variant's backbone in turn or by measured acceptance")
    p.add_argument("--out", type=Path, help="output JSONL of accepted tasks")
    p.add_argument("--limit", type=int, default=None, help="use only the first N seeds")
    p.add_argument("--workers", type=int, default=2, help="seeds synthesized concurrently")
    p.add_argument("--ablation", choices=["no_rewrite", "no_narrative", "no_feedback_repair"], default=None)
    p.add_argument("--augment", type=float, default=0.0,
                   help="chance to turn a basic variant into miss_func/miss_param")
    p.add_argument("--recast", type=float, default=None,
                   help="share of variants that are recasts: the seed's own calls and words in a new world "
                   "(default: 1 with --llm template, 0.5 with a model; 0: every variant re-planned, the paper's "
                   "pipeline)")
    p.add_argument("--vary-counts", action="store_true",
                   help="let a variant drop a read call without data flow (default: the seed's call counts)")
    p.add_argument("--seed", type=int, default=0, help="random seed")
    p.add_argument("--stats", type=Path, default=None, help="also write the per-stage statistics as JSON")
    p.set_defaults(func=run)
    sub = p.add_subparsers(dest="synth_command", metavar="{graph}")
    g = sub.add_parser("graph", help="write the API graph as JSON and PNG")
    g.add_argument("--out", type=Path, required=True, help="JSON file; the PNG goes next to it")
    g.set_defaults(func=run_graph)


def run_graph(args: argparse.Namespace) -> int:
    from rods.synth.api_graph import reference_graph

    json_path, png_path = reference_graph("bfcl").save(args.out)
    print(f"wrote {json_path} and {png_path}")
    return 0


def make_backends(llms: list[str] | None, urls: list[str], models: list[str]):
    """One backend per `--llm`; the i-th openai/local one takes the i-th (or last) --base-url and --model."""
    from rods.llm import make_backend

    if not llms:
        raise ValueError("--llm is required: template (model-free offline fallback), local or openai; "
                         "repeat it for an ensemble")
    out, k = [], 0
    for llm in llms:
        kw = {}
        if llm != "template":
            url = urls[min(k, len(urls) - 1)] if urls else None
            model = models[min(k, len(models) - 1)] if models else None
            k += 1
            if llm == "openai":
                if not url:
                    raise ValueError("--llm openai needs --base-url (--model defaults to the server's first model)")
                kw = {"base_url": url, "model": model}
            elif model:
                kw = {"model": model}
        out.append(make_backend(llm, **kw))
    return out


def run(args: argparse.Namespace) -> int:
    if not args.seeds or not args.out:
        raise ValueError("--seeds and --out are required (or use `rods synth graph --out FILE`)")
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
    from rich.table import Table

    from rods.synth.pipeline import Pipeline
    from rods.synth.settings import SynthConfig
    from rods.synth.stats import STAGES
    from rods.tasks import write_tasks
    from rods.tasks.jsonlines import output_file
    from rods.tasks.task_files import read_located_tasks

    for path in (args.out, args.stats):  # a bad output path fails now, not after the synthesis
        if path is not None:
            output_file(path)

    located = read_located_tasks(args.seeds)[: args.limit]
    seeds = [task for _, task in located]
    backends = make_backends(args.llm, args.base_url, args.model)
    base = dict(per_seed=args.per_seed, workers=args.workers, augment=args.augment, seed=args.seed,
                same_counts=not args.vary_counts, routing=args.routing, recast=args.recast)
    config = SynthConfig.ablation(args.ablation, **base) if args.ablation else SynthConfig(**base)
    pipeline = Pipeline(backends, config)
    pipeline.admit(seeds, where={task.id: where for where, task in located})  # one line per failure, once
    console = Console(stderr=True)
    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console) as bar:
        job = bar.add_task(f"synth ({', '.join(m.name for m in pipeline.members)})", total=len(seeds))
        accepted = pipeline.synthesize(seeds, progress=lambda n: bar.advance(job, n))
    write_tasks(args.out, accepted)
    report = pipeline.report()
    if args.stats:
        args.stats.write_text(json.dumps(report, indent=1, default=str), encoding="utf-8")
    invalid = report["invalid_seeds"]
    rejected = f" ({invalid} rejected by validation)" if invalid else ""
    table = Table(title=f"rods synth: {len(accepted)} accepted of {report['variants']} variants "
                        f"from {len(seeds)} seeds{rejected} in {report['seconds']:.1f}s")
    table.add_column("stage")
    table.add_column("attempts", justify="right")
    table.add_column("passed", justify="right")
    table.add_column("pass rate", justify="right")
    table.add_column("LLM calls / accepted", justify="right")
    by_stage = {"plan": ("plan.narrative", "plan.sequence"), "execute": ("config_patch",),
                "rewrite": ("rewrite", "rewrite.turn"),
                "judge": ("judge",)}
    per = report["llm"]["calls_per_accepted_by_stage"]
    order = {stage: i for i, stage in enumerate(STAGES)}  # a batch's first variant may be a recast (no rewrite)
    for stage, n in sorted(report["attempts"].items(), key=lambda kv: order.get(kv[0], len(order))):
        calls = sum(per.get(p, 0.0) for p in by_stage.get(stage, ()))
        table.add_row(stage, str(n), str(report["passed"].get(stage, 0)),
                      f"{report['pass_rate'].get(stage, 0):.0%}", f"{calls:.2f}")
    console.print(table)
    if report["rejections"]:
        rej = Table(title="rejections")
        rej.add_column("reason")
        rej.add_column("count", justify="right")
        for reason, n in sorted(report["rejections"].items(), key=lambda kv: -kv[1]):
            rej.add_row(reason, str(n))
        console.print(rej)
    if report["strategies"]:
        st = Table(title="strategies" + (f" ({report['recast_unavailable']} drawn recasts re-planned: nothing to "
                                         "recast)" if report["recast_unavailable"] else ""))
        for col in ("strategy", "tried", "accepted", "acceptance"):
            st.add_column(col, justify="left" if col == "strategy" else "right")
        for name, row in report["strategies"].items():
            st.add_row(name, str(row["tried"]), str(row["accepted"]), f"{row['acceptance_rate']:.0%}")
        console.print(st)
    if len(pipeline.members) > 1:
        bb = Table(title=f"backbones ({config.routing})")
        for col in ("backbone", "tried", "accepted", "acceptance"):
            bb.add_column(col, justify="left" if col == "backbone" else "right")
        for name, row in report["backbones"].items():
            bb.add_row(name, str(row["tried"]), str(row["accepted"]), f"{row['acceptance_rate']:.0%}")
        console.print(bb)
    if sum(report["invalid_answers"].values()):
        console.print(f"ignored model answers naming unknown functions or config keys: {report['invalid_answers']}")
    console.print(f"acceptance rate {report['acceptance_rate']:.0%}; LLM calls per accepted task "
                  f"{report['llm']['calls_per_accepted']:.2f}; tokens per accepted task "
                  f"{report['llm']['tokens_per_accepted']:.0f}; wrote {args.out}")
    if invalid:
        console.print(f"{invalid} of {len(seeds)} seeds fail validation (lines above; `rods tasks validate "
                      f"--keep-going --out GOOD.jsonl` keeps the valid ones)")
        return 1
    return 0
