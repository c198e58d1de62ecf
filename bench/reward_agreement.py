"""Full agreement run: every BFCL task x every perturbation kind x seeds, rods vs BFCL's checker.

Slower than the suite's agreement test (which uses 12 tasks per category): about
20k trajectories for two seeds, a few minutes on 2 cores. Per trajectory it
compares our binary reward with `multi_turn_checker`'s verdict and our per-turn
verdicts with BFCL's sub-checkers applied to each turn.

Usage: python bench/reward_agreement.py [--seeds 2] [--per-category N] [--smoke]
(the defaults are the published run; `--per-category N` takes the first N tasks of each category,
and `--smoke`, 2 per category and one seed, takes every code path in seconds)
Last line: {"trajectories": N, "disagreements": D, "agreement": 1 - D/N}.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter

from rods.envs.bfcl.official import official_turn_checks, official_verdict
from rods.reward import score
from rods.reward.perturb import perturbations
from rods.tasks import CATEGORIES, load_bfcl_tasks

#: --smoke: two tasks of each category, one seed.
SMOKE = {"seeds": 1, "per_category": 2}


def chosen_tasks(per_category: int | None):
    """BFCL's 800 tasks, or the first `per_category` of each category."""
    tasks = load_bfcl_tasks()
    if per_category is None:
        return tasks
    return [t for c in CATEGORIES for t in [x for x in tasks if x.category == c][:per_category]]


def agrees(task, steps) -> bool:
    ours = score(task, steps)
    if ours.binary != int(official_verdict(task, steps)["valid"]):
        return False
    if len(steps) != task.num_turns:
        return True
    for v, o in zip(ours.turns, official_turn_checks(task, steps), strict=True):
        expected_exec = (not o["empty"] and o["response"]) if o["checked"] else True
        if (v.state_pass, v.exec_pass, v.empty) != (o["state"], expected_exec, o["empty"]):
            return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--per-category", type=int, default=None, help="the first N tasks of each category")
    parser.add_argument("--smoke", action="store_true", help=f"tiny run of every code path: {SMOKE}")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)
    total, bad = Counter(), Counter()
    examples = []
    for seed in range(args.seeds):
        for task in chosen_tasks(args.per_category):
            for kind, steps in perturbations(task, seed=seed):
                total[task.category] += 1
                if not agrees(task, steps):
                    bad[task.category] += 1
                    examples.append((task.id, kind, seed))
    print(f"{'category':<14}{'trajectories':>14}{'disagreements':>15}")
    for category in total:
        print(f"{category:<14}{total[category]:>14}{bad[category]:>15}")
    for example in examples[:20]:
        print("disagreement:", example)
    n, d = sum(total.values()), sum(bad.values())
    print(json.dumps({"trajectories": n, "disagreements": d, "agreement": round(1 - d / n, 6)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
