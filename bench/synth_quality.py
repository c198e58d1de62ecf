"""Would a person ask the variants? Coherence rule violations, skill overlap and novelty, seeds beside variants.

Per environment (BFCL's train split, stratified; tau2-bench's airline seeds; the library of examples/byo_env;
with `--envs`, the MCP examples too): the template pipeline makes `--per-seed` variants of each seed, and for
the human seeds and the accepted variants alike it counts the tasks breaking each rule of
`rods.synth.coherence` (`degenerate_value`, `precision`, `id_as_name`, `role_mismatch_flow`,
`superfluous_write`, `unused_read`, `no_goal`, `out_of_domain`) as a fraction of the tasks; for the variants also
the novelty figures of `bench/synth_novelty.py` (`seq_changed`, `mean_seq_distance`, `query_leak`), `skill_overlap`
(Jaccard of seed and variant function sets; `skill_overlap_reachable` and `skill_in_band` over the variants
whose seed's band can be reached: not a one-call seed's), acceptance and accepted tasks per second.

Prints a table per environment, then as its last line one JSON object:
`{"<env>": {"seeds": {<kind>: fraction}, "variants": {<kind>: fraction}, "skill_overlap",
"skill_overlap_reachable", "skill_in_band", "seq_changed", "mean_seq_distance", "query_leak", "acceptance",
"accepted_per_s", "accepted", "strategies": {<strategy>: [tried, accepted]}}, ...}`.

    python bench/synth_quality.py [--bfcl-per-category 5] [--per-seed 3] [--limit 12] [--envs bfcl tau2_airline]
                                  [--pipeline-seeds 0 1 2]
    python bench/synth_quality.py --smoke

The defaults take about 2.5 min on two cores; docs/results/synthesis.md's figures are
`--bfcl-per-category 5 --limit 10`. `--smoke` (1 BFCL seed per category, 1 seed of each other
environment, 1 variant each) takes every code path in seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from rods.llm import make_backend
from rods.synth.api_graph import graph_for
from rods.synth.coherence import KINDS, Coherence
from rods.synth.leak import query_leak
from rods.synth.novelty import novelty
from rods.synth.pipeline import Pipeline
from rods.synth.settings import SynthConfig
from rods.tasks import CATEGORIES, Task, load_split, read_tasks

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
#: --smoke: the smallest run that still synthesizes in every default environment.
SMOKE = {"bfcl_per_category": 1, "per_seed": 1, "limit": 1}


def environments(per_category: int) -> dict[str, list[Task]]:
    """The seed sets by environment name (MCP beds only when asked for: their servers are slow to start)."""
    train = load_split("train")
    sys.path.insert(0, str(EXAMPLES / "byo_env"))
    return {
        "bfcl": [t for c in CATEGORIES for t in [x for x in train if x.category == c][:per_category]],
        "tau2_airline": read_tasks(EXAMPLES / "tau2_airline" / "train.jsonl"),
        "library": read_tasks(EXAMPLES / "byo_env" / "seeds.jsonl"),
        "mcp_sqlite": read_tasks(EXAMPLES / "mcp_sqlite" / "seeds.jsonl"),
        "mcp_git": read_tasks(EXAMPLES / "mcp_git" / "seeds.jsonl"),
    }


def rates(rules: Coherence, tasks: list[Task], seeds: dict[str, Task] | None = None
          ) -> tuple[dict[str, float], list[str]]:
    """Per rule, the fraction of tasks breaking it (variants judged beside their seeds); and a few examples."""
    broken = {kind: 0 for kind in KINDS}
    examples = []
    for task in tasks:
        found = rules.violations(task, seed=(seeds or {}).get(task.provenance.parent_id or ""))
        for kind in {v.kind for v in found}:
            broken[kind] += 1
        examples += [f"{task.id}: {v}" for v in found[:1]]
    n = max(1, len(tasks))
    return {kind: round(count / n, 4) for kind, count in broken.items()}, examples


def measure(name: str, seeds: list[Task], per_seed: int, workers: int, pipeline_seeds: list[int],
            recast: float | None = None) -> dict:
    """One environment's figures, the variants of every pipeline seed (`SynthConfig.seed`) pooled; `recast`: the
    share of recasts (`SynthConfig.recast`; None: its default)."""
    graph = graph_for(seeds[0].environment, seeds)  # the flows its human seeds (BFCL: the train split) show
    rules = Coherence(seeds[0].environment, sorted({c for s in seeds for c in s.involved_classes}), graph.flows)
    seed_rates, _ = rates(rules, seeds)
    accepted: list[Task] = []
    rejected: Counter = Counter()
    tried: Counter = Counter()
    unavailable = 0
    start = time.perf_counter()
    for stream in pipeline_seeds:
        pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=per_seed, workers=workers, seed=stream,
                                                                  **({} if recast is None else {"recast": recast})))
        accepted += pipeline(seeds)
        report = pipeline.report()
        rejected.update(report["rejections"])
        tried.update({k: row["tried"] for k, row in report["strategies"].items()})
        unavailable += report["recast_unavailable"]
    seconds = time.perf_counter() - start
    variant_rates, examples = rates(rules, accepted, {s.id: s for s in seeds})
    figures = novelty(seeds, accepted) if accepted else {}
    acceptance = len(accepted) / (len(seeds) * per_seed * len(pipeline_seeds))
    print(f"\n{name}: {len(seeds)} seeds x {per_seed} x {len(pipeline_seeds)} pipeline seed(s): {len(accepted)} "
          f"accepted in {seconds:.1f}s (acceptance {acceptance:.2f})")
    print(f"  {'rule':<22}{'seeds':>8}{'variants':>10}")
    for kind in KINDS:
        print(f"  {kind:<22}{seed_rates[kind]:>8.2f}{variant_rates[kind]:>10.2f}")
    for line in examples[:5]:
        print(f"    e.g. {line[:150]}")
    rejections = rejected.most_common(6)
    print("  rejections: " + (", ".join(f"{k} {v}" for k, v in rejections) or "none"))
    made = Counter(t.provenance.strategy or "replan" for t in accepted)
    print("  accepted/tried by strategy: " + ", ".join(f"{k} {made[k]}/{n}" for k, n in sorted(tried.items()))
          + f" ({unavailable} drawn recasts re-planned: nothing to recast); recast rejections: "
          + (", ".join(f"{k} {v}" for k, v in rejected.most_common() if k.startswith("recast:")) or "none"))
    return {
        "seeds": seed_rates,
        "variants": variant_rates,
        "skill_overlap": round(figures.get("skill_overlap", 0.0), 4),
        "skill_overlap_reachable": round(figures.get("skill_overlap_reachable", 0.0), 4),
        "skill_in_band": round(figures.get("skill_in_band", 0.0), 4),
        "seq_changed": round(figures.get("seq_changed", 0.0), 4),
        "mean_seq_distance": round(figures.get("mean_seq_distance", 0.0), 4),
        "query_leak": round(sum(query_leak(t) for t in accepted) / max(1, len(accepted)), 4),
        "acceptance": round(acceptance, 4),
        "accepted_per_s": round(len(accepted) / seconds, 2) if seconds else 0.0,
        "accepted": len(accepted),
        "strategies": {k: [n, made[k]] for k, n in sorted(tried.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bfcl-per-category", type=int, default=5, help="BFCL train seeds per category")
    parser.add_argument("--per-seed", type=int, default=3, help="template variants asked per seed")
    parser.add_argument("--limit", type=int, default=12, help="at most this many seeds per environment")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pipeline-seeds", type=int, nargs="+", default=[0],
                        help="SynthConfig.seed of each run, pooled (one draw of 60 BFCL variants moves by +-3)")
    parser.add_argument("--envs", nargs="+", default=["bfcl", "tau2_airline", "library"],
                        help="environments to measure: bfcl tau2_airline library mcp_sqlite mcp_git")
    parser.add_argument("--recast", type=float, default=None,
                        help="share of variants that are recasts (SynthConfig.recast; default: its default)")
    parser.add_argument("--smoke", action="store_true", help=f"tiny run of every code path: {SMOKE}")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)
    import os

    os.chdir(EXAMPLES.parent)  # MCP tasks name their manifest from the repository root
    everything = environments(args.bfcl_per_category)
    figures = {}
    for name in args.envs:
        seeds = everything[name] if name == "bfcl" else everything[name][: args.limit]
        figures[name] = measure(name, seeds, args.per_seed, args.workers, args.pipeline_seeds, args.recast)
    print(f"\n{'environment':<14}{'accepted':>9}{'acceptance':>11}{'per s':>7}{'overlap':>9}{'reachable':>11}"
          f"{'in band':>9}{'seq changed':>13}{'distance':>10}{'leak':>7}")
    for name, f in figures.items():
        print(f"{name:<14}{f['accepted']:>9}{f['acceptance']:>11.2f}{f['accepted_per_s']:>7.2f}"
              f"{f['skill_overlap']:>9.2f}{f['skill_overlap_reachable']:>11.2f}{f['skill_in_band']:>9.2f}"
              f"{f['seq_changed']:>13.2f}{f['mean_seq_distance']:>10.2f}"
              f"{f['query_leak']:>7.2f}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
