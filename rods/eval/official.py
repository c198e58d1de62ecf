"""Re-scoring rollouts with a domain's own checker (`Domain.official_verdict`: BFCL's multi-turn checker).

`rods eval` writes each rollout's decoded calls (`Trajectory.decoded`: per
turn, per step with calls, the call strings) in the shape BFCL's checker
consumes (`write_decoded`); `rescore_file` hands each rollout of a task whose
domain has a checker of its own to it and counts where its verdict and ours
agree. Tasks of a domain without one (tau2-bench's, a Python class, an MCP
server) have rods' verdict alone.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rods.envs.domains import domain_of_task
from rods.rollout.trajectory import Trajectory
from rods.tasks import Task
from rods.tasks.jsonlines import write_lines

log = logging.getLogger(__name__)

# -- the result file ---------------------------------------------------------------


def result_line(traj: Trajectory) -> dict:
    """One line of the decoded-calls file (BFCL's `id` + `multi_turn_model_result_list_decoded`)."""
    return {
        "id": traj.task_id,
        "sample_index": traj.sample_index,
        "category": traj.category,
        "multi_turn_model_result_list_decoded": traj.decoded,
        "rods_binary": traj.binary,
        "rods_progress": traj.progress,
    }


def write_decoded(path: str | Path, trajectories: Iterable[Trajectory]) -> int:
    """Write one JSON line per rollout; returns how many."""
    return write_lines(path, (json.dumps(result_line(traj), ensure_ascii=False) for traj in trajectories))


@dataclass
class Agreement:
    """How the official checker's verdicts compare with ours."""

    total: int = 0
    agree: int = 0
    official_correct: int = 0
    rods_correct: int = 0
    disagreements: list[dict] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.agree / self.total if self.total else 1.0

    def to_json(self) -> dict:
        return {
            "total": self.total,
            "agree": self.agree,
            "agreement": self.rate,
            "official_correct": self.official_correct,
            "rods_correct": self.rods_correct,
            "disagreements": self.disagreements,
        }


def rescore_file(path: str | Path, tasks: Iterable[Task]) -> Agreement:
    """Re-score a decoded-calls file with BFCL's checker and compare with the verdicts it records."""
    by_id = {t.id: t for t in tasks}
    agreement = Agreement()
    with Path(path).open(encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            line = json.loads(raw)
            task = by_id.get(line.get("id"))
            if task is None:
                raise ValueError(f"{path}, line {lineno}: unknown task id {line.get('id')!r}")
            verdict = domain_of_task(task).official_verdict(task, line["multi_turn_model_result_list_decoded"])
            if verdict is None:  # the domain has no checker of its own
                continue
            ours = bool(line["rods_binary"])
            agreement.total += 1
            agreement.official_correct += int(verdict["valid"])
            agreement.rods_correct += int(ours)
            if verdict["valid"] == ours:
                agreement.agree += 1
            else:
                agreement.disagreements.append(
                    {"id": task.id, "sample_index": line.get("sample_index", 0), "rods": ours, **verdict}
                )
    for item in agreement.disagreements:
        log.warning("official checker disagrees on %s: %s", item["id"], item)
    return agreement

