"""What a plan is: the calls of a variant, position by position, and its new initial config.

The planner (`rods.synth.planner`) writes a `Plan`; the resolver fills in each
`PlannedCall`'s concrete name, arguments and bindings as it runs them
(`rods.synth.resolver`); the executor, augmenter and rewriter read it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from rods.envs.calls import ToolCall
from rods.synth.api_graph import function_docs
from rods.synth.values import ValueRemapper
from rods.tasks.model import Task


def functions_of(cls: str) -> list[str]:
    """The names of one API class's functions, from its docs (BFCL's, or a Python environment's)."""
    return sorted(name for name, doc in function_docs([cls]).items() if doc["class"] == cls)



@dataclass
class PlannedCall:
    """One position of a plan.

    With `sources` None the call is *fixed*: `arguments` run as given, with
    `bindings` (argument -> (source call, path in its result)) filled from
    earlier results. Otherwise the executor *resolves* it: it tries `name`,
    then `alternatives`, with arguments drawn from the live state, and keeps
    the first call whose data-flow sources are exactly `sources`, whose effect
    on the state is `changed` (None: any), that is new to the task if
    `held_out`, and that has a value the user must say if `user_value`; it then
    writes the chosen name, arguments and bindings back here.
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    args: tuple = ()
    bindings: dict[str, tuple[int, tuple]] = field(default_factory=dict)
    turn: int = 0
    original: str = ""  # the seed's function at this position
    sources: tuple[int, ...] | None = None
    alternatives: list[str] = field(default_factory=list)
    changed: bool | None = None
    held_out: bool = False
    user_value: bool = False
    suggested: dict[str, Any] = field(default_factory=dict)  # the backend's values for `name`, tried first
    retold: dict[str, int] = field(default_factory=dict)  # text parameter -> the earlier position it retells
    optional: dict[str, Any] = field(default_factory=dict)  # the seed's optional arguments here (`Slot.optional`)
    may_find_nothing: bool = False  # a read here may find nothing: the seed's did (`Slot.found_nothing`)
    echoes: dict[str, tuple[int, str]] = field(default_factory=dict)  # a value the seed repeated (`Slot.echoes`)
    fails: bool = False  # a recast's call the seed marks as meant to fail (`Task.expected_errors`): it must fail
    rounded: dict[str, int] = field(default_factory=dict)  # a binding whose value is rounded to these decimals

    def tool_call(self) -> ToolCall:
        return ToolCall(self.name, dict(self.arguments), tuple(self.args))


@dataclass
class Plan:
    """A variant to execute: calls, new initial config, narrative, held-out functions."""

    seed: Task
    calls: list[PlannedCall]
    initial_config: dict[str, dict[str, Any]]
    narrative: str | None
    missed_function: dict[str, list[str]]
    remapper: ValueRemapper
    attempt: int = 1
    rng_seed: int = 0
    substitutions: dict[int, str] = field(default_factory=dict)  # position -> function, where it is not the seed's
    held_positions: dict[str, list[int]] = field(default_factory=dict)  # reveal turn -> positions held out
    held_uncalled: dict[str, int] = field(default_factory=dict)  # reveal turn -> held-out functions never called
    candidates: list[list[str]] = field(default_factory=list)  # the sequences offered to the backend
    #: (f, g, parameter) flows the API graph saw in human seeds: they count as role-matched (`rods.synth.coherence`).
    observed_flows: frozenset = frozenset()
    #: function -> the seed's settings for it (`rods.synth.planner.seed_settings`): `logarithm`'s base 10.
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: function -> parameter -> the number the seed gave it (`rods.synth.planner.seed_scales`): a certificate of
    #: 150 in the seed is one of a few hundred in its variants, not of 18147.
    scales: dict[str, dict[str, float]] = field(default_factory=dict)
    #: function -> optional arguments its call here passes when it is not the seed's own function there, for a
    #: function every human call passes some to (`APIGraph.usual_optional`, one set drawn per plan).
    usual_optional: dict[str, dict[str, Any]] = field(default_factory=dict)

    def name_held_out(self) -> None:
        """miss_func, after a run: the held-out functions are those that ran at the held-out positions, plus,
        where the seed also held out functions its ground truth never calls, as many functions of the
        task's classes that this variant never calls."""
        if not self.held_positions:
            return
        called = {c.name for c in self.calls}
        unused = sorted(n for cls in self.seed.involved_classes for n in functions_of(cls) if n not in called)
        random.Random(self.rng_seed).shuffle(unused)
        out = {}
        for k, positions in self.held_positions.items():
            extra = [unused.pop() for _ in range(min(self.held_uncalled.get(k, 0), len(unused)))]
            out[k] = [self.calls[j].name for j in positions] + extra
        self.missed_function = out

    def turns(self) -> list[list[PlannedCall]]:
        out: list[list[PlannedCall]] = [[] for _ in range(self.seed.num_turns)]
        for call in self.calls:
            out[call.turn].append(call)
        return out
