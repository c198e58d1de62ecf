"""Scoring a policy on multi-turn tool tasks, as BFCL computes it for its own.

Per group (the row each task's domain puts it in, `Domain.report_group`:
BFCL's categories, a tau2-bench domain's name, docs/design.md §2.7): accuracy
(the binary reward: every checked turn passes) and mean progress reward RP;
overall: the unweighted mean of the groups evaluated (BFCL's multi-turn
overall). Eval rollouts use BFCL's step-cap rule (`on_step_cap="force_quit"`:
the 20-step cap ends the entry, which fails). The report names the
environments it scored (`Domain.title`).

An eval run directory holds `trajectories.jsonl` (every message, call, result
and verdict), `decoded.jsonl` (the calls in the form BFCL's checker reads, see
`rods.eval.official`) and `report.json`.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rods.envs.domains import domain_of_task
from rods.eval.official import Agreement, rescore_file, write_decoded
from rods.rollout import EpisodeOptions, Policy, Trajectory, run_episodes
from rods.tasks import CATEGORIES, Task

log = logging.getLogger(__name__)

#: BFCL's evaluation: the step cap force-quits the episode (the entry then fails).
EVAL_OPTIONS = EpisodeOptions(on_step_cap="force_quit")


class CategoryScore(BaseModel):
    """One category's figures."""

    n: int
    accuracy: float
    progress: float
    #: Fraction of replies holding at least one readable call.
    call_rate: float
    #: Calls that could not be read, per reply.
    parse_errors_per_reply: float


class EvalReport(BaseModel):
    """What `rods eval` reports and writes to `report.json`."""

    model: str = ""
    #: What was scored, in words ("BFCL multi-turn", "Tau2AirlineEnv multi-turn").
    environment: str = ""
    split: str = "test"
    k: int = 1
    n_tasks: int = 0
    n_rollouts: int = 0
    categories: dict[str, CategoryScore] = Field(default_factory=dict)
    overall_accuracy: float = 0.0
    overall_progress: float = 0.0
    seconds: float = 0.0
    settings: dict[str, Any] = Field(default_factory=dict)
    generation: dict[str, Any] = Field(default_factory=dict)
    official: dict[str, Any] | None = None

    @property
    def seconds_per_task(self) -> float:
        return self.seconds / self.n_tasks if self.n_tasks else 0.0


def stratified_subset(tasks: Sequence[Task], limit: int, seed: int = 0) -> list[Task]:
    """`limit` tasks spread evenly over the categories present (seeded draw, original order kept).

    With 4 categories, `limit=8` gives 2 per category; a remainder goes to
    the first categories in BFCL's order.
    """
    if limit < 1:
        raise ValueError(f"--limit must be >= 1, got {limit}")
    groups: dict[str, list[Task]] = {}
    for task in tasks:
        groups.setdefault(task.category, []).append(task)
    order = [c for c in CATEGORIES if c in groups] + sorted(c for c in groups if c not in CATEGORIES)
    rng = random.Random(seed)
    wanted: set[str] = set()
    base, extra = divmod(limit, len(order))
    for index, category in enumerate(order):
        n = min(len(groups[category]), base + (index < extra))
        wanted.update(t.id for t in rng.sample(groups[category], n))
    return [t for t in tasks if t.id in wanted]


def group_of(task: Task) -> str:
    """The row a task counts in (`Domain.report_group`: BFCL's category, else the environment's name)."""
    return domain_of_task(task).report_group(task)


def environments_title(tasks: Sequence[Task]) -> str:
    """What a report scored, in words: each domain's title for its environments, joined."""
    by_domain: dict[str, tuple[Any, list[str]]] = {}
    for task in tasks:
        domain = domain_of_task(task)
        by_domain.setdefault(domain.name, (domain, []))[1].append(task.environment)
    return "; ".join(domain.title(sorted(set(names))) for domain, names in by_domain.values())


def summarize(trajectories: Sequence[Trajectory], groups: Mapping[str, str] | None = None) -> dict[str, CategoryScore]:
    """Per-category accuracy, mean RP and reply statistics (`groups`: task id -> row, default the category)."""
    by_category: dict[str, list[Trajectory]] = {}
    for traj in trajectories:
        by_category.setdefault((groups or {}).get(traj.task_id, traj.category), []).append(traj)
    out = {}
    for category in [c for c in CATEGORIES if c in by_category] + sorted(set(by_category) - set(CATEGORIES)):
        trajs = by_category[category]
        replies = sum(t.num_replies for t in trajs) or 1
        with_calls = sum(1 for t in trajs for turn in t.turns for step in turn.steps if step)
        out[category] = CategoryScore(
            n=len(trajs),
            accuracy=sum(t.binary for t in trajs) / len(trajs),
            progress=sum(t.progress for t in trajs) / len(trajs),
            call_rate=with_calls / replies,
            parse_errors_per_reply=sum(t.num_parse_errors for t in trajs) / replies,
        )
    return out


def evaluate(
    policy: Policy,
    tasks: Sequence[Task],
    *,
    k: int = 1,
    out_dir: str | Path | None = None,
    model: str = "",
    split: str = "test",
    options: EpisodeOptions = EVAL_OPTIONS,
    official_check: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> EvalReport:
    """Roll out `policy` on `tasks` (K times each), score, write the run directory, report.

    `options` default to BFCL's own: the step cap force-quits the episode.
    """
    if not tasks:
        raise ValueError("no tasks to evaluate")
    start = time.perf_counter()
    options = options.for_policy(getattr(policy, "native_tools", True))
    trajectories = run_episodes(tasks, policy, k=k, options=options, progress=progress)
    seconds = time.perf_counter() - start
    categories = summarize(trajectories, {t.id: group_of(t) for t in tasks})
    # only a domain with a checker of its own re-scores; the others have rods' verdict alone
    official_check = official_check and any(domain_of_task(t).has_own_checker for t in tasks)
    report = EvalReport(
        model=model,
        environment=environments_title(tasks),
        split=split,
        k=k,
        n_tasks=len(tasks),
        n_rollouts=len(trajectories),
        categories=categories,
        overall_accuracy=sum(c.accuracy for c in categories.values()) / len(categories),
        overall_progress=sum(c.progress for c in categories.values()) / len(categories),
        seconds=seconds,
        settings={
            **{k: v for k, v in asdict(options).items() if k != "system_prompt"},
            "max_new_tokens": getattr(policy, "max_new_tokens", getattr(policy, "max_tokens", None)),
            "temperature": getattr(policy, "temperature", None),
        },
        generation=asdict(policy.stats) if hasattr(policy, "stats") else {},
    )
    report.generation.pop("by_round", None)
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        with (out / "trajectories.jsonl").open("w", encoding="utf-8") as fh:
            for traj in trajectories:
                fh.write(traj.to_json() + "\n")
        write_decoded(out / "decoded.jsonl", trajectories)
        if official_check:
            report.official = rescore_file(out / "decoded.jsonl", tasks).to_json()
        (out / "report.json").write_text(json.dumps(report.model_dump(mode="json"), indent=2) + "\n")
    elif official_check:
        report.official = _agreement_in_memory(trajectories, tasks).to_json()
    log.info(
        "evaluated %d tasks (%d rollouts) in %.1fs: overall accuracy %.3f, progress %.3f",
        len(tasks), len(trajectories), seconds, report.overall_accuracy, report.overall_progress,
    )
    return report


def _agreement_in_memory(trajectories: Sequence[Trajectory], tasks: Sequence[Task]) -> Agreement:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "decoded.jsonl"
        write_decoded(path, trajectories)
        return rescore_file(path, tasks)
