"""A closed-loop curriculum SIMULATION (not a claim about LLMs): Static vs DAPO-style
dynamic sampling vs random-seed RODS vs RODS, 800 steps each, one run.

The world, kept deliberately small:

- *Tasks* have a type (basic / miss_func / miss_param), 1-5 turns and a latent
  difficulty d. 400 human seeds and 400 test tasks share one difficulty distribution.
- *The learner* has a skill θ_τ per type. A rollout passes each turn with
  p = sigmoid(β (θ_τ − d)); its progress reward is the share of turns passed.
- *Learning*: each trained group moves θ_τ by η × std(group rewards) (other
  types get a share of it): only groups with non-zero reward variance teach,
  as in GRPO, and the most where the variance is largest.
- *Synthesis* (RODS arms): each selected seed yields, after a latency of a few
  steps and with the paper's judge pass rate, one variant of the same type with
  difficulty d_seed + noise. The real `DataEngine` runs the loop: it observes
  every group, selects seeds, queues variants, injects and retires at epoch ends.

Arms: **Static** samples the 400 seeds; **DAPO** samples the seeds too but
rolls out up to 3 batches per step and discards zero-variance groups (the
discarded rollouts are "wasted"); **RODS-random** is RODS with the paper's
"random seed choice" ablation; **RODS** is the engine with paper defaults.

The world's constants (BETA, ETA, the difficulty distribution) were picked so
that a static learner masters most of the seed set within 800 steps, i.e. so
that boundary drift happens at all; with a slower learner the static set stays
informative and the arms differ less. Per-turn successes are independent,
which makes partially mastered tasks noisier than real agents.

"Informative fraction" is the share of rolled-out groups with non-zero reward
variance; "late" is the last quarter of training; "skill" is the mean expected
progress reward on the 400 test tasks at the end.

Usage: python bench/curriculum_sim.py [--steps 800] [--out runs/curriculum_sim] [--smoke]
(the defaults are the published run; `--smoke`: 40 steps, every arm and code path, a second or two)
Last line: {"informative_late_static": ..., "informative_late_random": ...,
"informative_late_dapo": ..., "informative_late_rods": ..., "wasted_rollouts_dapo": ...,
"skill_static": ..., "skill_rods": ...}
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rods.engine import DataEngine, EngineConfig
from rods.tasks import Message, Provenance, Task

TYPES = ("basic", "miss_func", "miss_param")
TYPE_P = (0.5, 0.25, 0.25)
CATEGORY = {"basic": "base", "miss_func": "miss_func", "miss_param": "miss_param"}
#: --smoke: enough steps for an epoch boundary (400 seeds / 32 a step) and injected variants.
SMOKE = {"steps": 40}
BATCH = 32  # tasks per step
GROUP = 8  # rollouts per task (GRPO group)
BETA = 3.0  # skill-difficulty slope of a turn's success
ETA = 0.003  # learning rate per unit of group reward std
TRANSFER = 0.3  # share of a type's gain that reaches the other types
DAPO_MAX_BATCHES = 3
LATENCY = 6  # steps from seed selection to a finished variant
JUDGE_PASS = 0.63  # the paper's judge pass rate with rewrite
VARIANT_NOISE = 0.35  # std of a variant's difficulty around its seed's

_TEMPLATE = Task(id="template", category="base", question=[[{"role": "user", "content": "-"}]],
                 involved_classes=["MathAPI"], ground_truth=[["add(a=1, b=2)"]])


@dataclass
class SimTask:
    id: str
    type: str
    turns: int
    difficulty: float


@dataclass
class Learner:
    theta: np.ndarray = field(default_factory=lambda: np.zeros(len(TYPES)))

    def p_turn(self, tasks: list[SimTask]) -> np.ndarray:
        th = np.array([self.theta[TYPES.index(t.type)] for t in tasks])
        d = np.array([t.difficulty for t in tasks])
        return 1.0 / (1.0 + np.exp(-BETA * (th - d)))

    def rollout(self, tasks: list[SimTask], rng: np.random.Generator) -> np.ndarray:
        """Progress rewards, shape (len(tasks), GROUP)."""
        p = self.p_turn(tasks)
        turns = np.array([t.turns for t in tasks])
        passed = rng.binomial(turns[:, None].repeat(GROUP, 1), p[:, None].repeat(GROUP, 1))
        return passed / turns[:, None]

    def learn(self, tasks: list[SimTask], rewards: np.ndarray) -> None:
        std = rewards.std(axis=1)
        for task, s in zip(tasks, std):
            gain = ETA * s
            i = TYPES.index(task.type)
            self.theta += gain * TRANSFER
            self.theta[i] += gain * (1 - TRANSFER)

    def skill(self, test: list[SimTask]) -> float:
        return float(self.p_turn(test).mean())


def make_population(rng: np.random.Generator, n: int, prefix: str) -> list[SimTask]:
    types = rng.choice(len(TYPES), size=n, p=TYPE_P)
    return [
        SimTask(f"{prefix}-{i}", TYPES[t], int(rng.integers(1, 6)), float(rng.normal(1.2, 1.1)))
        for i, t in enumerate(types)
    ]


def to_task(sim: SimTask, origin: str = "seed", parent: str | None = None) -> Task:
    return _TEMPLATE.model_copy(update={
        "id": sim.id, "category": CATEGORY[sim.type],
        "question": [[Message(role="user", content=sim.id)]],
        "provenance": Provenance(origin=origin, parent_id=parent, generation=0 if origin == "seed" else 1),
    })


class EpochSampler:
    """Uniform without replacement within an epoch (one pass over the current pool)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.order: list[str] = []

    def new_epoch(self, ids: list[str]) -> None:
        self.order = [ids[i] for i in self.rng.permutation(len(ids))]

    def take(self, n: int) -> list[str] | None:
        if len(self.order) < n:
            return None
        out, self.order = self.order[:n], self.order[n:]
        return out


def informative(rewards: np.ndarray) -> np.ndarray:
    return rewards.max(axis=1) != rewards.min(axis=1)


def run_static_or_dapo(seeds, test, steps, seed, dapo: bool) -> dict:
    rng = np.random.default_rng(seed)
    learner = Learner()
    by_id = {t.id: t for t in seeds}
    sampler = EpochSampler(rng)
    sampler.new_epoch(list(by_id))
    inf_frac, skill, wasted, rollouts = [], [], 0, 0
    for _ in range(steps):
        kept_tasks, kept_rewards, groups, good = [], [], 0, 0
        for _b in range(DAPO_MAX_BATCHES if dapo else 1):
            ids = sampler.take(BATCH)
            if ids is None:
                sampler.new_epoch(list(by_id))
                ids = sampler.take(BATCH)
            tasks = [by_id[i] for i in ids]
            rewards = learner.rollout(tasks, rng)
            mask = informative(rewards)
            groups += len(tasks)
            good += int(mask.sum())
            rollouts += rewards.size
            if dapo:
                wasted += int((~mask).sum()) * GROUP
                kept_tasks += [t for t, m in zip(tasks, mask) if m]
                kept_rewards.append(rewards[mask])
                if len(kept_tasks) >= BATCH:
                    break
            else:
                kept_tasks, kept_rewards = tasks, [rewards]
        rewards = np.concatenate(kept_rewards)[:BATCH] if kept_rewards else np.zeros((0, GROUP))
        learner.learn(kept_tasks[:BATCH], rewards)
        inf_frac.append(good / groups)
        skill.append(learner.skill(test))
    return {"informative": inf_frac, "skill": skill, "wasted": wasted, "rollouts": rollouts}


def run_rods(seeds, test, steps, seed, random_seeds: bool) -> dict:
    rng = np.random.default_rng(seed)
    learner = Learner()
    by_id = {t.id: t for t in seeds}
    cfg = EngineConfig(random_seeds=random_seeds, seed=seed)
    engine = DataEngine(cfg, [to_task(t) for t in seeds])
    sampler = EpochSampler(rng)
    sampler.new_epoch(engine.active_ids())
    pending: list[tuple[int, SimTask, str]] = []  # (ready step, variant, parent id)
    inf_frac, skill, pool_size, synthetic, rollouts = [], [], [], [], 0
    n_variants = 0
    first_rewards = []
    for step in range(steps):
        ids = sampler.take(BATCH)
        if ids is None:  # epoch boundary: one pass over the pool is done
            engine.on_epoch_end(step)
            sampler.new_epoch(engine.active_ids())
            ids = sampler.take(BATCH) or engine.active_ids()[:BATCH]
        tasks = [by_id[i] for i in ids]
        rewards = learner.rollout(tasks, rng)
        for task, r in zip(tasks, rewards):
            if task.id.startswith("var") and engine.stats(task.id)["n_groups"] == 0:
                first_rewards.append(float(r.mean()))
            engine.observe(step, task.id, r.tolist())
        learner.learn(tasks, rewards)
        rollouts += rewards.size
        for parent in engine.select_seeds(step):
            if rng.random() < JUDGE_PASS:
                p = by_id[parent.id]
                n_variants += 1
                v = SimTask(f"var-{n_variants}", p.type, p.turns,
                            float(p.difficulty + rng.normal(0, VARIANT_NOISE)))
                pending.append((step + LATENCY, v, p.id))
        ready = [x for x in pending if x[0] <= step]
        pending = [x for x in pending if x[0] > step]
        if ready:
            for _, v, _ in ready:
                by_id[v.id] = v
            engine.submit([to_task(v, "synthetic", parent) for _, v, parent in ready], step)
        m = engine.metrics(step)
        inf_frac.append(float(informative(rewards).mean()))
        skill.append(learner.skill(test))
        pool_size.append(m["active"])
        synthetic.append(m["active_synthetic"])
    m = engine.metrics(steps)
    return {"informative": inf_frac, "skill": skill, "wasted": 0, "rollouts": rollouts, "pool": pool_size,
            "synthetic": synthetic, "synthesized": m["total_accepted"], "injected": m["total_injected"],
            "retired": m["total_retired"], "first_rewards": first_rewards}


def smooth(x: list[float], w: int = 25) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    return np.convolve(x, np.ones(w) / w, mode="valid")


def plot(results: dict, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"Static": "tab:blue", "DAPO": "tab:orange", "RODS-random": "tab:green", "RODS": "tab:red"}
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for name, r in results.items():
        axes[0].plot(smooth(r["informative"]), label=name, color=colors[name])
        axes[1].plot(r["skill"], label=name, color=colors[name])
    for name in ("RODS", "RODS-random"):
        axes[2].plot(results[name]["pool"], color=colors[name], label=f"{name}: active pool")
        axes[2].plot(results[name]["synthetic"], color=colors[name], linestyle="--",
                     label=f"{name}: synthesized in pool")
    axes[0].set(title="Informative groups (share, 25-step mean)", xlabel="step", ylim=(0, 1.02))
    axes[1].set(title="Simulated skill (test tasks)", xlabel="step")
    axes[2].set(title="RODS pool", xlabel="step")
    for ax in axes:
        ax.legend(fontsize=8)
    fig.suptitle("SIMULATION: curriculum dynamics with a toy learner (not LLM results)")
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "curriculum_sim.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=800)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("runs/curriculum_sim"))
    parser.add_argument("--smoke", action="store_true", help=f"tiny run of every code path: {SMOKE}")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)
    logging.basicConfig(level=logging.WARNING)
    world = np.random.default_rng(args.seed)
    seeds = make_population(world, 400, "seed")
    test = make_population(world, 400, "test")
    t0 = time.perf_counter()
    results = {
        "Static": run_static_or_dapo(seeds, test, args.steps, args.seed + 1, dapo=False),
        "DAPO": run_static_or_dapo(seeds, test, args.steps, args.seed + 1, dapo=True),
        "RODS-random": run_rods(seeds, test, args.steps, args.seed + 1, random_seeds=True),
        "RODS": run_rods(seeds, test, args.steps, args.seed + 1, random_seeds=False),
    }
    elapsed = time.perf_counter() - t0
    q = args.steps // 4
    print("SIMULATION (toy learner; see the module docstring). Informative = share of rolled-out groups with "
          "reward variance > 0.")
    print(f"{'arm':<12} | {'inform. early':>13} | {'inform. late':>12} | {'rollouts':>8} | {'wasted':>7} | "
          f"{'skill start':>11} | {'skill end':>9} | synthesized / injected / retired")
    for name, r in results.items():
        early = float(np.mean(r["informative"][:q]))
        late = float(np.mean(r["informative"][-q:]))
        extra = f"{r['synthesized']} / {r['injected']} / {r['retired']}" if "synthesized" in r else "-"
        print(f"{name:<12} | {early:13.3f} | {late:12.3f} | {r['rollouts']:8d} | {r['wasted']:7d} | "
              f"{r['skill'][0]:11.3f} | {r['skill'][-1]:9.3f} | {extra}")
    fr = results["RODS"]["first_rewards"]
    if fr:
        inside = np.mean([(0.25 <= x <= 0.75) for x in fr])
        print(f"RODS: injected variants' first-group mean reward: median {np.median(fr):.2f}, "
              f"{inside:.0%} within 0.25-0.75 (paper: 0.25-0.75)")
    late = {k: float(np.mean(r["informative"][-q:])) for k, r in results.items()}
    print(f"late informative ratio RODS / Static = {late['RODS'] / late['Static']:.2f} "
          f"(paper's boundary-vs-rest reward-variance ratio: 2-2.2x, a different quantity)")
    print(f"figure: {plot(results, args.out)}   ({elapsed:.1f} s)")
    print(json.dumps({
        "informative_late_static": round(late["Static"], 4),
        "informative_late_random": round(late["RODS-random"], 4),
        "informative_late_dapo": round(late["DAPO"], 4),
        "informative_late_rods": round(late["RODS"], 4),
        "wasted_rollouts_dapo": results["DAPO"]["wasted"],
        "skill_static": round(results["Static"]["skill"][-1], 4),
        "skill_rods": round(results["RODS"]["skill"][-1], 4),
    }))


if __name__ == "__main__":
    main()
