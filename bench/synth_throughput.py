"""Synthesis throughput with the template backend (model-free, offline).

Runs the pipeline over a stratified sample of train seeds (all four categories)
and reports accepted tasks per second, the acceptance rate, and per stage the
attempts and LLM calls per accepted task. The last line is one JSON object:
{"accepted_per_s", "acceptance_rate", "llm_calls_per_accepted"}.

    python bench/synth_throughput.py [--per-category 25] [--per-seed 2] [--workers 2] [--smoke]

The defaults are the published run; `--smoke` (2 seeds per category, 1 variant each) takes every
code path in a few seconds.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from rods.llm import make_backend
from rods.synth.api_graph import reference_graph
from rods.synth.pipeline import Pipeline
from rods.synth.settings import SynthConfig
from rods.tasks.bfcl import CATEGORIES, load_split
from rods.tasks.model import Task

#: --smoke: the smallest run that still accepts variants in every category (tests/test_bench.py).
SMOKE = {"per_category": 2, "per_seed": 1}
STAGE_PURPOSES = {"plan": ("plan.narrative", "plan.sequence"), "execute": ("config_patch",),
                  "rewrite": ("rewrite",), "judge": ("judge",), "augment": (), "gate": ()}


def arguments(doc: str, per_category: int, per_seed: int) -> argparse.ArgumentParser:
    """The options both synthesis benches take (bench/synth_novelty.py imports this)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--per-category", type=int, default=per_category)
    parser.add_argument("--per-seed", type=int, default=per_seed)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--smoke", action="store_true", help="the smallest run that takes every code path")
    return parser


def parse(parser: argparse.ArgumentParser, smoke: dict[str, Any]) -> argparse.Namespace:
    """Parsed options; with --smoke, the sizes in `smoke` replace the defaults."""
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(smoke)
    return args


def timed_template_run(per_category: int, **synth: Any) -> tuple[list[Task], list[Task], float, dict[str, Any]]:
    """(seeds, accepted, seconds, report): the first N train seeds of each category through the template pipeline.

    The API graph is learned before the clock starts; `synth` are `SynthConfig` fields.
    """
    train = load_split("train")
    seeds = [t for c in CATEGORIES for t in [x for x in train if x.category == c][:per_category]]
    pipeline = Pipeline(make_backend("template"), SynthConfig(**synth), graph=reference_graph("bfcl"))
    start = time.perf_counter()
    accepted = pipeline(seeds)
    return seeds, accepted, time.perf_counter() - start, pipeline.report()


def main() -> None:
    parser = arguments(__doc__, per_category=25, per_seed=2)
    parser.add_argument("--augment", type=float, default=0.0)
    args = parse(parser, SMOKE)
    seeds, accepted, seconds, report = timed_template_run(
        args.per_category, per_seed=args.per_seed, workers=args.workers, augment=args.augment)
    n = max(1, len(accepted))

    print(f"seeds {len(seeds)} ({args.per_category}/category), variants {report['variants']}, "
          f"accepted {len(accepted)}, {seconds:.1f}s, {args.workers} workers")
    print(f"{'stage':<9}{'attempts':>10}{'passed':>9}{'pass rate':>11}{'attempts/acc':>14}{'LLM calls/acc':>15}")
    per_purpose = report["llm"]["calls_per_accepted_by_stage"]
    for stage, purposes in STAGE_PURPOSES.items():
        attempts = report["attempts"].get(stage, 0)
        if not attempts:
            continue
        calls = sum(per_purpose.get(p, 0.0) for p in purposes)
        print(f"{stage:<9}{attempts:>10}{report['passed'].get(stage, 0):>9}"
              f"{report['pass_rate'].get(stage, 0):>11.0%}{attempts / n:>14.2f}{calls:>15.2f}")
    if report["rejections"]:
        print("rejections: " + ", ".join(f"{k} {v}" for k, v in sorted(report["rejections"].items(),
                                                                       key=lambda kv: -kv[1])))
    seeds_with_variant = len({t.provenance.parent_id for t in accepted})
    print(f"seeds with >= 1 accepted variant: {seeds_with_variant}/{len(seeds)}")
    print(json.dumps({
        "accepted_per_s": round(len(accepted) / seconds, 2),
        "acceptance_rate": round(report["acceptance_rate"], 4),
        "llm_calls_per_accepted": round(report["llm"]["calls_per_accepted"], 3),
    }))


if __name__ == "__main__":
    main()
