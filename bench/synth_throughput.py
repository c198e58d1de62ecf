"""Synthesis throughput with the template backend (model-free, offline).

Runs the pipeline over a stratified sample of train seeds (all four categories)
and reports accepted tasks per second, the acceptance rate, and per stage the
attempts and LLM calls per accepted task. The last line is one JSON object:
{"accepted_per_s", "acceptance_rate", "llm_calls_per_accepted"}.

    python bench/synth_throughput.py [--per-category 25] [--per-seed 2] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import time

from rods.llm import make_backend
from rods.synth.api_graph import default_graph
from rods.synth.pipeline import Pipeline
from rods.synth.settings import SynthConfig
from rods.tasks.bfcl import CATEGORIES, load_split

STAGE_PURPOSES = {"plan": ("plan.narrative", "plan.sequence"), "execute": ("config_patch",),
                  "rewrite": ("rewrite",), "judge": ("judge",), "augment": (), "gate": ()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-category", type=int, default=25)
    parser.add_argument("--per-seed", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--augment", type=float, default=0.0)
    args = parser.parse_args()

    train = load_split("train")
    seeds = [t for c in CATEGORIES for t in [x for x in train if x.category == c][: args.per_category]]
    graph = default_graph()  # learned once; not part of the timed run
    pipeline = Pipeline(make_backend("template"),
                        SynthConfig(per_seed=args.per_seed, workers=args.workers, augment=args.augment), graph=graph)
    start = time.perf_counter()
    accepted = pipeline(seeds)
    seconds = time.perf_counter() - start
    report = pipeline.report()
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
