"""A process that drives a persistent engine forever; `test_sigkill.py` kills it with SIGKILL.

It prints `ACCEPTED <ids>` after each `submit` returns and `EPOCH <report json>`
after each `on_epoch_end` returns: whatever it printed must survive the kill.
"""

from __future__ import annotations

import json
import random
import sys

from rods.engine import DataEngine, EngineConfig

# Run as a script, so its own folder (with engine_factory) is first on sys.path.
from engine_factory import make_seeds, make_task

CONFIG = EngineConfig(K=8, min_observations=4, burn_in_rollouts=4, exclusion_window=2, capacity=15,
                      max_seeds_per_step=4, quotas={"basic": 2, "miss_func": 1, "miss_param": 1},
                      stale_after_steps=12, flush_every_steps=3)


def report(line: str) -> None:
    """One line in one write: `print` writes its arguments one by one, and a kill between two would leave a
    line that says less than what happened ("EPOCH " without its report)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main(run_dir: str) -> None:
    eng = DataEngine(CONFIG, make_seeds(24), run_dir=run_dir)
    step = eng.last_step + 1
    print("READY", step, flush=True)
    while True:
        rng = random.Random(step)
        active = eng.active_ids()
        for tid in rng.sample(active, min(8, len(active))):
            p = (sum(map(ord, tid)) % 10) / 10
            eng.observe(step, tid, [float(rng.random() < p) for _ in range(4)])
        seeds = eng.select_seeds(step)
        cands = [make_task(f"syn-{step}-{i}", s.task_type, origin="synthetic", parent=s.id, step=step)
                 for i, s in enumerate(seeds)]
        res = eng.submit(cands, step)
        report(f"ACCEPTED {' '.join(res.accepted)}")
        if step % 4 == 3:
            rep = eng.on_epoch_end(step)
            report(f"EPOCH {json.dumps(rep.to_dict())}")
        step += 1


if __name__ == "__main__":
    main(sys.argv[1])
