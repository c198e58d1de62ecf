"""Stage 2, Execute: run a plan from its new config to get the ground truth.

Calls run in order on a fresh environment (`rods.envs.contract`)
built from the plan's initial config; each planned position is resolved in
the live state (:mod:`rods.synth.resolver`: function, state-aware arguments,
exactly the planned data flow). When a position cannot be resolved, the run
stops with a :class:`Failure` at the deepest position reached (the call that
failed there, or "nothing fits the planned data flow").

On failure, :meth:`Executor.patch` proposes a **Config Patch**: the failing
class's domain's deterministic edits for common preconditions
(`Domain.patch_config`: BFCL's log in, add funds, open the market, create the
missing file ...), else the backend's patch (purpose ``"config_patch"``),
applied only to known classes. When no patch
applies, the caller re-plans with the failing function blacklisted
(:mod:`rods.synth.pipeline` drives the at-most-3 attempts).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, create_model

from rods.envs.calls import ToolCall, format_call
from rods.envs.contract import RolloutEnvironment
from rods.envs.domains import domain_of
from rods.llm.base import LLMBackend
from rods.llm.schema import MAX_REASON_CHARS, closed_object, like
from rods.synth.plan import Plan
from rods.synth.resolver import resolve

logger = logging.getLogger(__name__)


@dataclass
class Failure:
    """Why a run stopped: the call, its function, the result, and a kind."""

    index: int
    function: str
    result: str
    kind: str = "execution"  # execution | binding | plan (nothing fits the planned data flow)

    def __str__(self) -> str:
        return f"{self.kind} failure at call {self.index} ({self.function}): {self.result[:160]}"


@dataclass
class Execution:
    """One run of a plan."""

    calls: list[ToolCall] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    ground_truth: list[list[str]] = field(default_factory=list)
    failure: Failure | None = None
    env: RolloutEnvironment | None = None
    fallbacks: list[tuple[int, str]] = field(default_factory=list)  # (position, planned function that did not fit)

    @property
    def ok(self) -> bool:
        return self.failure is None


def run_plan(plan: Plan) -> Execution:
    """Execute the plan's calls in order from its initial config (:func:`rods.synth.resolver.resolve`)."""
    resolution = resolve(plan)
    dead = resolution.dead_end
    steps = resolution.steps if dead is None else dead.steps
    out = Execution(ground_truth=[[] for _ in range(plan.seed.num_turns)], fallbacks=resolution.fallbacks)
    for planned, step in zip(plan.calls, steps):
        out.calls.append(step.call)
        out.results.append(step.result)
        out.ground_truth[planned.turn].append(format_call(step.call))
    out.env = steps[-1].env if steps else None
    if dead is not None:
        if dead.call is not None:
            out.calls.append(dead.call)
            out.results.append(dead.result)
        out.env = dead.env
        out.failure = Failure(dead.index, dead.function, dead.result, dead.kind)
    else:
        plan.name_held_out()
    return out


class ConfigPatch(BaseModel):
    """The reply of purpose "config_patch": new values for keys of one class's state."""

    patch: dict[str, Any]
    reason: str = Field("", max_length=MAX_REASON_CHARS)


def config_patch_model(state: dict[str, Any]) -> type[ConfigPatch]:
    """`ConfigPatch` whose schema allows only `state`'s keys, each with its current value's JSON type.

    The check stays `ConfigPatch`'s: unknown keys from a server that ignores the
    schema are dropped and counted (`invalid_patches`).
    """
    keys = {key: like(value) for key, value in state.items()}
    return create_model("ConfigPatch", __base__=ConfigPatch,
                        patch=(dict[str, Any], Field(json_schema_extra=closed_object(keys))))


class Executor:
    """Runs plans and patches configs (see the module docstring)."""

    def __init__(self, backend: LLMBackend, *, llm_patches: bool = True):
        self.backend = backend
        self.llm_patches = llm_patches
        self.invalid_patches = 0

    def run(self, plan: Plan) -> Execution:
        return run_plan(plan)

    def patch(self, plan: Plan, execution: Execution) -> str | None:
        """Edit `plan.initial_config` in place to remove the failure's cause; return what was done."""
        failure = execution.failure
        if failure is None or failure.kind != "execution":
            return None
        done = deterministic_patch(plan, execution)
        if done or not self.llm_patches:
            return done
        owner = _owner(execution.env, failure.function)
        if owner is None or owner not in plan.initial_config:
            return None
        reply = self.backend.chat(
            [{"role": "system", "content": "You fix the initial state of a simulated environment."},
             {"role": "user", "content": f"The call {failure.function} failed with: {failure.result[:300]}. "
              f"Current {owner} state: {json.dumps(plan.initial_config[owner], default=str)[:2000]}. "
              "Reply as JSON {\"patch\": {key: new value}, \"reason\": \"...\"} with only keys of this state."}],
            json_schema=config_patch_model(plan.initial_config[owner]), purpose="config_patch",
            context={"class": owner, "function": failure.function, "error": failure.result,
                     "config": plan.initial_config[owner]},
        )
        patch = reply.parsed.patch
        known = {k: v for k, v in patch.items() if k in plan.initial_config[owner]}
        if len(known) != len(patch):
            self.invalid_patches += 1
        if not known:
            return None
        plan.initial_config[owner].update(known)
        return f"llm patch of {owner}: {sorted(known)}"


def _owner(env: RolloutEnvironment | None, function: str) -> str | None:
    """The class that ran `function` (the last involved class that has it, as in BFCL)."""
    return None if env is None else env.owners.get(function)


def deterministic_patch(plan: Plan, execution: Execution) -> str | None:
    """The failing class's domain's patch for the failure's precondition (`Domain.patch_config`), or None."""
    failure = execution.failure
    if failure is None:
        return None
    owner = _owner(execution.env, failure.function)
    config = plan.initial_config.get(owner) if owner else None
    if owner is None or config is None or not execution.calls:
        return None
    return domain_of(owner).patch_config(owner, config, failure.result, execution.calls[-1], execution.env,
                                         plan.remapper.text)
