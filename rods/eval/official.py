"""Re-scoring rollouts with BFCL's official multi-turn checker.

`rods eval` writes each rollout's decoded calls (`Trajectory.decoded`: per
turn, per step with calls, the call strings) in the shape
`bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker.multi_turn_checker`
consumes. `safe_official_verdict` hands them to that checker, mirroring BFCL's
`_evaluate_single_multi_turn_entry` (a turn count that differs from the ground
truth's is a force-terminated entry and fails).

BFCL's checker runs call strings through Python's `eval`. The strings we write come from
`format_call` on calls parsed with `ast` (plain names, literal arguments), and
before checking, a call to a name that is not a public method of the task's
classes is replaced by a call to an undefined name, so it fails as an unknown
function does in our environment instead of reaching a Python builtin (e.g.
`open(...)`). The checker itself runs through `rods.reward.official`.
"""

from __future__ import annotations

import decimal
import json
import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rods.envs import method_owners
from rods.envs.calls import CallParseError, parse_calls
from rods.rollout.trajectory import Trajectory
from rods.tasks import Task
from rods.tasks.jsonlines import write_lines
from rods.tasks.model import BFCL_ENVIRONMENT

log = logging.getLogger(__name__)

#: What an unknown function call becomes before BFCL's `eval` sees it.
UNKNOWN_FUNCTION = "rods_unknown_function"
#: mpmath's default decimal precision (what a fresh process starts with).
DEFAULT_DPS = 15
_lock = threading.Lock()


def safe_decoded(task: Task, decoded: Sequence[Sequence[Sequence[str]]]) -> list[list[list[str]]]:
    """The decoded calls with every call that is not a public method of the task's classes neutralised."""
    known = set(method_owners(task.involved_classes))
    out = []
    for turn in decoded:
        steps = []
        for step in turn:
            calls = []
            for text in step:
                try:
                    parsed = parse_calls(text)
                except CallParseError:
                    parsed = []
                ok = len(parsed) == 1 and parsed[0].name in known
                calls.append(text if ok else f"{UNKNOWN_FUNCTION}()")
            steps.append(calls)
        out.append(steps)
    return out


def safe_official_verdict(task: Task, decoded: Sequence[Sequence[Sequence[str]]]) -> dict:
    """BFCL's verdict on one rollout's decoded calls: ``{"valid": bool, ...}``.

    Runs `rods.reward.official.official_verdict` (BFCL's checker plus its
    runner's force-termination rule) on the neutralised calls, from mpmath's
    default precision: MathAPI sets the process-global precision and BFCL
    never restores it, which would change how later results print.
    """
    import mpmath

    from rods.reward.official import official_verdict as bfcl_verdict

    safe = safe_decoded(task, decoded)
    with _lock:  # BFCL's instance cache and mpmath's precision are process-wide
        dps, mpmath.mp.dps = mpmath.mp.dps, DEFAULT_DPS
        try:
            with decimal.localcontext():
                result = bfcl_verdict(task, safe)
        finally:
            mpmath.mp.dps = dps
    return {k: v for k, v in result.items() if k in ("valid", "error_type", "error_message")}


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
            if task.environment != BFCL_ENVIRONMENT:  # BFCL's checker knows only its own classes
                continue
            verdict = safe_official_verdict(task, line["multi_turn_model_result_list_decoded"])
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

