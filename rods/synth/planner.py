"""Stage 1, Plan: a new call sequence sampled from the API graph with the seed's profile Φ.

Narrative first, then the sequence, then the values:

* **narrative**: one goal for the whole task (purpose ``"plan.narrative"``),
  written from the seed's classes, category and turn count before any
  function is fixed;
* **sequence**: K candidate call sequences are sampled position by position.
  A position keeps the seed's turn, API class and read/write effect; the
  function is drawn from the *whole* class, weighted by the API graph: a
  position fed by earlier calls (a data-flow edge of Φ) prefers functions
  the graph has seen taking values from the functions chosen there; functions
  that produce nothing are avoided where later calls need a value; the seed's
  own function and functions earlier variants used at that position weigh
  less, so variants differ from the seed and from each other; a miss_func
  held-out position takes a function not used before it; functions that
  failed at a position (blacklisted, or failed twice for this seed) are never
  drawn there. The backend then writes the sequence for the narrative itself
  (purpose ``"plan.sequence"``), as the paper's planner does: per position,
  the functions the graph and Φ allow there are an enum of the reply schema,
  and the sampled candidates are shown as examples (the template backend
  answers with a seeded draw among them). A proposal that breaks a
  constraint is counted in `invalid_proposals` and the sampler's first
  candidate runs; argument suggestions for a step or parameter that does not
  exist are counted in `invalid_arguments`, values the value model refuses
  there (`rods.synth.value_model`) in `out_of_domain_arguments`;
* **values**: each call's arguments are resolved during execution from the
  live state (:mod:`rods.synth.arguments`), so that its data-flow sources are
  exactly Φ's; the initial config is the classes' defaults merged with the
  seed's config, remapped by a :class:`~rods.synth.values.ValueRemapper`.

Each position also lists ranked graph-valid alternatives, which the executor
tries when the chosen function cannot run there; the pipeline remembers those
failures per (seed, position) and re-plans around them. What a plan holds is
`rods.synth.plan`; the backend's replies are the `Narrative` and
`SequenceProposal` models.
"""

from __future__ import annotations

import copy
import functools
import json
import logging
import math
import random
import threading
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel, Field, create_model

from rods.envs.domains import domain_of, domain_of_task
from rods.llm.base import LLMBackend
from rods.llm.schema import MAX_REASON_CHARS, SCALAR, closed_object
from rods.synth.api_graph import APIGraph, seeds_of
from rods.synth.counterparts import counterparts, errand_of, mapped
from rods.synth.database import database_of
from rods.synth.findings import tells_nothing
from rods.synth.gate import Rejected
from rods.synth.initial_config import materialize_config
from rods.synth.mentions import message_text
from rods.synth.names import quoted_names, renamed, with_derived
from rods.synth.parameters import TEXT_WORDS, tokens
from rods.synth.people import said_genders
from rods.synth.plan import Plan, PlannedCall
from rods.synth.profile import (
    ComplexityProfile,
    Trace,
    environment_made,
    profile_of,
    trace_task,
)
from rods.synth.recast import (
    follow_people,
    follow_runs,
    free_shift,
    meant_to_fail,
    names_holiday,
    placed_in_month,
    recast_calls,
    said_texts,
    seed_dates,
    state_mapping,
)
from rods.synth.retelling import retellings
from rods.synth.touched import (
    coincident,
    handles_of_kept,
    produced_numbers,
    said_values,
    touched_values,
    written_in,
)
from rods.synth.value_kinds import config_values, is_distinctive, leaves, vocabulary_of
from rods.synth.values import MergedRecords, ValueRemapper
from rods.tasks.model import Task, content_hash

logger = logging.getLogger(__name__)


@dataclass
class PlannerConfig:
    """Planner knobs.

    Attributes:
        candidates: graph-valid call sequences offered to the backend per plan (K).
        jitter: relative range of remapped numbers in the config.
        narrative: write a narrative (off for the no-narrative ablation).
        same_counts: keep the seed's calls per turn; if False, a plan may drop one
            read call that has no data-flow edge (topology and depth still match).
        alternatives: graph-valid fallback functions listed per position.
        seed_function_weight: the weight factor of a position's own seed function
            (below 1: away from the seed's calls).
        skill_overlap: the band of Jaccard similarity between the seed's and a candidate's
            function sets that candidates are kept in (others only when none is inside).
    """

    candidates: int = 4
    jitter: float = 0.3
    narrative: bool = True
    same_counts: bool = True
    alternatives: int = 12
    seed_function_weight: float = 0.25
    skill_overlap: tuple[float, float] = (0.3, 0.7)


@dataclass
class Slot:
    """What Φ fixes at one position: turn, class, data-flow sources, effect, miss_* roles."""

    turn: int
    api_class: str
    seed_function: str
    sources: tuple[int, ...]
    changed: bool
    held_out: bool = False
    user_value: bool = False
    #: Text parameters of the seed's call here that retell an earlier position's result -> that position.
    retells: dict[str, int] = field(default_factory=dict)
    #: Optional parameters the seed's call passed here, with its values (a post's `tags`, `wc`'s `mode`).
    optional: dict[str, Any] = field(default_factory=dict)
    #: The seed's call here is a read that told nothing (`rods.synth.findings.tells_nothing`): a variant's may.
    found_nothing: bool = False
    #: Parameter -> (earlier position, its parameter) the seed's call here gave the same value as: the same file,
    #: the same order (`echoes`).
    echoes: dict[str, tuple[int, str]] = field(default_factory=dict)


@dataclass
class SeedAnalysis:
    """What the planner reads once per seed."""

    profile: ComplexityProfile
    trace: Trace
    base_config: dict[str, dict[str, Any]]
    slots: list[Slot]
    avoid: list[Any]
    keep: frozenset = frozenset()


def seed_settings(trace: Trace) -> dict[str, dict[str, Any]]:
    """Per function, the plain numbers and switches the seed passed it (`logarithm(base=10, precision=2)`,
    `ls(a=True)`): not values a person gives (those are distinctive and remapped) but how they like it done.
    A variant that calls the function passes them again instead of a fresh number (a logarithm to base 283.89,
    to 34 digits, read as made up in the tenth blind read)."""
    out: dict[str, dict[str, Any]] = {}
    for call in trace.calls:
        for param, value in call.arguments.items():
            if isinstance(value, (bool, int, float)) and not is_distinctive(value, frozenset()):
                out.setdefault(call.name, {}).setdefault(param, value)
    return out


def usual_optional(graph: APIGraph, rng: random.Random) -> dict[str, dict[str, Any]]:
    """Per function every human call of which passes optional arguments, one of those sets (`APIGraph.usual_optional`):
    a variant that calls `update_patient` where its seed called another function changes something, as people do."""
    return {name: rng.choice(sets) for name, sets in graph.usual_optional.items()}


def seed_scales(trace: Trace, typical: dict[str, dict[str, float]] | None = None) -> dict[str, dict[str, float]]:
    """Per function, the number the seed gave it, settings or not (`send_certificate(amount=150)`), else the
    middle of those the environment's human tasks gave it (`APIGraph.typical_numbers`): a variant's own number
    there is of that size (`rods.synth.arguments.like`), as the domain's people ask."""
    out = {name: dict(params) for name, params in (typical or {}).items()}
    mine: dict[str, dict[str, float]] = {}
    for call in trace.calls:
        for param, value in call.arguments.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                mine.setdefault(call.name, {}).setdefault(param, value)
    for name, params in mine.items():
        out[name] = {**out.get(name, {}), **params}
    return out


def seed_slots(seed: Task, trace: Trace, profile: ComplexityProfile, graph: APIGraph) -> list[Slot]:
    """Φ per position: the seed's turn, class, data-flow sources and effect; held-out and miss_param roles;
    and which of its text arguments retell an earlier result (`rods.synth.retelling.retellings`)."""
    slots = []
    params = {name: list(node.params) for name, node in graph.nodes.items()}
    told = retellings(trace, params, vocabulary_of(seed.environment))
    for j, call in enumerate(trace.calls):
        node = graph.nodes.get(call.name)
        sources = tuple(sorted(i for i, k in profile.edges if k == j))
        optional = {p: v for p, v in call.arguments.items()
                    if node is not None and p in node.params and p not in node.required}
        slots.append(Slot(trace.turn_of[j], node.api_class if node else "", call.name, sources, trace.changed[j],
                          retells={p: i for (k, p), i in told.items() if k == j}, optional=optional,
                          found_nothing=not trace.changed[j] and tells_nothing(call, trace.results[j]),
                          echoes=echoes(trace.calls, j, vocabulary_of(seed.environment))))
    for k, names in seed.reveal_turns().items():
        for name in names:
            at = next((j for j, c in enumerate(trace.calls) if c.name == name and trace.turn_of[j] >= k), None)
            if at is not None:
                slots[at].held_out = True
    if seed.category == "miss_param":
        words = vocabulary_of(seed.environment)
        for t in range(seed.num_turns - 1):
            if seed.ground_truth[t] or not seed.question[t]:
                continue
            positions = [j for j, turn in enumerate(trace.turn_of) if turn == t + 1]
            said = [j for j in positions if any(is_distinctive(v, words) and not isinstance(v, (list, dict))
                                                for v in [*trace.calls[j].args, *trace.calls[j].arguments.values()])]
            if said or positions:
                slots[(said or positions)[0]].user_value = True
    return slots


def echoes(calls: list[Any], j: int, words: frozenset[str]) -> dict[str, tuple[int, str]]:
    """The arguments of call j that repeat a distinctive value an earlier call was given: parameter -> (that
    call, its parameter), the latest. A person who reads a file and then copies it names one file twice; a
    variant whose read and copy name two files does two unrelated things (`Coherence.stray_reads`)."""
    out: dict[str, tuple[int, str]] = {}
    for param, value in calls[j].arguments.items():
        if not isinstance(value, (str, int, float)) or isinstance(value, bool) or not is_distinctive(value, words):
            continue
        for i in range(j - 1, -1, -1):
            same = next((p for p, v in calls[i].arguments.items() if v == value and type(v) is type(value)), None)
            if same is not None:
                out[param] = (i, same)
                break
    return out


#: Longest narrative the schema allows (characters; two or three sentences).
MAX_NARRATIVE_CHARS = 600


class Narrative(BaseModel):
    """The reply of purpose "plan.narrative": one goal for the whole task."""

    narrative: str = Field(min_length=10, max_length=MAX_NARRATIVE_CHARS)


class SequenceProposal(BaseModel):
    """The reply of purpose "plan.sequence": the model's own call sequence (step index -> function) and
    argument suggestions per step."""

    sequence: dict[str, str]
    reason: str = Field("", max_length=MAX_REASON_CHARS)
    arguments: dict[str, dict[str, Any]] = Field(default_factory=dict)


@functools.lru_cache(maxsize=256)
def sequence_proposal_model(options: tuple[tuple[str, ...], ...],
                            params: tuple[tuple[str, ...], ...]) -> type[SequenceProposal]:
    """`SequenceProposal` whose schema allows, per step index, only the functions the graph and Φ allow there
    (`options[j]`, an enum; every step required) and, per step, only the parameters those functions take
    (`params[j]`), with bounded values.

    The checks stay `SequenceProposal`'s: a server that ignores the schema still has its
    out-of-place function or unknown step counted (`invalid_proposals`, `invalid_arguments`).
    """
    positions = {str(j): {"type": "string", "enum": list(names)} for j, names in enumerate(options)}
    steps = {str(j): closed_object({p: SCALAR for p in names}) for j, names in enumerate(params)}
    return create_model(
        "SequenceProposal", __base__=SequenceProposal,
        sequence=(dict[str, str], Field(json_schema_extra=closed_object(positions, required=list(positions)))),
        arguments=(dict[str, dict[str, Any]], Field(default_factory=dict, json_schema_extra=closed_object(steps))),
    )


class Planner:
    """Samples plans for a seed (see the module docstring)."""

    def __init__(self, backend: LLMBackend, graph: APIGraph, config: PlannerConfig | None = None):
        self.backend = backend
        self.graph = graph
        self.config = config or PlannerConfig()
        # seed id -> (position, function) -> failures; seed id -> position -> function -> times planned
        self.failures: dict[str, Counter] = defaultdict(Counter)
        self.usage: dict[str, dict[int, Counter]] = defaultdict(lambda: defaultdict(Counter))
        self.invalid_proposals = 0
        self.invalid_arguments = 0
        #: Suggested values the environment's value model refuses (a room type it has no rooms of): dropped.
        self.out_of_domain_arguments = 0
        self._analyses: dict[tuple[str, str], SeedAnalysis] = {}
        self._has_counterparts: dict[tuple[str, str], bool] = {}
        self._lock = threading.Lock()
        self._by_class: dict[str, list[str]] = defaultdict(list)
        for name, node in sorted(graph.nodes.items()):
            self._by_class[node.api_class].append(name)
        self._feeds: dict[str, set[str]] = defaultdict(set)  # function -> classes it was seen feeding
        for f, g in graph.edges:
            if g in graph.nodes:
                self._feeds[f].add(graph.nodes[g].api_class)

    def analyze(self, seed: Task) -> SeedAnalysis:
        """The seed's trace, Φ, materialized config and slots (computed once per seed)."""
        key = (seed.id, content_hash(seed))  # a turn slice and the episode it is planned through share an id
        with self._lock:
            cached = self._analyses.get(key)
        if cached is None:
            trace = trace_task(seed)
            profile = profile_of(seed, trace)
            base = materialize_config(seed)
            avoid = leaves(base) + [v for c in trace.calls for v in leaves(list(c.args) + list(c.arguments.values()))]
            keep = environment_made(seed) if domain_of_task(seed).makes_own_values(seed) else frozenset()
            cached = SeedAnalysis(profile, trace, base, seed_slots(seed, trace, profile, self.graph), avoid, keep)
            with self._lock:
                self._analyses[key] = cached
        return cached

    def remember_failure(self, seed: Task, function: str, position: int | None = None) -> None:
        """Count a failure of `function` (at `position`, or anywhere); twice and it is not planned there again."""
        with self._lock:
            self.failures[seed.id][(position, function)] += 1

    def plan(self, seed: Task, *, rng: random.Random, attempt: int = 1, blacklist: frozenset = frozenset()) -> Plan:
        """A new plan for `seed`: narrative, then a sampled sequence, then a new config.

        `blacklist` holds function names (banned everywhere) or (position, name) pairs.
        """
        info = self.analyze(seed)
        rng_seed = rng.randrange(2**31)
        local = random.Random(rng_seed)
        remapper, config = self._world(seed, info, local)
        slots = list(info.slots)
        if not self.config.same_counts and local.random() < 0.5:
            slots = _drop_isolated_read(slots, info.profile, local)
        narrative = self.write_narrative(seed, rng_seed) if self.config.narrative else None
        banned = self._banned(seed, blacklist)
        candidates, in_band = self._candidates(seed, slots, banned, local)
        chosen, suggested = self._propose(candidates, slots, banned, narrative, local, in_band)
        with self._lock:
            for j, name in enumerate(chosen):
                self.usage[seed.id][j][name] += 1
        calls = [PlannedCall(name, turn=slot.turn, original=slot.seed_function, sources=slot.sources,
                             retold=self._retold(name, slot), optional=slot.optional,
                             may_find_nothing=slot.found_nothing,
                             alternatives=self._alternatives(j, chosen, slots, banned, seed), changed=slot.changed,
                             held_out=slot.held_out, user_value=slot.user_value, suggested=suggested.get(j, {}),
                             echoes=slot.echoes)
                 for j, (name, slot) in enumerate(zip(chosen, slots))]
        held = {k: [j for j, s in enumerate(slots) if s.held_out and s.turn >= int(k) and s.seed_function in names]
                for k, names in seed.missed_function.items()}
        uncalled = {k: len(names) - len(held[k]) for k, names in seed.missed_function.items()}
        subs = {j: name for j, (name, slot) in enumerate(zip(chosen, slots)) if name != slot.seed_function}
        return Plan(seed, calls, config, narrative, copy.deepcopy(seed.missed_function), remapper, attempt, rng_seed,
                    subs, held, uncalled, candidates, frozenset(self.graph.flows), seed_settings(info.trace),
                    seed_scales(info.trace, self.graph.typical_numbers),
                    usual_optional(self.graph, random.Random(f"{rng_seed}:optional")))

    def recast(self, seed: Task, *, rng: random.Random) -> Plan:
        """The seed's own plan in a new world (`rods.synth.recast`): its calls, turns and flows kept, position by
        position, its config remapped as `plan` remaps it and its arguments through the same mapping."""
        info = self.analyze(seed)
        rng_seed = rng.randrange(2**31)
        remapper, config = self._world(seed, info, random.Random(rng_seed), recast=True)
        owners = {name: node.api_class for name, node in self.graph.nodes.items()}
        mapping = {k: v for k, v in state_mapping(info.base_config, config).items()
                   if not (k[0] == "n" and k[1] in remapper.coincident)}  # the calls re-draw those
        calls = recast_calls(info.trace, remapper, mapping, owners,
                             said_texts(seeds_of(seed.environment)), frozenset(seed.expected_error_calls()),
                             message_text(seed.question))
        return Plan(seed, calls, config, None, copy.deepcopy(seed.missed_function), remapper, 1, rng_seed,
                    observed_flows=frozenset(self.graph.flows))

    def counterparts(self, seed: Task, *, rng: random.Random) -> Iterator[tuple[Plan, dict[str, Any]]]:
        """Plans of the seed's errand done for a counterpart (`rods.synth.counterparts`): its calls, turns and
        flows kept, their values the counterpart's (`mapping`: JSON of a seed value -> its counterpart's),
        the state the environment's own. None drawn where the seed touches no record of a collection."""
        info = self.analyze(seed)
        if self._holds_own(seed, info):  # a state of the seed's own is renamed by a recast, not swapped
            return
        db = database_of(seed)
        changed = info.trace.changed or [False] * len(info.trace.calls)
        written = said_values([c for c, w in zip(info.trace.calls, changed) if w])
        errand = errand_of(db, said_values(info.trace.calls), written, message_text(seed.question))
        if errand is None:
            return
        rng_seed = rng.randrange(2**31)
        remapper, _ = self._world(seed, info, random.Random(rng_seed), recast=True)
        fails = meant_to_fail(info.trace, frozenset(seed.expected_error_calls()))
        for mapping in counterparts(db, errand, random.Random(rng_seed)):
            calls = [PlannedCall(call.name, {p: mapped(v, mapping) for p, v in call.arguments.items()},
                                 tuple(mapped(v, mapping) for v in call.args), turn=info.trace.turn_of[j],
                                 original=call.name, changed=changed[j],
                                 fails=fails[j])
                     for j, call in enumerate(info.trace.calls)]
            yield (Plan(seed, calls, copy.deepcopy(info.base_config), None, copy.deepcopy(seed.missed_function),
                        remapper, 1, rng_seed, observed_flows=frozenset(self.graph.flows)), mapping)

    def has_counterparts(self, seed: Task) -> bool:
        """Whether the seed's errand has a counterpart to be done for (`counterparts`; once per seed)."""
        key = (seed.id, content_hash(seed))
        with self._lock:
            known = self._has_counterparts.get(key)
        if known is None:
            known = next(self.counterparts(seed, rng=random.Random(0)), None) is not None
            with self._lock:
                self._has_counterparts[key] = known
        return known

    def can_recast(self, seed: Task) -> bool:
        """Whether a recast can change the seed's world: its state holds a distinctive value that is its own, not
        the environment's (a tau2 task's state is the domain's database, which a variant does not rename). A gold
        call meant to fail (`expected_errors`) must fail in the recast too (`PlannedCall.fails`)."""
        info = self.analyze(seed)
        if not self._holds_own(seed, info):
            return False
        # and it has something that makes another errand (a person, an id, a number, a date) that the state holds or
        # the user says: an id only a call makes (a new page's) comes out as it was, and the recast as its seed
        said = said_values(info.trace.calls)
        text = message_text(seed.question)
        touched = touched_values(info.base_config, said, text, self.graph.values.people)
        held = {json.dumps(v) for v in leaves(info.base_config)}
        words = vocabulary_of(seed.environment)
        return any(is_distinctive(v, words) and (json.dumps(v) in held or written_in(v, text)) for v in touched) \
            or bool(seed_dates(leaves(info.base_config))) \
            or bool(self._chosen_names(seed, info, text, random.Random(0)))

    def _holds_own(self, seed: Task, info: SeedAnalysis) -> bool:
        """Whether the seed's state holds a distinctive value that is its own, not the environment's."""
        words = vocabulary_of(seed.environment)
        return any(is_distinctive(v, words) and v not in info.keep
                   for state in info.base_config.values() for v in config_values(state))

    def _chosen_names(self, seed: Task, info: SeedAnalysis, text: str, rng: random.Random) -> dict[str, str]:
        """The names the seed's user chose (quoted, passed by a call) -> another user's names for them
        (`rods.synth.names`)."""
        model = self.graph.values
        world = [info.base_config, [[*c.args, c.arguments] for c in info.trace.calls]]
        held = frozenset(v for v in leaves(info.base_config) if isinstance(v, str))  # map keys too
        writes = info.trace.changed or [None] * len(info.trace.calls)
        names = quoted_names(info.trace.calls, writes, text, model, held, vocabulary_of(seed.environment))
        return renamed(names, model, world, text, rng)

    def _world(self, seed: Task, info: SeedAnalysis, local: random.Random,
               recast: bool = False) -> tuple[ValueRemapper, dict[str, Any]]:
        """A variant's remapper and new initial config: the seed's (with its classes' defaults) remapped, then its
        domain's last edit (`Domain.adjust_config`); `plan` and `recast` both start from it. A `recast` keeps its
        seed's words true (`ValueRemapper.like_seed`) and moves all its dates by the same one to four weeks, a move
        that puts no date on another first (`rods.synth.recast.free_shift`)."""
        remapper = ValueRemapper(local, vocabulary_of(seed.environment), info.avoid, jitter=self.config.jitter,
                                 keep=info.keep, prose=self.graph.prose, field_texts=self.graph.field_texts,
                                 model=self.graph.values)
        if recast:
            remapper.like_seed = True
            said = said_values(info.trace.calls)
            # at most four weeks: a season stays a season (an orchard trip moved eight weeks back fell in August)
            weeks = (abs(remapper.shift) // 7 - 1) % 4 + 1
            remapper.shift = free_shift(seed_dates([*leaves(info.base_config), *said]),
                                        7 * weeks * (1 if remapper.shift > 0 else -1))
            text = message_text(seed.question)
            if placed_in_month(text) or names_holiday(text):
                remapper.shift = 0
            people = self.graph.values.people
            # numbers the environment works out or charges by its own table stay the environment's
            fixed = produced_numbers(info.trace.calls, info.trace.results, info.trace.changed or []) \
                | self.graph.values.rates
            touched = frozenset(v for v in touched_values(info.base_config, said, text, people)
                                if not (isinstance(v, (int, float)) and not isinstance(v, bool) and v in fixed))
            names = self._chosen_names(seed, info, text, random.Random(str(local.getstate()[1][:4])))
            names = with_derived(names, [*leaves(info.base_config), *said])  # 'ArchivedFinalReport2024.txt'
            kept = handles_of_kept(info.base_config, touched | set(names), people)  # 'mthompson' of Michael Thompson
            remapper.names = {old: new for old, new in names.items() if old not in kept}
            remapper.touched = touched | frozenset(remapper.names)
            remapper.coincident = coincident(info.base_config, info.trace.calls) & {
                float(v) for v in remapper.touched if isinstance(v, (int, float)) and not isinstance(v, bool)}
            remapper.genders = said_genders(remapper.touched, text, self.graph.values.people)
            remapper.settle_families(remapper.touched, self.graph.values.people)
        try:
            config = {cls: remapper.remap(value, cls) for cls, value in info.base_config.items()}
        except MergedRecords:  # two records drawn one key: refused, and a recast draws again
            raise Rejected("merged_records") from None
        if recast:
            config = {cls: follow_people(value, remapper.people) for cls, value in config.items()}
            config = follow_runs(info.base_config, config)
        domain_of_task(seed).adjust_config(config, seed, local)
        return remapper, config

    # ------------------------------------------------------------ sequence

    def _banned(self, seed: Task, blacklist: frozenset) -> set:
        with self._lock:
            failed = {key for key, n in self.failures[seed.id].items() if n >= 2}
        out = set(failed)
        for item in blacklist:
            out.add(item if isinstance(item, tuple) else (None, item))
        return out

    def _retold(self, name: str, slot: Slot) -> dict[str, int]:
        """The seed's retellings at a position, on the variant function's parameters: the same parameter, or
        its first required text parameter (`content`, `message`, ...)."""
        node = self.graph.nodes.get(name)
        if node is None or not slot.retells:
            return {}
        texts = self._text_params(name)
        out = {}
        for param, source in slot.retells.items():
            target = param if param in node.params else (texts[0] if texts else None)
            if target is not None:
                out[target] = source
        return out

    def _text_params(self, name: str) -> list[str]:
        """The required text parameters of a function (`content`, `message`, ...)."""
        node = self.graph.nodes[name]
        return [p for p in node.required if node.params.get(p) in ("string", "str") and tokens(p) & TEXT_WORDS]

    def _candidates(self, seed: Task, slots: list[Slot], banned: set, rng: random.Random
                    ) -> tuple[list[list[str]], int]:
        """Up to `candidates` distinct sampled sequences, and how many of them (the first ones) have a skill
        overlap with the seed inside the band and keep one of the seed's write functions (if it has any); when
        a round of draws finds none inside, the next round weighs the seed's own functions more (x4 a round);
        the rest are the nearest others."""
        low, high = self.config.skill_overlap
        mine = {s.seed_function for s in slots}
        writes = {s.seed_function for s in slots if s.changed}
        scored: list[tuple[float, list[str]]] = []
        for boost in (1.0, 4.0, 16.0):
            for _ in range(max(1, self.config.candidates) * 4):
                sequence = self._sample(seed, slots, banned, rng, boost)
                if sequence is None or any(sequence == s for _, s in scored):
                    continue
                overlap = len(mine & set(sequence)) / len(mine | set(sequence))
                miss = max(low - overlap, overlap - high, 0.0) + (0.5 if writes and not writes & set(sequence) else 0)
                scored.append((miss, sequence))
                if sum(m == 0 for m, _ in scored) >= self.config.candidates:
                    break
            if any(m == 0 for m, _ in scored):
                break
        if not scored:  # nothing graph-valid avoids the blacklist: fall back to the seed's functions
            return [[s.seed_function for s in slots]], 0
        # in-band ones first, those whose calls are about one thing (`shared`) first among them, else as drawn
        scored.sort(key=lambda item: (item[0], -self.shared(item[1])))
        kept = scored[: self.config.candidates]
        best = [s for m, s in kept if m == 0]
        return [s for _, s in kept], sum(self.shared(s) == self.shared(best[0]) for s in best) if best else 0

    def shared(self, sequence: list[str]) -> int:
        """How many positions after the first take a parameter of a name an earlier position's function takes
        (the same file, the same book) or were seen taking a value from an earlier function: calls about one
        thing, so the task has one goal."""
        count = 0
        for j in range(1, len(sequence)):
            mine = set(self.graph.nodes[sequence[j]].params)
            if any(mine & set(self.graph.nodes[f].params) or (f, sequence[j]) in self.graph.edges
                   for f in sequence[:j]):
                count += 1
        return count

    def _pool(self, j: int, slot: Slot, prefix: list[str], banned: set, slots: list[Slot] | None = None) -> list[str]:
        pool = [n for n in self._by_class.get(slot.api_class, [slot.seed_function])
                if (j, n) not in banned and (None, n) not in banned]
        if slots is not None:  # the same argument-free read again, nothing written since: it would only repeat
            fresh = [n for n in pool if not (self.graph.nodes[n].effect == "read" and not self.graph.nodes[n].required
                                             and self._read_since_write(n, prefix, slots))]
            pool = fresh or pool
        if slot.held_out:
            pool = [n for n in pool if n not in prefix]
        if slot.sources:
            pool = [n for n in pool if self.graph.nodes[n].required]  # it must take a value from its sources
        if slot.retells:  # the seed's text retold an earlier call here: keep a function that takes a text
            told = [n for n in pool if self._text_params(n)]
            pool = told or pool
        return pool

    def _weight(self, j: int, name: str, slot: Slot, prefix: list[str], slots: list[Slot], seed: Task,
                boost: float = 1.0) -> float:
        node = self.graph.nodes[name]
        want = "write" if slot.changed else "read"
        w = 3.0 if node.effect == want else 1.0 if node.effect == "unknown" else 0.15
        for i in slot.sources:
            seen = self.graph.edges.get((prefix[i], name), 0)
            w *= 4.0 * (1 + math.log1p(seen)) if seen else 0.05
        for consumer in {s.api_class for s in slots[j + 1:] if j in s.sources}:  # it must feed later classes
            w *= 4.0 if consumer in self._feeds.get(name, ()) else 0.2
        if (not slot.changed and not slot.sources and not node.required and j + 1 < len(slots)
                and not any(j in s.sources for s in slots[j + 1:])):
            w *= 0.05  # an argument-free read nothing flows from (a disk-usage check) would serve no goal here
        if name == slot.seed_function:
            w *= self.config.seed_function_weight * boost
        with self._lock:
            w *= 0.5 ** self.usage[seed.id][j][name]
        return w

    def _read_since_write(self, name: str, prefix: list[str], slots: list[Slot]) -> bool:
        """Whether `name` ran since the last position that writes."""
        for j in range(len(prefix) - 1, -1, -1):
            if prefix[j] == name:
                return True
            if slots[j].changed:
                return False
        return False

    def _sample(self, seed: Task, slots: list[Slot], banned: set, rng: random.Random,
                boost: float = 1.0) -> list[str] | None:
        prefix: list[str] = []
        for j, slot in enumerate(slots):
            pool = self._pool(j, slot, prefix, banned, slots)
            if not pool:
                return None
            weights = [self._weight(j, n, slot, prefix, slots, seed, boost) for n in pool]
            prefix.append(rng.choices(pool, weights=weights)[0])
        return prefix

    def _alternatives(self, j: int, chosen: list[str], slots: list[Slot], banned: set, seed: Task) -> list[str]:
        """Other graph-valid functions for position j, best first (the executor's fallbacks)."""
        pool = [n for n in self._pool(j, slots[j], chosen[:j], banned, slots) if n != chosen[j]]
        pool.sort(key=lambda n: -self._weight(j, n, slots[j], chosen, slots, seed))
        return pool[: self.config.alternatives]

    def _options(self, j: int, slot: Slot, banned: set, candidates: list[list[str]]) -> list[str]:
        """The functions a proposal may put at position j: the class's functions the blacklist and Φ's role
        there allow, of the seed's effect where the class has any (and whatever a sampled candidate holds)."""
        pool = self._pool(j, slot, [], banned)
        want = "read" if not slot.changed else "write"
        fitting = [n for n in pool if self.graph.nodes[n].effect in (want, "unknown")]
        return sorted(set(fitting or pool) | {c[j] for c in candidates if j < len(c)})

    def _valid(self, sequence: list[str], slots: list[Slot], banned: set, options: list[list[str]]) -> str | None:
        """Why a proposed sequence breaks the graph's or Φ's constraints (None when it keeps them)."""
        if len(sequence) != len(slots):
            return f"{len(sequence)} steps for {len(slots)} positions"
        for j, (name, slot) in enumerate(zip(sequence, slots)):
            if name not in options[j] or name not in self._pool(j, slot, sequence[:j], banned):
                return f"step {j}: {name!r} is not allowed there"
        return None

    def _propose(self, candidates: list[list[str]], slots: list[Slot], banned: set, narrative: str | None,
                 rng: random.Random, preferred: int = 0) -> tuple[list[str], dict[int, dict[str, Any]]]:
        """The backend writes the call sequence for the narrative (purpose "plan.sequence"), one function per
        position from the ones the graph and Φ allow there (an enum per step in the reply schema; the sampled
        candidates are shown as examples), and may suggest argument values.

        A proposal that breaks a constraint (a function not allowed at its step, a missing step, a
        held-out function called before its turn) is counted in `invalid_proposals` and the sampler's
        first candidate runs; a suggestion for a step or parameter the sequence does not have is
        counted in `invalid_arguments` and dropped, as is a value the environment's value model refuses there (a
        category value outside its set, a person named with nouns: `out_of_domain_arguments`). The executor tries
        the kept suggestions first, and only if they fit.
        """
        options = [self._options(j, slot, banned, candidates) for j, slot in enumerate(slots)]
        if all(len(o) == 1 for o in options):
            return candidates[0], {}
        params = tuple(tuple(sorted({p for n in names for p in self.graph.nodes[n].params})) for names in options)
        steps = [{"turn": s.turn, "effect": "write" if s.changed else "read", "functions": names}
                 for s, names in zip(slots, options)]
        described = {n: self.graph.nodes[n].description.split(". ")[0][:120] for names in options for n in names}
        reply = self.backend.chat(
            [{"role": "system", "content": "You plan tool-use tasks for a user's goal."},
             {"role": "user", "content": f"Goal: {narrative or '(none)'}\nWrite the call sequence that serves the "
              "goal, one function per step, each from its step's list: "
              + json.dumps(dict(enumerate(steps)))[:6000]
              + "\nWhat the functions do: " + json.dumps(described)[:4000]
              + "\nSequences that fit the tool graph, as examples (index: functions): "
              + json.dumps(dict(enumerate(candidates)))[:3000]
              + (f"\nThe first {preferred} keep the seed's skills best." if preferred else "")
              + "\nYou may also propose argument values that fit the goal. Answer as JSON {\"sequence\": "
              "{step index: function}, \"arguments\": {step index: {parameter: value}}}."}],
            json_schema=sequence_proposal_model(tuple(map(tuple, options)), params), purpose="plan.sequence",
            context={"candidates": candidates, "options": options, "narrative": narrative,
                     "seed": rng.randrange(2**31), "preferred": preferred},
        )
        answer: SequenceProposal = reply.parsed
        keys = sorted(answer.sequence, key=lambda k: int(k) if k.isdigit() else len(slots) + 1)
        proposed = [answer.sequence[k] for k in keys]
        why = (f"steps {keys} are not 0..{len(slots) - 1}" if keys != [str(j) for j in range(len(slots))]
               else self._valid(proposed, slots, banned, options))
        if why is not None:
            with self._lock:
                self.invalid_proposals += 1
            logger.info("planner: ignoring an invalid sequence proposal (%s)", why)
            proposed = candidates[0]
        return proposed, self._suggestions(answer.arguments, proposed)

    def _suggestions(self, raw: dict[str, Any], sequence: list[str]) -> dict[int, dict[str, Any]]:
        out: dict[int, dict[str, Any]] = {}
        bad = 0
        for key, values in raw.items():
            step = int(key) if isinstance(key, str) and key.isdigit() else -1
            params = self.graph.nodes[sequence[step]].params if 0 <= step < len(sequence) else {}
            kept = {p: v for p, v in values.items() if p in params and isinstance(v, (str, int, float, bool, list))}
            bad += len(values) - len(kept) if params else 1
            refused = {p for p, v in kept.items()
                       if self.graph.values.admits(self.graph.values.params.get(f"{sequence[step]}.{p}"), v)}
            kept = {p: v for p, v in kept.items() if p not in refused}
            if kept:
                out[step] = kept
            if refused:
                with self._lock:
                    self.out_of_domain_arguments += len(refused)
        if bad:
            with self._lock:
                self.invalid_arguments += bad
        return out

    def write_narrative(self, seed: Task, rng_seed: int = 0) -> str:
        """One goal for the whole task, before the sequence is fixed (purpose "plan.narrative")."""
        classes = list(seed.involved_classes)
        functions = sorted({n for c in classes for n in self._by_class.get(c, [])})
        subjects = [about for c in classes if (about := domain_of(c).subject(c))]
        context = {"classes": classes, "category": seed.category, "num_turns": seed.num_turns, "seed": rng_seed,
                   **({"subjects": subjects} if len(subjects) == len(classes) else {})}
        reply = self.backend.chat(
            [{"role": "system", "content": "You write short, concrete goals for users of software tools."},
             {"role": "user", "content": "Write one narrative (2-3 sentences) explaining who the user is and "
              f"what they want to achieve over {seed.num_turns} requests to an assistant that can use these "
              f"tools: {', '.join(functions)[:2000]}. Answer as JSON {{\"narrative\": \"...\"}}."}],
            json_schema=Narrative, purpose="plan.narrative", context=context,
        )
        return reply.parsed.narrative.strip()


def _drop_isolated_read(slots: list[Slot], profile: ComplexityProfile, rng: random.Random) -> list[Slot]:
    """Drop one read position without data-flow edges from a turn that has others (counts vary, Φ's graph stays)."""
    linked = {i for edge in profile.edges for i in edge}
    per_turn = Counter(s.turn for s in slots)
    options = [j for j, s in enumerate(slots) if j not in linked and per_turn[s.turn] >= 2 and not s.held_out
               and not s.user_value and not s.changed]
    if not options:
        return slots
    drop = rng.choice(options)
    return [replace(s, sources=tuple(i - (i > drop) for i in s.sources)) for j, s in enumerate(slots) if j != drop]
