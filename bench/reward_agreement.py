"""Full agreement run: every BFCL task x every perturbation kind x seeds, rods vs BFCL's checker.

Slower than the suite's agreement test (which uses 12 tasks per category): about
20k trajectories for two seeds, a few minutes on 2 cores. Per trajectory it
compares our binary reward with `multi_turn_checker`'s verdict and our per-turn
verdicts with BFCL's sub-checkers applied to each turn.

Usage: python bench/reward_agreement.py [--seeds 2]
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
from rods.tasks import load_bfcl_tasks


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
    args = parser.parse_args()
    total, bad = Counter(), Counter()
    examples = []
    for seed in range(args.seeds):
        for task in load_bfcl_tasks():
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
