"""Stage 1, Plan: a new call sequence with the seed's profile, a new config, a narrative.

The plan keeps the seed's skeleton (turns, calls per turn, the data-flow graph)
and changes its content:

* **functions**: each call may be replaced, with probability
  `PlannerConfig.substitute_prob`, by a sibling from the API graph (same class,
  effect and typed required parameters); the backend picks the sibling
  (purpose ``"plan.calls"``), and a pick that is not a valid sibling is counted
  and ignored. Blacklisted functions (they failed before) are never picked.
* **values**: a :class:`~rods.synth.values.ValueRemapper` maps every
  distinctive word and number of the seed's config and arguments to new ones,
  consistently, so relations survive;
* **data flow**: an argument that the seed took from an earlier call's result
  (and that is neither in the config nor given by the user) is *bound* to that
  result: the executor fills it from the new result at the same place;
* **initial config**: the classes' defaults merged with the seed's config, then
  remapped, so even defaults the seed relied on take new values;
* **narrative**: one goal for the whole task (purpose ``"plan.narrative"``).

The planner remembers, per seed, the functions and substitutions that failed,
and avoids them in later plans.
"""

from __future__ import annotations

import copy
import importlib
import json
import logging
import random
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from rods.envs.calls import ToolCall
from rods.envs.environment import CLASS_MODULES, STATELESS_CLASSES
from rods.llm.base import LLMBackend
from rods.synth.api_graph import APIGraph, describe, function_docs
from rods.synth.profile import (
    ComplexityProfile,
    Trace,
    environment_made,
    call_values,
    linkable,
    profile_of,
    result_value,
    trace_task,
    value_paths,
)
from rods.synth.values import NOUNS, ValueRemapper, leaves
from rods.tasks.model import Task

logger = logging.getLogger(__name__)


@dataclass
class PlannerConfig:
    """Planner knobs.

    Attributes:
        substitute_prob: chance that a call is replaced by an API-graph sibling.
        jitter: relative range of new numbers.
        narrative: write a narrative (off for the no-narrative ablation).
        same_counts: keep the seed's calls per turn; if False, a plan may drop one
            read call that has no data-flow edge (topology and depth still match).
    """

    substitute_prob: float = 0.25
    jitter: float = 0.3
    narrative: bool = True
    same_counts: bool = True


@dataclass
class PlannedCall:
    """One call of a plan; `bindings` maps an argument to (source call, path in its result)."""

    name: str
    arguments: dict[str, Any]
    args: tuple = ()
    bindings: dict[str, tuple[int, tuple]] = field(default_factory=dict)
    turn: int = 0
    original: str = ""  # the seed's function at this position

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
    substitutions: dict[int, str] = field(default_factory=dict)

    def turns(self) -> list[list[PlannedCall]]:
        out: list[list[PlannedCall]] = [[] for _ in range(self.seed.num_turns)]
        for call in self.calls:
            out[call.turn].append(call)
        return out


@dataclass
class SeedAnalysis:
    """What the planner reads once per seed."""

    profile: ComplexityProfile
    trace: Trace
    base_config: dict[str, dict[str, Any]]
    bindings: list[dict[str, tuple[int, tuple]]]
    avoid: list[Any]
    keep: frozenset = frozenset()


def default_config(cls: str) -> dict[str, Any]:
    """The class's `DEFAULT_STATE` as plain JSON (sets and unserialisable values dropped)."""
    if cls in STATELESS_CLASSES:
        return {}
    module = importlib.import_module(CLASS_MODULES[cls])
    out = {}
    for key, value in copy.deepcopy(getattr(module, "DEFAULT_STATE", {})).items():
        try:
            out[key] = json.loads(json.dumps(value))
        except TypeError:
            continue
    return out


def materialize_config(task: Task) -> dict[str, dict[str, Any]]:
    """Defaults of every involved class, overridden by the task's own config (JSON round-tripped)."""
    config = {}
    for cls in task.involved_classes:
        if cls in STATELESS_CLASSES:
            continue
        merged = default_config(cls)
        merged.update(json.loads(json.dumps(task.initial_config.get(cls, {}))))
        config[cls] = merged
    return config


def _arg_items(call: ToolCall) -> list[tuple[str, Any]]:
    return [(f"#{i}", v) for i, v in enumerate(call.args)] + list(call.arguments.items())


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def find_bindings(task: Task, trace: Trace) -> list[dict[str, tuple[int, tuple]]]:
    """Per call: arguments the seed took from an earlier result (not from config or user).

    Keys are argument names (``"#i"`` for positional ones); ``"name[i]"`` binds
    one element of a list argument (``mean(numbers=[<a count from wc>])``).
    """
    known = set(v for v in leaves(task.initial_config) if isinstance(v, (str, int, float)))
    out = []
    for j, call in enumerate(trace.calls):
        found: dict[str, tuple[int, tuple]] = {}
        items = []
        for key, value in _arg_items(call):
            if isinstance(value, list):
                items += [(f"{key}[{i}]", v) for i, v in enumerate(value)]
            else:
                items.append((key, value))
        for key, value in items:
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            # strings the config or the user gave stay mapped; numbers bind whenever a result holds them
            if not linkable(value) or isinstance(value, (list, dict)) or (value in known and not number):
                continue
            for i in range(j - 1, -1, -1):
                paths = [p for p, v in value_paths(result_value(trace.results[i]))
                         if v == value and (_is_number(v) if number else type(v) is type(value))]
                if paths:
                    found[key] = (i, paths[0])
                    break
        out.append(found)
        bound = {v for k, v in items if k in found}
        known.update(v for v in call_values(call) if isinstance(v, (str, int, float)) and v not in bound)
    return out


NARRATIVE_SCHEMA = {
    "type": "object",
    "properties": {"narrative": {"type": "string", "minLength": 10}},
    "required": ["narrative"],
}
CHOICE_SCHEMA = {
    "type": "object",
    "properties": {"functions": {"type": "object", "additionalProperties": {"type": "string"}}},
    "required": ["functions"],
}


class Planner:
    """Samples plans for a seed (see the module docstring)."""

    def __init__(self, backend: LLMBackend, graph: APIGraph, config: PlannerConfig | None = None):
        self.backend = backend
        self.graph = graph
        self.config = config or PlannerConfig()
        self.failures: dict[str, Counter] = defaultdict(Counter)  # seed id -> function -> failures
        self.invalid_choices = 0
        self._analyses: dict[str, SeedAnalysis] = {}
        self._lock = threading.Lock()

    def analyze(self, seed: Task) -> SeedAnalysis:
        """The seed's trace, Φ, materialized config and bindings (computed once per seed)."""
        with self._lock:
            cached = self._analyses.get(seed.id)
        if cached is None:
            trace = trace_task(seed)
            base = materialize_config(seed)
            avoid = leaves(base) + [v for c in trace.calls for v in leaves(list(c.args) + list(c.arguments.values()))]
            keep = environment_made(seed) if seed.long_context else frozenset()
            cached = SeedAnalysis(profile_of(seed, trace), trace, base, find_bindings(seed, trace), avoid, keep)
            with self._lock:
                self._analyses[seed.id] = cached
        return cached

    def remember_failure(self, seed: Task, function: str) -> None:
        with self._lock:
            self.failures[seed.id][function] += 1

    def plan(self, seed: Task, *, rng: random.Random, attempt: int = 1, blacklist: frozenset[str] = frozenset()) -> Plan:
        """A new plan for `seed`; functions in `blacklist` (or failed before) are replaced or avoided."""
        info = self.analyze(seed)
        rng_seed = rng.randrange(2**31)
        local = random.Random(rng_seed)
        remapper = ValueRemapper(local, info.avoid, jitter=self.config.jitter, keep=info.keep)
        held = {n for names in seed.missed_function.values() for n in names}
        with self._lock:
            avoid = set(blacklist) | {f for f, n in self.failures[seed.id].items() if n >= 2}
        chosen = self._choose_functions(info.trace.calls, held, avoid, local)
        calls = []
        for j, (call, turn) in enumerate(zip(info.trace.calls, info.trace.turn_of)):
            name = chosen.get(j, call.name)
            args = tuple(remapper.remap(list(call.args)))
            arguments = {k: remapper.remap(v) for k, v in call.arguments.items()}
            if name != call.name:
                allowed = set(self.graph.nodes[name].params)
                arguments = {k: v for k, v in arguments.items() if k in allowed}
            calls.append(PlannedCall(name, arguments, args, dict(info.bindings[j]), turn, call.name))
        config = {cls: remapper.remap(value) for cls, value in info.base_config.items()}
        _rename_unchanged_root(config, seed, local)
        subs = dict(chosen)
        if not self.config.same_counts and local.random() < 0.5:
            calls, subs = self._drop_isolated_read(calls, subs, info.profile, held, local)
        plan = Plan(seed, calls, config, None, copy.deepcopy(seed.missed_function), remapper, attempt, rng_seed, subs)
        if self.config.narrative:
            plan.narrative = self.write_narrative(plan)
        return plan

    def _drop_isolated_read(self, calls: list[PlannedCall], subs: dict[int, str], profile: ComplexityProfile,
                            held: set[str], rng: random.Random) -> tuple[list[PlannedCall], dict[int, str]]:
        """Drop one read call without data-flow edges from a turn that has others (counts vary, Φ's graph stays)."""
        linked = {i for edge in profile.edges for i in edge}
        per_turn = Counter(c.turn for c in calls)
        options = [j for j, c in enumerate(calls) if j not in linked and per_turn[c.turn] >= 2 and c.name not in held
                   and self.graph.nodes.get(c.name) is not None and self.graph.nodes[c.name].effect == "read"]
        if not options:
            return calls, subs
        drop = rng.choice(options)
        kept = []
        for j, call in enumerate(calls):
            if j == drop:
                continue
            call.bindings = {k: (src - (src > drop), path) for k, (src, path) in call.bindings.items()}
            kept.append(call)
        return kept, {j - (j > drop): n for j, n in subs.items() if j != drop}

    def _choose_functions(self, calls: list[ToolCall], held: set[str], avoid: set[str],
                          rng: random.Random) -> dict[int, str]:
        options: dict[str, list[str]] = {}
        for j, call in enumerate(calls):
            if call.name in held:
                continue
            sibs = [s for s in self.graph.siblings(call.name) if s not in avoid and s not in held]
            if sibs and (call.name in avoid or rng.random() < self.config.substitute_prob):
                options[str(j)] = sibs
        if not options:
            return {}
        reply = self.backend.chat(
            [{"role": "system", "content": "You plan tool-use tasks. Pick one function per call index."},
             {"role": "user", "content": "For each call index choose a replacement function from its options. "
              f"Options: {json.dumps(options)}. Answer as JSON {{\"functions\": {{index: name}}}}."}],
            json_schema=CHOICE_SCHEMA, purpose="plan.calls",
            context={"options": options, "functions": [c.name for c in calls], "seed": rng.randrange(2**31)},
        )
        chosen = {}
        for key, name in (reply.data or {}).get("functions", {}).items():
            if key in options and name in options[key]:
                chosen[int(key)] = name
            else:
                with self._lock:
                    self.invalid_choices += 1
                logger.info("planner: ignoring invalid function choice %r for call %s", name, key)
        return chosen

    def write_narrative(self, plan: Plan) -> str:
        """One goal for the whole task, from the backend (purpose "plan.narrative")."""
        docs = function_docs()
        turns = [[{"function": c.name, "description": describe(docs[c.name]) if c.name in docs else "",
                   "arguments": c.arguments} for c in turn] for turn in plan.turns()]
        context = {"classes": list(plan.seed.involved_classes), "turns": turns, "seed": plan.rng_seed}
        reply = self.backend.chat(
            [{"role": "system", "content": "You write short, concrete goals for users of software tools."},
             {"role": "user", "content": "Write one narrative (2-3 sentences) explaining who the user is and "
              "what they want to achieve across all these steps. Steps per turn: "
              f"{json.dumps(turns, default=str)[:3000]}. Answer as JSON {{\"narrative\": \"...\"}}."}],
            json_schema=NARRATIVE_SCHEMA, purpose="plan.narrative", context=context,
        )
        return str(reply.data["narrative"]).strip()


def _rename_unchanged_root(config: dict, seed: Task, rng: random.Random) -> None:
    """A file system made only of environment words would come out unchanged: rename its top directory."""
    fs = config.get("GorillaFileSystem")
    root = (fs or {}).get("root")
    if not isinstance(root, dict) or len(root) != 1 or fs != seed.initial_config.get("GorillaFileSystem"):
        return
    ((_, node),) = root.items()
    fs["root"] = {f"{rng.choice(NOUNS)}_{rng.choice(NOUNS)}": node}
