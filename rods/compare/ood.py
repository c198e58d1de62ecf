"""Out-of-distribution suites of a comparison: each run's final policy scored by `rods eval --suite ...`.

A suite is given as ``NAME`` or ``NAME: EVAL-ARGS`` (e.g. ``"bfcl_v4: --v4-limit 20"``,
``"tau2: --domain airline --task-ids 0,1 --user-base-url http://127.0.0.1:8001/v1"``): once
a run has trained (or is found finished by a rerun), the runner has `rods eval --suite NAME
--model <its last checkpoint> EVAL-ARGS` score it into ``RUN_DIR/ood/NAME/`` (a LoRA
checkpoint loads its base with the adapter folded in). A suite's folder is renamed into
place only when its report is written, so an interrupted evaluation runs again and a
finished one never does. `headline` reads the figures a comparison puts beside the
held-out split: BFCL V4's mean accuracy over the categories run that ask for calls and over
its irrelevance categories apart (a model that never calls scores 1 there), tau2's pass^1 and mean
reward (means over domains), BFCL V3 multi-turn's overall accuracy and progress.
"""

from __future__ import annotations

import json
import logging
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

OOD_DIR = "ood"
REPORT = "report.json"
#: BFCL V4 categories whose right answer is no call (or that BFCL scores by spread, not accuracy).
NO_CALL_CATEGORIES = ("irrelevance", "live_irrelevance", "live_relevance", "format_sensitivity")


@dataclass(frozen=True)
class Suite:
    """One evaluation suite of a comparison: its `rods eval --suite` name and extra arguments."""

    name: str
    args: tuple[str, ...] = ()

    @classmethod
    def parse(cls, spec: str) -> Suite:
        """``NAME`` or ``NAME: EVAL-ARGS``; an unknown suite is an error naming the known ones."""
        from rods.eval import SUITE_NAMES

        name, _, rest = spec.partition(":")
        name = name.strip()
        if name not in SUITE_NAMES:
            raise ValueError(f"--ood {spec!r}: unknown suite {name!r}; expected one of {', '.join(SUITE_NAMES)}")
        args = tuple(shlex.split(rest))
        if any(a in ("--out", "--model", "--suite") for a in args):
            raise ValueError(f"--ood {spec!r}: --suite, --model and --out are the comparison's to set")
        return cls(name, args)

    def spec(self) -> str:
        return self.name + (": " + shlex.join(self.args) if self.args else "")


def evaluate_run(run_dir: str | Path, policy: str | Path, suites: list[Suite]) -> dict[str, Path]:
    """Score `policy` on every suite not yet scored for this run; returns suite -> its report file."""
    out: dict[str, Path] = {}
    for suite in suites:
        folder = Path(run_dir) / OOD_DIR / suite.name
        if not (folder / REPORT).is_file():
            partial = folder.with_name(suite.name + ".partial")
            shutil.rmtree(partial, ignore_errors=True)
            command = [sys.executable, "-m", "rods", "eval", "--suite", suite.name, "--model", str(policy),
                       *suite.args, "--out", str(partial)]
            log.info("%s: %s", run_dir, shlex.join(command))
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0 or not (partial / REPORT).is_file():
                raise RuntimeError(f"{run_dir}: `rods eval --suite {suite.name}` exited with {done.returncode}: "
                                   f"{done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ''}")
            shutil.rmtree(folder, ignore_errors=True)
            partial.rename(folder)
        out[suite.name] = folder / REPORT
    return out


def headline(name: str, report: dict[str, Any]) -> dict[str, float | None]:
    """The figures a comparison shows for one suite's report."""
    if name == "bfcl_v4":  # calls asked for, and restraint apart: a model that never calls scores 1 on the latter
        categories = report.get("categories", {})
        calls = [c["accuracy"] for n, c in categories.items() if n not in NO_CALL_CATEGORIES]
        restraint = [c["accuracy"] for n, c in categories.items() if n in ("irrelevance", "live_irrelevance")]
        return {"accuracy": sum(calls) / len(calls) if calls else None,
                "irrelevance": sum(restraint) / len(restraint) if restraint else None}
    if name == "tau2":
        domains = list(report.get("domains", {}).values())
        if not domains:
            return {"pass^1": None, "avg_reward": None}
        return {"pass^1": sum(d["pass_hat_k"]["pass^1"] for d in domains) / len(domains),
                "avg_reward": sum(d["avg_reward"] for d in domains) / len(domains)}
    return {"accuracy": report.get("overall_accuracy"), "progress": report.get("overall_progress")}


def read_run_ood(run_dir: str | Path) -> dict[str, float | None]:
    """``ood/<suite>/<figure>`` for every suite this run was scored on."""
    out: dict[str, float | None] = {}
    base = Path(run_dir) / OOD_DIR
    if base.is_dir():
        for path in sorted(base.glob(f"*/{REPORT}")):
            suite = path.parent.name
            if suite.endswith(".partial"):
                continue
            for key, value in headline(suite, json.loads(path.read_text(encoding="utf-8"))).items():
                out[f"ood/{suite}/{key}"] = value
    return out
