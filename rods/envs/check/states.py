"""The checks that load an environment again: resets, replays, forks, the state as JSON, constructors.

Each loads fresh environments of a setup (`rods.envs.check.runs.Setup`) and
compares their snapshots; the JSON check reads what the runners found.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Sequence
from contextlib import ExitStack
from typing import Any

from rods.envs.calls import format_call
from rods.envs.check.findings import Finding, fail, passed, warn
from rods.envs.check.probes import clip, describe_difference, first_difference, short, texts_apart
from rods.envs.check.runs import Runner, Setup, Step, round_trip, tool_of
from rods.envs.classes import REPLAY_KEY
from rods.envs.domains import domain_of
from rods.envs.python import constructor_parameters, to_json, volatile


def check_reset(setup: Setup, calls: Sequence[str | Any]) -> list[Finding]:
    """Two loads of a config agree with each other and with a third that ran `calls` before them; loading leaves
    that third as it was; `calls` replay on a new load to the same results and state; the first snapshot
    round-trips through JSON. (One function: the replay and the JSON check reuse the loads.)"""
    label, findings = setup.label, []
    with ExitStack() as stack:
        first = setup.load()
        stack.callback(first.close)
        start = first.snapshot()
        json_findings = [fail("json", f"state not JSON: {label}: the first snapshot is {why}")
                         for _, why in round_trip(start)]
        results = [first.execute(call) for call in calls]
        end = first.snapshot()
        one, two = setup.load(), setup.load()
        stack.callback(one.close)
        stack.callback(two.close)
        a, b = one.snapshot(), two.snapshot()
        if a != b:
            findings.append(fail("reset", f"{label}: two environments loaded from one config differ "
                                          f"({describe_difference(a, b)}): " + (
                                              "a NaN, which is not equal to itself" if _nan_apart(a, b)
                                              else "a non-deterministic reset")))
        elif a != start:
            findings.append(fail("reset", f"{label}: an environment loaded after another ran calls starts "
                                          f"elsewhere ({describe_difference(start, a)}): state is shared "
                                          "between environments"))
        if (now := first.snapshot()) != end:
            findings.append(fail("reset", f"{label}: loading an environment changed one already running "
                                          f"({describe_difference(end, now)}): state is shared between "
                                          "environments"))
        if findings:
            return json_findings + findings
        findings = json_findings + [passed("reset", f"{label}: loads agree, also after calls elsewhere")]
        varied: list[Finding] = []
        for call, result in zip(calls, results):
            if (again := one.execute(call)) == result:
                continue
            if _is_error(one, call, result) and _is_error(one, call, again):
                varied = varied or [warn("replay", f"{label}: {clip(_text(call))} failed twice with different "
                                                   f"messages ({texts_apart(result, again)})")]
                continue
            return findings + [fail("replay", f"{label}: {clip(_text(call))} gives another result when replayed "
                                              f"from the same config ({texts_apart(result, again)})")]
        if (again := one.snapshot()) != end:
            return findings + [fail("replay", f"{label}: {len(calls)} calls replayed from the same config "
                                              f"end in another state ({describe_difference(end, again)})")]
        findings += varied
    return findings + [passed("replay", f"{label}: {len(calls)} calls replay to the same results and state"
                                                 + (" (error messages aside)" if varied else ""))]


def _nan_apart(a: Any, b: Any) -> bool:
    """Whether two states differ first at a NaN in both (equal as text, unequal as values)."""
    found = first_difference(a, b)
    return found is not None and all(isinstance(v, float) and math.isnan(v) for v in found[1:])


def _is_error(env: Any, call: Any, result: str) -> bool:
    owner = env.owners.get(tool_of(call), next(iter(env.involved_classes)))
    return domain_of(owner).error_of(owner, result) is not None


def _text(call: Any) -> str:
    return call if isinstance(call, str) else format_call(call)


def check_fork(setup: Setup, steps: Sequence[Step]) -> list[Finding]:
    """The first call of `steps` that changed the state, run in a fork and in its original (both in the state
    before it), changes only the one it ran in."""
    index = next((i for i, s in enumerate(steps) if s.changed), None)
    if index is None:
        return [warn("fork", f"{setup.label}: no call changed the state, so forks could not be compared")]
    label, step, findings = setup.label, steps[index], []
    with ExitStack() as stack:
        try:
            env = setup.load()
            stack.callback(env.close)
            for earlier in steps[:index]:
                env.execute(earlier.call)
            start = env.snapshot()
            fork = env.fork()
            stack.callback(fork.close)
        except Exception as err:
            return [fail("fork", f"{label}: cannot fork: {type(err).__name__}: {err}")]
        if (forked := fork.snapshot()) != start:
            findings.append(fail("fork", f"{label}: a fork does not start in its original's state "
                                         f"({describe_difference(start, forked)})"))
        fork.execute(step.call)
        written = fork.snapshot()
        if (now := env.snapshot()) != start:
            findings.append(fail("fork", f"{label}: {clip(step.text)} in a fork changed the original "
                                         f"({describe_difference(start, now)}): forks share state"))
        elif (again := fork.snapshot()) != written:
            findings.append(fail("fork", f"{label}: reading the original undid {clip(step.text)} in its fork "
                                         f"({describe_difference(written, again)}): forks share state"))
        other = env.fork()
        stack.callback(other.close)
        env.execute(step.call)
        env.snapshot()
        if (now := other.snapshot()) != start:
            findings.append(fail("fork", f"{label}: {clip(step.text)} in the original changed its fork "
                                         f"({describe_difference(start, now)}): forks share state"))
    return findings or [passed("fork", f"{label}: {clip(step.text)} in a fork leaves the original as it was, "
                                       "and in the original leaves the fork")]


def check_json(runners: Iterable[Runner]) -> list[Finding]:
    """Every snapshot read round-trips through JSON; no live state holds what JSON cannot (`Runner.finish`)."""
    found: dict[str, str] = {}
    for runner in runners:
        for where, why in runner.not_json:
            found.setdefault(where, f"{why} ({runner.setup.label})")
    if not found:
        return [passed("json", "every snapshot round-trips through JSON; the state is plain data")]
    return [fail("json", f"state not JSON: {where} is {why}") for where, why in list(found.items())[:5]]


def _attribute_difference(a: Any, b: Any, skip: frozenset[str]) -> tuple[str, Any, Any] | None:
    """(name, value in a, value in b) of the first attribute, private ones too, where two instances differ."""
    mine, theirs = getattr(a, "__dict__", {}), getattr(b, "__dict__", {})
    for name in sorted((set(mine) | set(theirs)) - skip):
        x, y = mine.get(name), theirs.get(name)
        try:
            if x == y:
                continue
        except Exception:  # an __eq__ that raises: compare their JSON instead
            pass
        if to_json(x) != to_json(y):
            return name, to_json(x), to_json(y)
    return None


def check_constructor(setups: Iterable[Setup]) -> list[Finding]:
    """A class whose constructor takes parameters, loaded (and forked) from a config, equals `Class(**config)`
    in every attribute, private ones too: what the constructor derives (indexes, counters) is kept."""
    findings, compared = [], 0
    for setup in setups:
        for cls in setup.classes:
            klass = domain_of(cls).load_class(cls)
            config = setup.config.get(cls, {})
            if getattr(klass, "rods_snapshot", False) or not constructor_parameters(klass) or REPLAY_KEY in config:
                continue
            try:
                built = klass(**copy.deepcopy(dict(config)))
            except Exception:  # a config meant for a `_reset` hook, not for the constructor
                continue
            compared += 1
            with ExitStack() as stack:
                env = setup.load()
                stack.callback(env.close)
                fork = env.fork()
                stack.callback(fork.close)
                for how, instance in (("loaded", env.instance(cls)), ("forked", fork.instance(cls))):
                    found = _attribute_difference(built, instance, volatile(klass))
                    if found:
                        name, want, got = found
                        findings.append(fail("constructor", f"{cls} {how} from {setup.label} has {name} = "
                                             f"{short(got)}, but {klass.__name__}(**config) makes it {short(want)}: "
                                             "state the constructor derives is lost"))
                        break
    if findings:
        return findings
    if not compared:
        return [passed("constructor", "no class is built by a constructor with parameters")]
    return [passed("constructor", f"{compared} constructor-built instance(s) keep what the constructor "
                                  "derives, also in forks")]
