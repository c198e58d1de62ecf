"""Running a comparison: every (arm, seed) job, in order or a few at a time, resumable.

Each job runs as ``python -m rods.compare.job`` in its own process, its output
in ``RUN_DIR/job.log``. A run whose ``done.json`` exists is finished and
skipped; any other run is (re)started, from its newest checkpoint if it has
one. Every launch is appended to ``RUN_DIR/attempts.jsonl`` (start, end,
exit code), so a rerun's work is visible. With `parallel` > 1 the CPU threads
are split between concurrent jobs. When every job is done the summary is
written (`rods.compare.summary`); if a job failed, the others still run and
the comparison raises at the end, naming the failed runs and their logs.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from rods.compare.arms import (
    ATTEMPTS_FILE,
    DONE_FILE,
    HELDOUT_FILE,
    RunSpec,
    heldout_tasks,
    load_arms,
    plan_runs,
    write_run_config,
)
from rods.compare.ood import Suite, evaluate_run

log = logging.getLogger(__name__)

JOB_LOG = "job.log"


@dataclass
class CompareResult:
    """What one `run_comparison` call did."""

    out: Path
    runs: list[RunSpec]
    skipped: list[RunSpec] = field(default_factory=list)  # already finished before this call
    ran: list[RunSpec] = field(default_factory=list)
    failed: list[RunSpec] = field(default_factory=list)
    summary: dict | None = None


def is_done(run: RunSpec) -> bool:
    return (run.run_dir / DONE_FILE).is_file()


def _append(path: Path, record: dict) -> None:
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")


#: Jobs running now (so an interrupted comparison stops them instead of leaving them behind).
_live: set[subprocess.Popen] = set()
_live_lock = threading.Lock()


def stop_jobs() -> None:
    """Terminate every job this process started that is still running."""
    with _live_lock:
        procs = list(_live)
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def code_version() -> str | None:
    """The git commit of the rods checkout a job runs, read from `.git` (no process is started), or None outside
    one: a comparison spans sessions and the rods arm's synthesis runs the working tree's code, so each attempt
    says which commit it ran."""
    git = Path(__file__).resolve().parents[2] / ".git"
    try:
        if git.is_file():  # a worktree or submodule: "gitdir: <path>"
            git = (git.parent / git.read_text(encoding="utf-8").split(":", 1)[1].strip()).resolve()
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref: "):
            return head  # a detached HEAD is the commit itself
        ref = head[5:]
        if (git / ref).is_file():
            return (git / ref).read_text(encoding="utf-8").strip()
        for line in (git / "packed-refs").read_text(encoding="utf-8").splitlines():
            if line.endswith(" " + ref):
                return line.split(" ", 1)[0]
    except OSError:
        return None
    return None


def launch(run: RunSpec, heldout: Path | None, *, threads: int | None = None) -> int:
    """Run one job in a subprocess (blocking); returns its exit code."""
    write_run_config(run)
    cmd = [sys.executable, "-m", "rods.compare.job", str(run.run_dir)] + ([str(heldout)] if heldout else [])
    env = dict(os.environ)
    if threads:
        env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = str(threads)
    attempts = run.run_dir / ATTEMPTS_FILE
    start = time.time()
    _append(attempts, {"event": "start", "time": start,
                       "resume": any((run.run_dir / "checkpoints").glob("checkpoint-*")), "commit": code_version()})
    with (run.run_dir / JOB_LOG).open("a", encoding="utf-8") as logfile:
        logfile.write(f"\n=== {time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(cmd)}\n")
        logfile.flush()
        proc = subprocess.Popen(cmd, stdout=logfile, stderr=subprocess.STDOUT, env=env)
        with _live_lock:
            _live.add(proc)
        try:
            code = proc.wait()
        except BaseException:  # Ctrl-C or SIGTERM while waiting: stop the jobs before this one is forgotten
            stop_jobs()
            raise
        finally:
            with _live_lock:
                _live.discard(proc)
    _append(attempts, {"event": "end", "time": time.time(), "seconds": round(time.time() - start, 2), "code": code})
    return code


def _check_same_comparison(out: Path, heldout: int) -> None:
    """A rerun must score on the held-out split its finished runs were scored on."""
    previous = out / "compare.json"
    if previous.is_file():
        before = json.loads(previous.read_text(encoding="utf-8")).get("heldout")
        if before is not None and before != heldout:
            raise ValueError(f"{out} was started with --heldout {before}; rerun it with the same value "
                             f"(got {heldout}) so every run is scored on the same tasks")


def summarize_finished(arm_paths: list[str | Path], out: str | Path, *, seeds: int = 2, steps: int | None = None,
                       overrides: list[str] | None = None) -> tuple[dict, list[RunSpec]]:
    """The summary of the runs finished so far (nothing is run): for a comparison that spans sessions, the
    table and figures of its whole runs, the unfinished named in them. Returns the summary and the unfinished."""
    from rods.compare.summary import summarize_comparison

    arms = load_arms(list(arm_paths), steps=steps, overrides=overrides)
    runs = plan_runs(arms, seeds, Path(out))
    done = [r for r in runs if is_done(r)]
    if not done:
        raise ValueError(f"{out}: no finished run to summarize")
    pending = [r for r in runs if r not in done]
    summary = summarize_comparison(out, [(r.arm, r.seed, r.run_dir) for r in done],
                                   arms={a.name: str(a.path) for a in arms},
                                   unfinished=[f"{r.arm}/seed-{r.seed}" for r in pending])
    return summary, pending


def run_comparison(
    arm_paths: list[str | Path],
    out: str | Path,
    *,
    seeds: int = 2,
    steps: int | None = None,
    heldout: int = 16,
    parallel: int = 1,
    overrides: list[str] | None = None,
    ood: list[str] | None = None,
    on_event: Callable[[str, RunSpec], None] | None = None,
) -> CompareResult:
    """Run every unfinished (arm, seed) job, then summarize; see the module doc.

    Args:
        heldout: held-out tasks evaluated before and after each run (0: none).
        overrides: ``section.key=value`` changes applied to every arm (as `rods train --set`).
        ood: suites each finished run's final policy is scored on (`rods.compare.ood`, e.g. "bfcl_v4:
            --v4-limit 20"); a rerun scores finished runs on suites they lack.
        on_event: called with ("skip" | "start" | "done" | "failed", run), e.g. for a progress bar.
    """
    from rods.compare.summary import summarize_comparison

    if parallel < 1:
        raise ValueError(f"--parallel must be >= 1, got {parallel}")
    if heldout < 0:
        raise ValueError(f"--heldout must be >= 0, got {heldout}")
    suites = [Suite.parse(spec) for spec in ood or []]
    out = Path(out)
    arms = load_arms(list(arm_paths), steps=steps, overrides=overrides)
    runs = plan_runs(arms, seeds, out)
    out.mkdir(parents=True, exist_ok=True)
    _check_same_comparison(out, heldout)
    heldout_path = None
    if heldout:
        heldout_tasks(arms, heldout, out)
        heldout_path = out / HELDOUT_FILE
    (out / "compare.json").write_text(json.dumps({
        "arms": {a.name: str(a.path) for a in arms}, "seeds": seeds, "steps": arms[0].config.grpo.max_steps,
        "heldout": heldout, "parallel": parallel, "overrides": list(overrides or []),
        "ood": [suite.spec() for suite in suites],
    }, indent=2), encoding="utf-8")
    result = CompareResult(out, runs)
    notify = on_event or (lambda kind, run: None)
    pending = []
    for run in runs:
        if is_done(run):
            result.skipped.append(run)
            notify("skip", run)
        else:
            pending.append(run)
    log.info("%d runs: %d finished before, %d to run (%d at a time)", len(runs), len(result.skipped), len(pending),
             parallel)
    threads = max(1, (os.cpu_count() or 1) // parallel) if parallel > 1 else None

    def score_ood(run: RunSpec) -> None:
        from rods.train.run import latest_checkpoint

        if not suites:
            return
        try:
            final = latest_checkpoint(run.run_dir)
            if final is None:
                raise RuntimeError(f"{run.run_dir}: no checkpoint to score on the --ood suites")
            evaluate_run(run.run_dir, final, suites)
        except RuntimeError as err:
            log.error("%s", err)
            result.failed.append(run)

    for run in result.skipped:
        score_ood(run)

    def one(run: RunSpec) -> None:
        notify("start", run)
        code = launch(run, heldout_path, threads=threads)
        if code == 0 and is_done(run):
            result.ran.append(run)
            score_ood(run)
            notify("done", run)
        else:
            log.error("run %s seed %d failed (exit %d); see %s", run.arm, run.seed, code, run.run_dir / JOB_LOG)
            result.failed.append(run)
            notify("failed", run)

    try:
        if parallel == 1:
            for run in pending:
                one(run)
        else:
            with ThreadPoolExecutor(max_workers=parallel) as pool:
                futures = [pool.submit(one, run) for run in pending]
                for future in futures:
                    future.result()
    except BaseException:  # Ctrl-C or SIGTERM: no job may outlive the comparison (rerun to resume)
        stop_jobs()
        raise
    if result.failed:
        names = ", ".join(f"{r.arm}/seed-{r.seed} ({r.run_dir / JOB_LOG})" for r in result.failed)
        raise RuntimeError(f"{len(result.failed)} run(s) failed: {names}; rerun the same command to resume them")
    result.summary = summarize_comparison(out, [(r.arm, r.seed, r.run_dir) for r in runs],
                                          arms={a.name: str(a.path) for a in arms})
    return result
