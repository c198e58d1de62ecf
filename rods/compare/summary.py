"""The comparison's figures, read back from its run directories: `comparison.json`, `table.md`, PNGs.

Per run (from what the run itself wrote):

* ``informative_fraction`` per step and ``informative_fraction_late``, its mean
  over the second half of training (steps > max_steps/2): the share of GRPO
  groups whose K rewards were not all equal (`metrics.jsonl`, the engine's
  signal: the progress reward, or the binary verdict in the binary-detection
  ablation);
* ``mean_reward``: TRL's logged mean training reward, averaged over steps
  (`trainer_log.jsonl`);
* ``zones_end``: active tasks per zone at the last recorded step;
* ``synthesized`` (candidates accepted into the queue) and ``injected``;
* ``wall_seconds``: the run's jobs, all attempts together (`attempts.jsonl`);
* ``heldout_progress/accuracy_before/after`` (`heldout_before|after/report.json`);
* ``ood/<suite>/<figure>`` for each out-of-distribution suite the run was scored on
  (`ood/<suite>/report.json`, `rods.compare.ood`).

Per arm: each figure's mean, spread (sample std) and min/max over seeds.
A resumed run's replayed steps appear twice in its logs; the last record wins.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

from rods.compare.arms import ATTEMPTS_FILE, DONE_FILE
from rods.compare.heldout import AFTER, BEFORE, REPORT
from rods.compare.ood import read_run_ood
from rods.engine.events import read_jsonl
from rods.report import load_run

log = logging.getLogger(__name__)

COMPARISON_FILE = "comparison.json"
TABLE_FILE = "table.md"
INFORMATIVE_PNG = "informative_fraction.png"
HELDOUT_PNG = "heldout.png"

#: Per-run numbers aggregated per arm.
FIGURES = (
    "informative_fraction_late", "mean_reward", "synthesized", "injected", "wall_seconds",
    "heldout_progress_before", "heldout_progress_after", "heldout_accuracy_before", "heldout_accuracy_after",
)
ZONES = ("new", "hard", "boundary", "mastered")


def spread(values: list[float | None]) -> dict[str, Any]:
    """Mean, sample std, min, max and count of the values that exist (None: none did)."""
    xs = [float(v) for v in values if v is not None]
    if not xs:
        return {"mean": None, "std": None, "min": None, "max": None, "n": 0}
    mean = sum(xs) / len(xs)
    std = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return {"mean": mean, "std": std, "min": min(xs), "max": max(xs), "n": len(xs)}


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _last_by_step(records: list[dict[str, Any]], key: str) -> dict[int, float]:
    out: dict[int, float] = {}
    for r in records:
        if r.get(key) is not None and "step" in r:
            out[int(r["step"])] = float(r[key])
    return out


def read_run(arm: str, seed: int, run_dir: str | Path) -> dict[str, Any]:
    """One finished run's figures (see module doc)."""
    run_dir = Path(run_dir)
    done = json.loads((run_dir / DONE_FILE).read_text(encoding="utf-8"))
    steps = int(done["steps"])
    logs = load_run(run_dir)
    informative = [(int(m["step"]), float(m["informative_fraction"])) for m in logs.metrics
                   if m.get("informative_fraction") is not None]
    last = max(logs.metrics + logs.epochs, key=lambda m: (m["step"], bool(m.get("epoch_end"))))
    rewards = _last_by_step(read_jsonl(run_dir / "trainer_log.jsonl"), "reward")
    attempts = read_jsonl(run_dir / ATTEMPTS_FILE)
    seconds = [a["seconds"] for a in attempts if a.get("event") == "end" and "seconds" in a]
    run: dict[str, Any] = {
        "arm": arm,
        "seed": seed,
        "run_dir": str(run_dir),
        "steps": steps,
        "informative_fraction": informative,
        "informative_fraction_late": _mean([v for s, v in informative if s > steps / 2]),
        "mean_reward": _mean(list(rewards.values())),
        "zones_end": {z: last["zones"].get(z, 0) for z in ZONES},
        "synthesized": last.get("total_accepted", 0),
        "injected": last.get("total_injected", 0),
        "wall_seconds": round(sum(seconds), 2) if seconds else done.get("seconds"),
        "attempts": sum(1 for a in attempts if a.get("event") == "start"),
    }
    for when, folder in (("before", BEFORE), ("after", AFTER)):
        path = run_dir / folder / REPORT
        report = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
        run[f"heldout_progress_{when}"] = report["overall_progress"] if report else None
        run[f"heldout_accuracy_{when}"] = report["overall_accuracy"] if report else None
    run["ood"] = read_run_ood(run_dir)
    return run


def aggregate(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per arm (in first-seen order): every figure's spread over its seeds, zones too."""
    arms: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        arms.setdefault(run["arm"], []).append(run)
    out = {}
    for name, members in arms.items():
        entry: dict[str, Any] = {"seeds": [r["seed"] for r in members]}
        for key in FIGURES:
            entry[key] = spread([r[key] for r in members])
        entry["zones_end"] = {z: spread([r["zones_end"][z] for r in members]) for z in ZONES}
        for key in sorted({k for r in members for k in r.get("ood", {})}):
            entry[key] = spread([r.get("ood", {}).get(key) for r in members])
        out[name] = entry
    return out


def summarize_comparison(out: str | Path, runs: list[tuple[str, int, str | Path]],
                         arms: dict[str, str] | None = None, unfinished: list[str] = ()) -> dict[str, Any]:
    """Read every run, write `comparison.json`, `table.md` and the figures under `out`; return the JSON.
    `unfinished`: the runs ("arm/seed-N") of the comparison not yet finished, left out and named (a summary of
    the runs so far, `rods compare --summarize`)."""
    out = Path(out)
    per_run = [read_run(arm, seed, run_dir) for arm, seed, run_dir in runs]
    result = {
        "arms": aggregate(per_run),
        "configs": arms or {},
        "steps": max((r["steps"] for r in per_run), default=0),
        "heldout_file": str(out / "heldout.jsonl") if (out / "heldout.jsonl").is_file() else None,
        "runs": per_run,
        "unfinished": list(unfinished),
        "figures": [],
    }
    try:
        result["figures"] = [str(p) for p in draw_figures(out, per_run, result["arms"])]
    except ImportError:  # pragma: no cover - matplotlib is a dependency
        log.warning("matplotlib is not installed; no figures")
    (out / COMPARISON_FILE).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    (out / TABLE_FILE).write_text(markdown_table(result), encoding="utf-8")
    log.info("wrote %s and %s", out / COMPARISON_FILE, out / TABLE_FILE)
    return result


def _fmt(s: dict[str, Any], digits: int = 3, *, range_: bool = True) -> str:
    if s["mean"] is None:
        return "n/a"
    text = f"{s['mean']:.{digits}f} ± {s['std']:.{digits}f}"
    return text + (f" [{s['min']:.{digits}f}, {s['max']:.{digits}f}]" if range_ and s["n"] > 1 else "")


def markdown_table(result: dict[str, Any]) -> str:
    """The per-arm table: mean ± std [min, max] over seeds."""
    ood = sorted({k for a in result["arms"].values() for k in a if k.startswith("ood/")})
    head = ("arm", "seeds", "informative fraction (late)", "mean reward", "held-out progress before → after",
            "held-out accuracy before → after", *(ood_column(k) for k in ood),
            "zones at end (new/hard/boundary/mastered)", "synthesized", "injected", "wall (s)")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, a in result["arms"].items():
        zones = "/".join(f"{a['zones_end'][z]['mean']:.1f}" if a["zones_end"][z]["mean"] is not None else "-"
                         for z in ZONES)
        lines.append("| " + " | ".join((
            name, str(len(a["seeds"])), _fmt(a["informative_fraction_late"]), _fmt(a["mean_reward"], range_=False),
            f"{_fmt(a['heldout_progress_before'], range_=False)} → {_fmt(a['heldout_progress_after'], range_=False)}",
            f"{_fmt(a['heldout_accuracy_before'], range_=False)} → {_fmt(a['heldout_accuracy_after'], range_=False)}",
            *(_fmt(a[k], range_=False) if k in a else "-" for k in ood),
            zones, _fmt(a["synthesized"], 1, range_=False), _fmt(a["injected"], 1, range_=False),
            _fmt(a["wall_seconds"], 0, range_=False),
        )) + " |")
    note = (f"\nMean ± sample std [min, max] over seeds; {result['steps']} GRPO steps per run. "
            "Informative fraction (late): share of GRPO groups with non-zero reward variance over the second "
            "half of training. Held-out: greedy, on the same held-out tasks for every arm."
            + (" Out of distribution (after training): `rods eval --suite` on each run's last checkpoint."
               if ood else "")
            + (f" **Runs so far**: not yet finished, so not in the table: {', '.join(result['unfinished'])}."
               if result.get("unfinished") else "") + "\n")
    return "\n".join(lines) + "\n" + note


def ood_column(key: str) -> str:
    """``ood/bfcl_v4/accuracy`` -> ``bfcl_v4 accuracy (OOD)``."""
    _, suite, figure = key.split("/", 2)
    return f"{suite} {figure} (OOD)"


def draw_figures(out: Path, runs: list[dict[str, Any]], arms: dict[str, dict[str, Any]]) -> list[Path]:
    """Informative fraction over steps per arm (mean, min-max band over seeds); held-out score before/after."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    fig, ax = plt.subplots(figsize=(7, 4))
    for name in arms:
        by_step: dict[int, list[float]] = {}
        for run in (r for r in runs if r["arm"] == name):
            for step, value in run["informative_fraction"]:
                by_step.setdefault(step, []).append(value)
        if not by_step:
            continue
        steps = sorted(by_step)
        mean = [sum(by_step[s]) / len(by_step[s]) for s in steps]
        (line,) = ax.plot(steps, mean, label=f"{name} (n={len(arms[name]['seeds'])})")
        ax.fill_between(steps, [min(by_step[s]) for s in steps], [max(by_step[s]) for s in steps],
                        color=line.get_color(), alpha=0.2)
    ax.set(xlabel="GRPO step", ylabel="informative groups", ylim=(-0.02, 1.05),
           title="Informative-group fraction (mean over seeds, band: min-max)")
    ax.legend(loc="best")
    fig.tight_layout()
    paths.append(out / INFORMATIVE_PNG)
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 4))
    names = list(arms)
    width = 0.38
    for offset, when, color in ((-width / 2, "before", "tab:gray"), (width / 2, "after", "tab:blue")):
        stats = [arms[n][f"heldout_progress_{when}"] for n in names]
        means = [s["mean"] if s["mean"] is not None else 0.0 for s in stats]
        low = [m - (s["min"] if s["min"] is not None else m) for m, s in zip(means, stats)]
        high = [(s["max"] if s["max"] is not None else m) - m for m, s in zip(means, stats)]
        ax.bar([i + offset for i in range(len(names))], means, width, yerr=[low, high], capsize=4,
               label=when, color=color)
    ax.set_xticks(range(len(names)), names)
    ax.set(ylabel="held-out progress RP", ylim=(0, 1.05), title="Held-out score per arm (mean, bars: min-max)")
    ax.legend()
    fig.tight_layout()
    paths.append(out / HELDOUT_PNG)
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths
