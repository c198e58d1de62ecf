"""How new are the call sequences the planner makes? (template backend, offline)

Runs the pipeline over a fixed stratified set of train seeds (the first N of
each category, 3 variants each) and compares every accepted variant's
flattened function-name sequence with its seed's. Also checks what every
accepted variant must keep: the seed's profile, a replay with RP = 1 and
binary = 1, no duplicates. The last line is one JSON object:
{"seq_changed", "fnset_changed", "mean_seq_distance", "distinct_skeletons_per_seed",
 "new_functions", "profile_match", "skill_overlap", "skill_overlap_reachable", "skill_in_band",
 "replay_ok", "duplicates", "query_leak",
 "acceptance_rate", "accepted_per_s"}.

    python bench/synth_novelty.py [--per-category 10] [--per-seed 3] [--workers 2] [--seed 0] [--smoke]

The defaults are the published run; `--smoke` (1 seed per category, 2 variants each) takes every
code path in a few seconds.
"""

from __future__ import annotations

import json

from synth_throughput import arguments, parse, timed_template_run  # the sibling bench script

from rods.reward import score
from rods.synth.leak import query_leak
from rods.synth.novelty import novelty
from rods.tasks import content_hash
from rods.tasks.bfcl import CATEGORIES
from rods.tasks.model import Task

#: --smoke: one seed per category, two variants each (distinct sequences per seed are counted).
SMOKE = {"per_category": 1, "per_seed": 2}


def figures_of(seeds: list[Task], accepted: list[Task]) -> dict[str, float]:
    """Novelty (rods.synth.novelty) plus the gate's promises, re-checked: replay, no duplicates; and query leak."""
    out = novelty(seeds, accepted)
    results = [score(t, [[list(turn)] if turn else [] for turn in t.ground_truth]) for t in accepted]
    replay_ok = sum(r.progress == 1.0 and r.binary == 1 for r in results)
    n = max(1, len(accepted))
    out["replay_ok"] = replay_ok / n
    out["duplicates"] = len(accepted) - len({content_hash(t) for t in accepted})
    out["query_leak"] = sum(query_leak(t) for t in accepted) / n
    return out


def main() -> None:
    parser = arguments(__doc__, per_category=10, per_seed=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parse(parser, SMOKE)
    seeds, accepted, seconds, report = timed_template_run(
        args.per_category, per_seed=args.per_seed, workers=args.workers, seed=args.seed)
    figures = figures_of(seeds, accepted)

    print(f"seeds {len(seeds)} ({args.per_category}/category) x {args.per_seed} variants: "
          f"{len(accepted)}/{report['variants']} accepted in {seconds:.1f}s")
    print(f"{'category':<14}{'accepted':>9}{'seq changed':>13}{'fnset changed':>15}{'seq distance':>14}")
    for category in CATEGORIES:
        subset = [t for t in accepted if t.category == category]
        if subset:
            part = novelty([s for s in seeds if s.category == category], subset)
            print(f"{category:<14}{len(subset):>9}{part['seq_changed']:>13.2f}{part['fnset_changed']:>15.2f}"
                  f"{part['mean_seq_distance']:>14.2f}")
    for key, value in figures.items():
        print(f"  {key:<30}{value:>8.3f}" if isinstance(value, float) else f"  {key:<30}{value:>8}")
    if report["rejections"]:
        print("rejections: " + ", ".join(f"{k} {v}" for k, v in sorted(report["rejections"].items(),
                                                                       key=lambda kv: -kv[1])))
    print(json.dumps({
        **{k: round(v, 4) if isinstance(v, float) else v for k, v in figures.items()},
        "acceptance_rate": round(report["acceptance_rate"], 4),
        "accepted_per_s": round(len(accepted) / seconds, 2),
    }))


if __name__ == "__main__":
    main()
