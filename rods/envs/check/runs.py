"""Running an environment for the check: the states it starts from, and calls run with what each did.

A `Setup` is one state to start from (a seed's initial config, or the empty
one); a `Runner` runs calls on a fresh environment of it and keeps, per call, a
`Step`: the result, whether the domain's convention calls it an error, whether
the snapshot changed, and any error word the result holds outside the data it
echoes. Snapshots are not kept (a tau2 database is megabytes), only what the
checks read.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from rods.envs.calls import CallParseError, ToolCall, format_call, parse_call_text
from rods.envs.check.probes import (
    ERROR_WORDS,
    StateValues,
    clip,
    describe_difference,
    draw_arguments,
    error_words,
    not_json,
    state_strings,
)
from rods.envs.classes import freeze
from rods.envs.contract import RolloutEnvironment, environment_from
from rods.envs.domains import domain_of
from rods.envs.protocol import ToolSpec, canonical_json
from rods.envs.python import to_json

if TYPE_CHECKING:
    from rods.tasks.model import Task

logger = logging.getLogger(__name__)

#: A tool name no environment has (the unknown-tool call).
NO_SUCH_TOOL = "rods_check_no_such_tool"

Source = Literal["gold", "drawn", "missing argument", "unknown tool"]


@dataclass(frozen=True)
class Setup:
    """One state to start from: a seed's initial config (or the empty one), its classes and its gold calls."""

    label: str
    config: Mapping[str, Any]
    classes: tuple[str, ...]
    long_context: bool = False
    gold: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """Equal for setups that load the same state."""
        return canonical_json([self.config, self.classes, self.long_context])

    def load(self) -> RolloutEnvironment:
        return environment_from(self.config, self.classes, long_context=self.long_context)


def setups_of(environment: str, tasks: Sequence[Task]) -> list[Setup]:
    """The seeds' setups, or the empty config over every class of the environment when there are no seeds."""
    if not tasks:
        return [Setup("the empty config", {}, tuple(domain_of(environment).classes(environment)))]
    for task in tasks:
        if task.environment != environment:
            raise ValueError(f"seed {task.id!r} is a task of {task.environment!r}, not of {environment!r}")
    return [Setup(f"seed {t.id}", t.initial_config, tuple(t.involved_classes), t.long_context,
                  tuple(call for turn in t.ground_truth for call in turn)) for t in tasks]


@dataclass(frozen=True)
class Step:
    """One call that ran and what it did."""

    source: Source
    setup: str
    call: str | ToolCall
    tool: str
    result: str
    #: Why the result is an error by the domain's convention, or None.
    error: str | None
    #: Where the snapshot changed (`describe_difference`), or None if it did not.
    change: str | None
    #: An error word of a result the convention takes for a success, outside the data it echoes.
    error_word: str | None = None

    @property
    def text(self) -> str:
        return self.call if isinstance(self.call, str) else format_call(self.call)

    @property
    def changed(self) -> bool:
        return self.change is not None


def tool_of(call: str | ToolCall) -> str:
    """The name of the (first) tool a call runs ("" for text that is no call)."""
    if isinstance(call, ToolCall):
        return call.name
    try:
        return parse_call_text(call)[0][0].name
    except (CallParseError, IndexError):
        return ""


@dataclass
class Runner:
    """Calls run on one fresh environment of a setup; `finish` reads its state as JSON and closes it."""

    setup: Setup
    env: RolloutEnvironment
    steps: list[Step] = field(default_factory=list)
    #: (where, why) for each part of a snapshot or live state that is not JSON (filled by `finish`).
    not_json: list[tuple[str, str]] = field(default_factory=list)
    #: Why the state could not be read or copied after a call (then no more calls run), or None.
    broken: str | None = None
    #: That call.
    broken_after: str = ""

    def __post_init__(self) -> None:
        self.initial = self.state = self.env.snapshot()
        self.frozen = self._frozen()

    def _frozen(self) -> bytes:
        """The instances as bytes (`rods.envs.classes.freeze`, what a fork copies): equal bytes, equal state.

        A tau2 database freezes to its few changed entries, so a call whose bytes did not change
        costs no snapshot (megabytes of JSON); a hosted environment's bytes change with every call.
        """
        return b"".join(freeze(self.env.instance(c)) for c in self.env.involved_classes)

    def run(self, call: str | ToolCall, source: Source) -> Step | None:
        """Run one call and keep its step; None once reading or copying the state has raised (`broken`)."""
        if self.broken is not None:
            return None
        try:
            return self._run(call, source)
        except Exception as err:  # a call never raises (the contract); reading or copying the state may
            self.broken = f"{type(err).__name__}: {err}"
            self.broken_after = clip(call if isinstance(call, str) else format_call(call))
            return None

    def _run(self, call: str | ToolCall, source: Source) -> Step:
        result = self.env.execute(call)
        tool = tool_of(call)
        owner = self.env.owners.get(tool, self.setup.classes[0])
        error = domain_of(owner).error_of(owner, result)
        frozen = self._frozen()
        after = self.state if frozen == self.frozen else self.env.snapshot()
        self.frozen = frozen
        change = describe_difference(self.state, after) if after != self.state else None
        word = None
        if error is None and ERROR_WORDS.search(result):  # rare: read the state's strings only then
            echoed = state_strings(self.state) | state_strings(after) | state_strings(to_json(call))
            word = error_words(result, echoed)
        step = Step(source, self.setup.label, call, tool, result, error, change, word)
        self.state = after
        self.steps.append(step)
        return step

    def finish(self) -> None:
        """Check the last snapshot and the live state for what JSON cannot hold; close the environment.

        (The first snapshot of a config is the reset check's.)"""
        try:
            if self.broken is None:
                if self.state is not self.initial:
                    self.not_json += round_trip(self.state)
                self.not_json += not_json(self.env.state())
        except Exception as err:  # the state could not be read: as for a call that broke it
            self.broken, self.broken_after = f"{type(err).__name__}: {err}", "its last call"
        finally:
            self.initial = self.state = None
            try:
                self.env.close()
            except Exception as err:
                logger.warning("%s: closing the environment failed: %s", self.setup.label, err)


def round_trip(snapshot: Any) -> list[tuple[str, str]]:
    """[(where, why)] if a snapshot does not come back equal from JSON text, else []."""
    try:
        if json.loads(json.dumps(snapshot, allow_nan=False)) == snapshot:
            return []
        return [("the snapshot", "changed by a JSON round trip")]
    except (TypeError, ValueError) as err:
        return [("the snapshot", f"not JSON ({err})")]


def open_runner(setup: Setup) -> Runner | str:
    """A runner on a fresh environment of a setup, or why it cannot load."""
    try:
        return Runner(setup, setup.load())
    except Exception as err:
        return f"{type(err).__name__}: {err}"


def gold_runner(setup: Setup) -> Runner | str:
    """A setup's gold calls run in order on a fresh environment (finished), or why it cannot load."""
    runner = open_runner(setup)
    if isinstance(runner, Runner):
        try:
            for call in setup.gold:
                runner.run(call, "gold")
        finally:
            runner.finish()
    return runner


def drawn_runners(setups: Sequence[Setup], specs: Mapping[str, ToolSpec], count: int,
                  seed: int) -> tuple[list[Runner], dict[str, str]]:
    """(finished runners, setup label -> why it cannot load): each tool called `count` times with arguments drawn
    from its schema and once without its required ones, plus one unknown tool, on fresh environments of the
    first setups that hold its class (round robin)."""
    runners: dict[int, Runner | str] = {}
    values: dict[str, StateValues] = {}  # by setup key: setups that load alike share their values
    with ExitStack() as stack:

        def runner(index: int) -> Runner | None:
            if index not in runners:
                runners[index] = opened = open_runner(setups[index])
                if isinstance(opened, Runner):
                    stack.callback(opened.finish)
                    if setups[index].key not in values:
                        values[setups[index].key] = StateValues.of(opened.initial)
            found = runners[index]
            return found if isinstance(found, Runner) else None

        for spec in sorted(specs.values(), key=lambda s: s.name):
            holders = [i for i, s in enumerate(setups) if spec.group in s.classes] or [0]
            rng = random.Random(f"{seed}:{spec.name}")  # per tool: a new tool leaves the others' calls alone
            for n in range(count):
                index = holders[n % len(holders)]
                if (run := runner(index)) is not None:
                    arguments = draw_arguments(spec.parameters, rng, values[setups[index].key], fresh=n % 2 == 1)
                    run.run(ToolCall(spec.name, arguments), "drawn")
            if spec.required and (run := runner(holders[0])) is not None:
                run.run(ToolCall(spec.name, {}), "missing argument")
        if (run := runner(0)) is not None:
            run.run(ToolCall(NO_SUCH_TOOL, {}), "unknown tool")
    failed = {setups[i].label: why for i, why in runners.items() if isinstance(why, str)}
    return [r for r in runners.values() if isinstance(r, Runner)], failed
