"""`rods envs check` (docs/design.md §2.11): every check of an environment, run over its seeds and drawn calls.

Gymnasium's `check_env` for tool environments: an environment is run as rods
runs it (`rods.envs.check.runs`: loaded from a seed's initial config, forked,
calls executed) and each property the reward and synthesis rely on is a check
with a name:

* `tools`: the tools are listed and every parameter schema is a JSON-schema object;
* `reset`: two environments loaded from one config start equal, also after another
  one ran calls, and loading one leaves the others as they were;
* `replay`: the same calls from the same config give the same results and state;
* `fork`: a call in a fork leaves the original unchanged, and vice versa;
* `state`: the state can be read and copied after every call;
* `json`: every snapshot round-trips through JSON, and the live state holds nothing JSON cannot;
* `read-tools`: a tool marked read never changes the snapshot;
* `write-tools`: a tool marked write changes it in some successful call;
* `errors`: an unknown tool and a missing required argument come back as errors by the domain's convention;
* `error-convention`: no result reads as an error ("not found", "invalid", ...) unseen by that convention;
* `constructor`: a class built from its config keeps what its constructor derives.

`check_environment` runs them all over the seeds' gold calls and calls drawn from the schemas.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from rods.envs.check.calls import (
    check_error_convention,
    check_errors,
    check_reads,
    check_tools,
    check_writes,
    list_tools,
)
from rods.envs.check.findings import Finding, Report, fail
from rods.envs.check.runs import Runner, drawn_runners, gold_runner, setups_of
from rods.envs.check.states import check_constructor, check_fork, check_json, check_reset

if TYPE_CHECKING:
    from rods.tasks.model import Task


def check_environment(environment: str, tasks: Sequence[Task] = (), *, calls_per_tool: int = 3, seed: int = 0,
                      deep: int = 3) -> Report:
    """Run every check on an environment name (`bfcl`, an import path, a manifest path).

    `tasks`: seeds of the environment (their configs and gold calls); `calls_per_tool`: drawn calls per tool;
    `deep`: how many distinct configs the reset, replay, fork and constructor checks load again.
    Raises ValueError for an environment name that names nothing, or seeds of another environment.
    """
    docs, listed = list_tools(environment)
    setups = setups_of(environment, tasks)
    findings = check_tools(docs, listed)
    report = Report(environment, findings, seeds=len(tasks))
    specs = {s.name: s for s in listed}
    if not specs:
        return report
    runners, broken = [], {}
    for setup in setups:
        if isinstance(done := gold_runner(setup), Runner):
            runners.append(done)
        else:
            broken[setup.label] = done
    drawn, failed = drawn_runners(setups, specs, calls_per_tool, seed)
    broken.update(failed)
    findings += [fail("reset", f"{label}: cannot load: {why}") for label, why in broken.items()]
    runners += drawn
    steps = [s for r in runners for s in r.steps]
    report.gold_calls = sum(s.source == "gold" for s in steps)
    report.drawn_calls = len(steps) - report.gold_calls
    chosen: dict[str, Runner] = {}  # per distinct config, the first runner whose calls changed the state
    for runner in sorted(runners, key=lambda r: (not any(s.changed for s in r.steps), -len(r.steps))):
        chosen.setdefault(runner.setup.key, runner)
    failures: dict[str, Runner] = {}  # one line per way it failed, at its first runner
    for runner in runners:
        if runner.broken is not None:
            failures.setdefault(runner.broken, runner)
    findings += [fail("state", f"{r.setup.label}: reading or copying the state failed after {r.broken_after}: {why}")
                 for why, r in failures.items()]
    again = list(chosen.values())[:deep]
    for runner in again:
        label = runner.setup.label
        findings += guarded("reset", label, check_reset, runner.setup, [s.call for s in runner.steps])
        findings += guarded("fork", label, check_fork, runner.setup, runner.steps)
    findings += check_json(runners)
    findings += check_reads(steps, specs)
    findings += check_writes(steps, specs)
    findings += check_errors(steps)
    findings += check_error_convention(steps)
    findings += guarded("constructor", "loading", check_constructor, [r.setup for r in again])
    return report


def guarded(check: str, label: str, run: Callable[..., list[Finding]], *args: Any) -> list[Finding]:
    """`run(*args)`'s findings; an exception out of the environment (a load, a snapshot, a fork) is one more."""
    try:
        return run(*args)
    except Exception as err:
        return [fail(check, f"{label}: {type(err).__name__}: {err}")]
