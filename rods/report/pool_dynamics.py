"""Pool-dynamics figures of a run (paper: zone counts, pool by origin, synthesized, first rewards).

Reads what the engine wrote to its directory (`metrics.jsonl`, `events.jsonl`)
and draws PNGs with matplotlib's Agg backend (no display needed):

- `zones.png`: tasks per zone (new / hard / boundary / mastered) over steps;
- `pool.png`: active pool by origin (human seeds, synthesized) and queue length;
- `synthesized.png`: cumulative synthesized (accepted), injected and retired;
- `first_rewards.png`: distribution of injected tasks' first-rewards means
  (the paper reports 0.25-0.75);
- `informative.png`: informative-group fraction and mean φ over steps.

After a resume, steps replayed by the trainer appear twice in the logs; the
last record of each step wins.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rods.engine.events import EVENTS_FILE, METRICS_FILE, read_jsonl

logger = logging.getLogger(__name__)


@dataclass
class RunLogs:
    """The engine logs of one run, de-duplicated by step."""

    directory: Path
    metrics: list[dict[str, Any]] = field(default_factory=list)  # one per step, by step
    epochs: list[dict[str, Any]] = field(default_factory=list)  # metrics recorded at epoch ends
    first_rewards: list[float] = field(default_factory=list)
    retire_reasons: Counter = field(default_factory=Counter)

    def summary(self) -> dict[str, Any]:
        last = (self.epochs or self.metrics or [{}])[-1]
        inf = [m["informative_fraction"] for m in self.metrics if m.get("informative_fraction") is not None]
        fr = sorted(self.first_rewards)
        return {
            "steps": len(self.metrics),
            "epochs": last.get("epoch", 0),
            "active": last.get("active"),
            "active_synthetic": last.get("active_synthetic"),
            "queue": last.get("queue"),
            "synthesized_accepted": last.get("total_accepted", 0),
            "injected": last.get("total_injected", 0),
            "retired": dict(self.retire_reasons),
            "informative_fraction_mean": sum(inf) / len(inf) if inf else None,
            "first_rewards_median": fr[len(fr) // 2] if fr else None,
            "first_rewards_in_0.25_0.75": (sum(0.25 <= r <= 0.75 for r in fr) / len(fr)) if fr else None,
        }


def find_engine_dir(run_dir: str | Path) -> Path:
    """The directory holding the engine logs: RUN_DIR itself or RUN_DIR/engine."""
    run_dir = Path(run_dir)
    for candidate in (run_dir, run_dir / "engine"):
        if (candidate / METRICS_FILE).exists() or (candidate / EVENTS_FILE).exists():
            return candidate
    raise FileNotFoundError(f"no engine logs ({METRICS_FILE}, {EVENTS_FILE}) in {run_dir} or {run_dir / 'engine'}")


def load_run(run_dir: str | Path) -> RunLogs:
    directory = find_engine_dir(run_dir)
    logs = RunLogs(directory)
    by_step: dict[int, dict[str, Any]] = {}
    by_epoch_step: dict[int, dict[str, Any]] = {}
    for m in read_jsonl(directory / METRICS_FILE):
        (by_epoch_step if m.get("epoch_end") else by_step)[m["step"]] = m
    logs.metrics = [by_step[s] for s in sorted(by_step)]
    logs.epochs = [by_epoch_step[s] for s in sorted(by_epoch_step)]
    first: dict[str, float] = {}
    retired: dict[str, str] = {}
    for e in read_jsonl(directory / EVENTS_FILE):
        if e.get("event") == "first_rewards" and e.get("mean") is not None:
            first[e["task_id"]] = float(e["mean"])
        elif e.get("event") == "retire":
            retired[e["task_id"]] = e["reason"]
    logs.first_rewards = list(first.values())
    logs.retire_reasons = Counter(retired.values())
    return logs


def make_report(run_dir: str | Path, out_dir: str | Path | None = None) -> tuple[list[Path], dict[str, Any]]:
    """Draw the figures of a run; returns the PNG paths and a summary dict."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    logs = load_run(run_dir)
    out = Path(out_dir) if out_dir is not None else logs.directory / "report"
    out.mkdir(parents=True, exist_ok=True)
    if not logs.metrics and not logs.epochs:
        raise ValueError(f"{logs.directory / METRICS_FILE} has no metrics records yet")
    series = sorted(logs.metrics + logs.epochs, key=lambda m: (m["step"], bool(m.get("epoch_end"))))
    steps = [m["step"] for m in series]
    paths = []

    def save(fig, name: str) -> None:
        path = out / name
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)

    fig, ax = plt.subplots(figsize=(7, 4))
    for zone, color in (("boundary", "tab:green"), ("mastered", "tab:blue"), ("hard", "tab:red"), ("new", "tab:gray")):
        ax.plot(steps, [m["zones"][zone] for m in series], label=zone, color=color)
    ax.set(xlabel="step", ylabel="active tasks", title="Tasks per zone")
    ax.legend()
    save(fig, "zones.png")

    fig, ax = plt.subplots(figsize=(7, 4))
    seed = [m["active_seed"] for m in series]
    synth = [m["active_synthetic"] for m in series]
    ax.stackplot(steps, seed, synth, labels=["human seeds", "synthesized"], colors=["tab:blue", "tab:orange"],
                 alpha=0.8)
    ax.plot(steps, [m["queue"] for m in series], color="black", linestyle="--", label="candidate queue")
    ax.set(xlabel="step", ylabel="tasks", title="Active pool by origin")
    ax.legend(loc="upper left")
    save(fig, "pool.png")

    fig, ax = plt.subplots(figsize=(7, 4))
    for key, label in (("total_accepted", "synthesized (accepted)"), ("total_injected", "injected"),
                       ("total_retired", "retired")):
        ax.plot(steps, [m.get(key, 0) for m in series], label=label)
    ax.set(xlabel="step", ylabel="tasks (cumulative)", title="Cumulative synthesis")
    ax.legend()
    save(fig, "synthesized.png")

    fig, ax = plt.subplots(figsize=(7, 4))
    if logs.first_rewards:
        ax.hist(logs.first_rewards, bins=20, range=(0, 1), color="tab:orange", edgecolor="white")
    else:
        ax.text(0.5, 0.5, "no injected task observed yet", ha="center", va="center", transform=ax.transAxes)
    for x in (0.25, 0.75):
        ax.axvline(x, color="gray", linestyle=":")
    ax.set(xlabel="mean of first rewards", ylabel="injected tasks", xlim=(0, 1),
           title=f"First rewards of injected tasks (n={len(logs.first_rewards)})")
    save(fig, "first_rewards.png")

    fig, ax = plt.subplots(figsize=(7, 4))
    pts = [(m["step"], m["informative_fraction"]) for m in logs.metrics if m.get("informative_fraction") is not None]
    phis = [(m["step"], m["mean_phi"]) for m in logs.metrics if m.get("mean_phi") is not None]
    if pts:
        ax.plot(*zip(*pts), label="informative fraction (groups with reward variance > 0)", alpha=0.8)
    if phis:
        ax.plot(*zip(*phis), label="mean φ(r̄) over classified tasks", alpha=0.8)
    ax.set(xlabel="step", ylim=(0, 1.05), title="Informativeness")
    ax.legend(loc="lower left")
    save(fig, "informative.png")
    return paths, logs.summary()
