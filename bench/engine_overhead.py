"""Engine overhead: per-step cost (32 `observe` calls with K=16 rewards + `select_seeds`)
and per epoch boundary, for an active pool of 800 and of 100,000 tasks.

The engine must be invisible next to a GRPO step (seconds to minutes): the
per-step cost should stay far below a millisecond at the paper's pool size,
and the epoch boundary should grow no worse than linearly with pool size.
Timings are in-memory (no run_dir) unless the row says "persistent", where the
SQLite store is attached (ledger flushed every `flush_every_steps` steps,
epoch decisions committed with fsync). After building a pool the bench calls
`gc.freeze()` (and again before each timed epoch boundary, after the new
candidates were queued): the pool and queue live as long as the trainer, and
without it a full cyclic-GC pass over 100k tasks' objects lands in whichever
call happens to trigger it (0.5-2 s at 100k here, growing with everything the
process holds, not with the engine's work). `--no-freeze` shows those figures. Epoch
boundaries are timed with ~n/10 tasks just observed at 0 or 1 and n/5 new
candidates queued, so retirement and injection both do work proportional to n.

Usage: python bench/engine_overhead.py [--steps 300] [--epochs 3] [--smoke]
(the defaults are the published run; `--smoke`: 5 steps and 1 epoch per pool, both pools and the
SQLite store still built, some seconds, mostly building the 100k pool)
Last line: {"step_ms_800": ..., "step_ms_100k": ..., "epoch_ms_800": ..., "epoch_ms_100k": ...}
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import tempfile
import time

from rods.engine import DataEngine, EngineConfig
from rods.tasks import Message, Provenance, Task

TYPES = ("base", "long_context", "miss_func", "miss_param")
TASKS_PER_STEP = 32
FREEZE = True
#: CPU time of this thread: the 2 cores here are shared, and wall time mostly
#: measured how long we waited for a core (use --wall for wall-clock time).
CLOCK = time.thread_time
K = 16
#: --smoke: the fewest timings that still run every path (both pools, the persistent store).
SMOKE = {"steps": 5, "epochs": 1}


_TEMPLATE = Task(
    id="template",
    category="base",
    question=[[{"role": "user", "content": "template"}]],
    involved_classes=["MathAPI"],
    ground_truth=[["add(a=1, b=2)"]],
)


def make_task(i: int, origin: str = "seed") -> Task:
    """A distinct valid task (copied from a validated template: building 100k is the slow part)."""
    return _TEMPLATE.model_copy(update={
        "id": f"{origin}-{i}",
        "category": TYPES[i % 4],
        "question": [[Message(role="user", content=f"task {origin} {i}")]],
        "provenance": Provenance(origin=origin, parent_id=None if origin == "seed" else f"seed-{i}"),
    })


_VECTORS_RNG = random.Random(1)
#: Reward groups of K progress rewards around various means (drawn once; picking is cheap).
REWARD_VECTORS = [
    [round(min(1.0, max(0.0, _VECTORS_RNG.random() * 0.5 + p - 0.25)), 3) for _ in range(K)]
    for p in [_VECTORS_RNG.random() for _ in range(512)]
]


def rewards_for(rng: random.Random, p: float) -> list[float]:
    return REWARD_VECTORS[int(p * 511)]


def build(n: int, run_dir: str | None) -> tuple[DataEngine, random.Random]:
    """An engine with n/2 seeds and n/2 synthesized tasks, every task observed once."""
    rng = random.Random(0)
    gc.disable()  # building 100k tasks otherwise spends most of its time in GC passes
    half = n // 2
    cfg = EngineConfig(capacity=n, stale_after_steps=None, burn_in_threshold=0.0, seed=0)
    eng = DataEngine(cfg, [make_task(i) for i in range(half)], run_dir=run_dir)
    eng.submit([make_task(i, "synthetic") for i in range(n - half)])
    step = 0
    while eng.queued_tasks():
        eng.on_epoch_end(step)
        step += 1
    for tid in eng.active_ids():
        eng.observe(step, tid, rewards_for(rng, rng.random()))
    # The pool is long-lived: move it out of the cyclic GC's young generations, as a
    # trainer process that holds it for hours effectively does (see the module docstring).
    gc.enable()
    if FREEZE:
        gc.collect()
        gc.freeze()
    return eng, rng


def time_steps(eng: DataEngine, rng: random.Random, steps: int, start: int) -> list[float]:
    ids = eng.active_ids()
    plan = [[(tid, rewards_for(rng, rng.random())) for tid in rng.sample(ids, TASKS_PER_STEP)] for _ in range(steps)]
    out = []
    for k, batch in enumerate(plan):
        step = start + k
        t0 = CLOCK()
        for tid, rewards in batch:
            eng.observe(step, tid, rewards)
        eng.select_seeds(step)
        out.append((CLOCK() - t0) * 1e3)
    return out


def time_epochs(eng: DataEngine, rng: random.Random, epochs: int, start: int, n: int,
                decisions: list[int] | None = None) -> list[float]:
    out = []
    serial = n
    for e in range(epochs):
        step = start + e
        fresh = [make_task(serial + j, "synthetic") for j in range(n // 5)]
        serial += len(fresh)
        eng.submit(fresh)
        # the queue is full, some tasks drifted: the boundary has real work to do
        for tid in rng.sample(eng.active_ids(), min(len(eng.active_ids()), n // 10)):
            eng.observe(step, tid, [rng.choice([0.0, 1.0])] * K)
        if FREEZE:
            gc.collect()
            gc.freeze()  # the queue and pool are long-lived; see the module docstring
        t0 = CLOCK()
        rep = eng.on_epoch_end(step)
        out.append((CLOCK() - t0) * 1e3)
        if decisions is not None:
            decisions.append(len(rep.injected) + len(rep.retired) + len(rep.expired))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--no-freeze", action="store_true", help="leave the cyclic GC as it is")
    parser.add_argument("--wall", action="store_true", help="time wall-clock instead of thread CPU time")
    parser.add_argument("--smoke", action="store_true", help=f"tiny run of every code path: {SMOKE}")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)
    global FREEZE, CLOCK
    FREEZE = not args.no_freeze
    if args.wall:
        CLOCK = time.perf_counter
    rows, figures, work = [], {}, {}
    for n, label in ((800, "800"), (100_000, "100k")):
        t0 = time.perf_counter()
        eng, rng = build(n, None)
        setup = time.perf_counter() - t0
        steps = time_steps(eng, rng, args.steps, 1000)
        decisions: list[int] = []
        epochs = time_epochs(eng, rng, args.epochs * (4 if n == 800 else 1), 5000, n, decisions)
        figures[f"step_ms_{label}"] = round(statistics.median(steps), 4)
        figures[f"epoch_ms_{label}"] = round(statistics.median(epochs), 2)
        work[label] = sum(epochs) / sum(n + d for d in decisions) * 1e3  # us per (pool task + decision)
        rows.append((f"{n:>7} in-memory", statistics.median(steps), max(steps), statistics.median(epochs),
                     statistics.median(decisions), setup))
        if n == 800:
            with tempfile.TemporaryDirectory() as d:
                peng, prng = build(n, d)
                psteps = time_steps(peng, prng, args.steps, 1000)
                pepochs = time_epochs(peng, prng, args.epochs, 5000, n)
                peng.close()
            figures["step_ms_800_persistent"] = round(statistics.median(psteps), 4)
            figures["epoch_ms_800_persistent"] = round(statistics.median(pepochs), 2)
            rows.append((f"{n:>7} persistent", statistics.median(psteps), max(psteps),
                         statistics.median(pepochs), float("nan"), float("nan")))
    print(f"times are {'wall-clock' if args.wall else 'thread CPU time'} in ms")
    print(f"{'pool':>18} | {'step ms (median)':>16} | {'step ms (max)':>13} | {'epoch ms':>9} | "
          f"{'decisions/epoch':>15} | setup s")
    for name, med, mx, ep, dec, setup in rows:
        print(f"{name:>18} | {med:16.4f} | {mx:13.3f} | {ep:9.2f} | {dec:15.0f} | {setup:.1f}")
    ratio = figures["epoch_ms_100k"] / figures["epoch_ms_800"]
    print(f"epoch boundary: {ratio:.0f}x the time for a {100_000 / 800:.0f}x larger pool; "
          f"{work['800']:.2f} us per (pool task + decision) at 800, {work['100k']:.2f} at 100k "
          f"(decisions = injections + retirements + expiries)")
    print(json.dumps({k: figures[k] for k in ("step_ms_800", "step_ms_100k", "epoch_ms_800", "epoch_ms_100k")}))


if __name__ == "__main__":
    main()
