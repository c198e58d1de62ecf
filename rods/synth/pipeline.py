"""The synthesis pipeline: seeds in, verified variants out (docs/design.md §4.7).

For each seed and variant: plan -> execute (Config Patch, re-plan with the
failing function blacklisted; at most `max_attempts` runs) -> rewrite -> judge
(a query fault goes back to the rewriter once; a ground-truth fault discards)
-> optional augment -> the validation gate. Seeds run concurrently in threads.

Seeds are validated first (`rods.envs.validation`, as `rods tasks validate`
does): a seed whose gold calls fail is rejected once, its failures logged one
line each and counted (`seed:<kind>` rejections, `invalid_seeds`), and never
reaches a stage. Every accepted task passes the validation gate
(`rods.synth.gate`); the settings are `rods.synth.settings.SynthConfig`, the counters
`rods.synth.stats.SynthStats`.

`Pipeline(...)` is callable: `synthesize(seeds) -> accepted tasks`, the plain
callable the data engine's worker uses. Given several backends it is an
ensemble: one set of stages per backbone, each variant written by the one a
:class:`~rods.synth.ensemble.Router` picks (`SynthConfig.routing`); the report
gives every backbone's tried / accepted / acceptance rate.
"""

from __future__ import annotations

import itertools
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence, Set
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rods.envs.schemas import function_names
from rods.envs.slices import slice_source, turn_slice
from rods.envs.validation import describe, validate_task
from rods.llm.base import LLMBackend, LLMError
from rods.llm.stats import merge_snapshots, per_accepted
from rods.synth.api_graph import APIGraph, graph_for
from rods.synth.augmenter import KINDS as AUGMENT_KINDS, augment, expected_profile
from rods.synth.coherence import PLAN_KINDS, Coherence, Violation
from rods.synth.ensemble import Router, backbone_names
from rods.synth.executor import Execution, Executor
from rods.synth.gate import Gate, Rejected
from rods.synth.judge import Judge, Judgement
from rods.synth.mentions import Mentions, message_text, recast_question, value_key
from rods.synth.plan import Plan
from rods.synth.planner import Planner, PlannerConfig
from rods.synth.profile import ComplexityProfile, profile_of, trace_task
from rods.synth.recast import (
    argument_pairs,
    as_seed,
    hollow_reads,
    moved_flows,
    paired,
    run as run_recast,
    state_mapping,
)
from rods.synth.rewriter import Rewriter, turn_contexts, with_queries
from rods.synth.settings import SynthConfig
from rods.synth.stats import SynthStats
from rods.tasks.model import Provenance, Task, content_hash

#: Counterparts a counterpart recast runs before it gives up (`Pipeline._counterpart`).
COUNTERPARTS_TRIED = 3
#: Draws of a recast's world before it gives up, where the environment refuses a draw's values when run
#: (`Pipeline._recast`); any other rejection is final.
RECAST_TRIES = 3

logger = logging.getLogger(__name__)


class Pipeline:
    """Runs the five stages for batches of seeds; `pipeline(seeds)` returns accepted tasks."""

    def __init__(self, backend: LLMBackend | Sequence[LLMBackend], config: SynthConfig | None = None,
                 graph: APIGraph | None = None):
        backends = list(backend) if isinstance(backend, (list, tuple)) else [backend]
        if not backends:
            raise ValueError("Pipeline needs at least one LLM backend")
        backend = backends[0]
        self.backend = backend
        self.config = config or SynthConfig()
        self._graph = graph
        self._planners: dict[str, Planner] = {}  # environment -> its planner (its own API graph)
        self._coherence: dict[tuple[str, int], Coherence] = {}  # (environment, graph) -> its rules
        self.executor = Executor(backend, llm_patches=self.config.feedback_repair)
        self.rewriter = Rewriter(backend)
        self.judge = Judge(backend)
        self.stats = SynthStats()
        self.gate = Gate(same_counts=self.config.same_counts)
        self._lock = threading.RLock()
        self._calls = 0
        #: Seed (id and content hash) -> whether it passed validation: each seed is checked once.
        self._seed_valid: dict[tuple[str, str], bool] = {}
        #: Seed (id and content hash) -> what its recasts are held to (`_seed_checks`).
        self._seed_judgements: dict[tuple[str, str], tuple[Judgement | None, list[str]]] = {}
        # an ensemble: one set of stages per further backbone, sharing the duplicate check
        self.members: list[Pipeline] = [self]
        for other in backends[1:]:
            member = Pipeline(other, self.config, graph)
            member._lock, member.gate = self._lock, self.gate
            self.members.append(member)
        for member, name in zip(self.members, backbone_names([b.describe() for b in backends])):
            member.name = name
        self.router = Router(len(self.members), self.config.routing, seed=self.config.seed)

    def __call__(self, seeds: list[Task]) -> list[Task]:
        return self.synthesize(seeds)

    @property
    def planner(self) -> Planner:
        """The planner of the one environment planned for so far (most runs have one)."""
        with self._lock:
            if len(self._planners) != 1:
                raise ValueError(f"this pipeline plans for {len(self._planners)} environments; use planner_for(name)")
            return next(iter(self._planners.values()))

    def use_planner(self, environment: str, planner: Planner) -> None:
        """Plan an environment's variants with `planner` (kept while its graph is the environment's)."""
        with self._lock:
            self._planners[environment] = planner

    def planner_for(self, environment: str, seeds: Sequence[Task] = ()) -> Planner:
        """The planner of an environment, over its API graph: the graph given to the pipeline if it covers the
        environment's classes, else `rods.synth.api_graph.graph_for`."""
        with self._lock:
            planner = self._planners.get(environment)
            graph = self._graph if self._covers(environment, seeds) else graph_for(environment, seeds)
            if planner is None or planner.graph is not graph:
                planner = self._planners[environment] = Planner(
                    self.backend, graph, PlannerConfig(candidates=self.config.candidates,
                                                       narrative=self.config.narrative,
                                                       same_counts=self.config.same_counts,
                                                       seed_function_weight=self.config.seed_function_weight,
                                                       skill_overlap=self.config.skill_overlap))
            return planner

    def _covers(self, environment: str, seeds: Sequence[Task]) -> bool:
        """Whether the graph given to the pipeline (if any) has a node for every function of the environment."""
        if self._graph is None:
            return False
        classes = {c for s in seeds if s.environment == environment for c in s.involved_classes}
        if not classes:
            known = self._planners.get(environment)
            return known is not None and known.graph is self._graph
        return all(f in self._graph.nodes for f in function_names(sorted(classes)))

    def admit(self, seeds: Sequence[Task], where: Mapping[str, str] | None = None) -> list[Task]:
        """The seeds that pass validation (`rods.envs.validation`), in order.

        A seed is checked once per pipeline; a failing one is rejected then: each
        failure logged as one line (prefixed with `where[seed.id]`, e.g. its
        file and line, if given) and counted in the report (`seed:<kind>`
        rejections, `invalid_seeds`).
        """
        out = []
        for seed in seeds:
            key = (seed.id, content_hash(seed))
            with self._lock:
                known = self._seed_valid.get(key)
            if known is None:
                failures = validate_task(seed)
                known = not failures
                with self._lock:
                    if key not in self._seed_valid:
                        self._seed_valid[key] = known
                        for failure in failures:
                            logger.warning("seed rejected: %s", describe(failure, seed.id, (where or {}).get(seed.id)))
                        if failures:
                            self.stats.invalid_seeds += 1
                            self.stats.rejections[f"seed:{failures[0].kind}"] += 1
            if known:
                out.append(seed)
        return out

    def synthesize(self, seeds: list[Task], progress: Callable[[int], None] | None = None) -> list[Task]:
        """Variants of every valid seed (`admit`) that pass the gate, in seed order."""
        start = time.perf_counter()
        admitted = self.admit(seeds)
        if progress and len(admitted) < len(seeds):
            progress(len(seeds) - len(admitted))
        seeds = admitted
        with self._lock:
            self._calls += 1  # each batch draws new random streams
        for environment in sorted({s.environment for s in seeds}):
            for member in self.members:  # learn (or grow) each environment's graph from these seeds
                member.planner_for(environment, [s for s in seeds if s.environment == environment])
        with ThreadPoolExecutor(max_workers=max(1, self.config.workers)) as pool:
            futures = [pool.submit(self._seed, seed) for seed in seeds]
            out: list[Task] = []
            for fut in futures:
                accepted, stats = fut.result()
                with self._lock:
                    self.stats.merge(stats)
                out.extend(accepted)
                if progress:
                    progress(1)
        self.stats.seconds += time.perf_counter() - start
        return out

    # ------------------------------------------------------------ one seed

    def _seed(self, seed: Task) -> tuple[list[Task], SynthStats]:
        stats = SynthStats(seeds=1)
        accepted = []
        base = random.Random(f"{self.config.seed}:{seed.id}:{self._calls}")
        for v in range(self.config.per_seed):
            stats.variants += 1
            which = self.router.pick()
            member = self.members[which]
            stats.tried_by[member.name] += 1
            try:
                task = member._variant(seed, v, random.Random(base.randrange(2**63)), stats)
            except Rejected as rej:
                stats.rejections[rej.reason] += 1
                continue
            except LLMError as err:
                stats.rejections[f"llm_error:{err.purpose or '?'}:{err.kind}"] += 1
                continue
            except Exception as err:  # a bug must not stop the batch; count it loudly
                logger.exception("synthesis of a variant of %s failed", seed.id)
                stats.rejections[f"internal_error:{type(err).__name__}"] += 1
                continue
            accepted.append(task)
            stats.accepted += 1
            stats.accepted_by[member.name] += 1
            stats.accepted_strategies[task.provenance.strategy or "replan"] += 1
            self.router.record(which, True)
        return accepted, stats

    def _variant(self, seed: Task, index: int, rng: random.Random, stats: SynthStats,
                 may_augment: bool = True) -> Task:
        """One variant through every stage; raises `Rejected` (or `LLMError`) with the reason."""
        cfg = self.config
        episode = slice_source(seed)
        if episode is not None:
            return self._slice_variant(seed, episode, index, rng, stats)
        if self._recasts(seed, rng, stats):
            try:
                recast = self._recast(seed, index, rng, stats)
            except Rejected as rej:
                if self.planner_for(seed.environment).can_recast(seed):
                    raise
                # the seed's errand fit none of the counterparts tried: re-planned, so that it has variants
                stats.counterpart_fallbacks[rej.reason] += 1
            else:
                if recast is not None:
                    return recast
                # nothing of the seed's own could change (its ids are the environment's, its amount the only one
                # its seeds show): re-planned, as a seed with nothing to recast is
                stats.recast_unavailable += 1
        stats.strategies["replan"] += 1
        seed_profile = self.planner_for(seed.environment).analyze(seed).profile
        plan, execution, attempts = self._plan_and_execute(seed, index, rng, seed_profile, stats)
        expected = seed_profile
        augmented = None
        if (may_augment and cfg.augment > 0 and cfg.rewrite and seed.task_type == "basic"
                and rng.random() < cfg.augment):
            stats.attempts["augment"] += 1
            kind = rng.choice(AUGMENT_KINDS)
            result = augment(plan, execution, rng, kind)
            if result is None:
                raise Rejected(f"augment:no_room_for_{kind}")
            plan, execution = result
            expected, augmented = expected_profile(seed_profile, plan.seed), kind
            stats.passed["augment"] += 1
        task = self._candidate(seed, plan, execution, index, attempts)
        if augmented:
            task.provenance.augmented = augmented
        task = self._rewrite_and_judge(task, plan, execution, stats)
        stats.attempts["gate"] += 1
        self.gate.check(seed, task, expected)
        stats.passed["gate"] += 1
        return task

    def _recasts(self, seed: Task, rng: random.Random, stats: SynthStats) -> bool:
        """Whether this variant is a recast (`SynthConfig.recast`, the share of variants that are).

        Drawn from a stream of the variant's own random state, not from it, so
        a re-planned variant draws what it drew before recasts existed (with
        `recast` 0 the pipeline's output is as it was). A seed a recast would
        not change (`Planner.can_recast`: its state is the environment's own) is
        recast for a counterpart where it has one (`Planner.has_counterparts`),
        else re-planned, counted in `recast_unavailable`.
        """
        share = self.recast_share
        if share <= 0 or (share < 1 and random.Random(str(rng.getstate()[1][:16])).random() >= share):
            return False
        planner = self.planner_for(seed.environment)
        if not planner.can_recast(seed) and not planner.has_counterparts(seed):
            stats.recast_unavailable += 1
            return False
        return True

    @property
    def recast_share(self) -> float:
        """`SynthConfig.recast`, or when unset 1 with the template backend (its re-planned requests are parts put
        together) and 0.5 with a model that writes requests."""
        if self.config.recast is not None:
            return self.config.recast
        return 1.0 if self.backend.name == "template" else 0.5

    def _recast(self, seed: Task, index: int, rng: random.Random, stats: SynthStats) -> Task | None:
        """A recast variant (`rods.synth.recast`): the seed's plan and words in a new world, through every check
        (execution, coherence, the judge, the gate). No model writes anything, so the judge gives no model's
        verdict: the words are the seed's. Any rejection is counted as `recast:<why>`, never re-planned; None
        where the recast came out as its seed (nothing of the seed's own could change), which `_variant`
        re-plans and which is no recast tried."""
        stats.strategies["recast"] += 1
        for attempt in range(1, RECAST_TRIES + 1):
            try:
                return self._recast_checked(seed, index, rng, stats)
            except Rejected as rej:
                if rej.reason == "unchanged":
                    stats.strategies["recast"] -= 1  # not tried: there was nothing to recast
                    return None
                if rej.reason.startswith(("execution:", "merged_records")) and attempt < RECAST_TRIES:
                    # the environment refused the values drawn (a party of 40 in a room for 24), or two records
                    # came out with one key: draw again
                    continue
                raise Rejected(rej.reason if rej.reason.startswith("recast:") else f"recast:{rej.reason}") from None
        raise AssertionError("unreachable")

    def _recast_checked(self, seed: Task, index: int, rng: random.Random, stats: SynthStats) -> Task:
        planner = self.planner_for(seed.environment)
        info = planner.analyze(seed)
        stats.attempts["plan"] += 1
        if planner.can_recast(seed):
            plan = planner.recast(seed, rng=rng)
            state = state_mapping(info.base_config, plan.initial_config)
            pairs = [pair for cls, value in info.base_config.items()
                     for pair in paired(value, plan.initial_config.get(cls))]
            execution = run_recast(self.executor, plan, info.trace, state)
        else:
            plan, state, pairs, execution = self._counterpart(seed, rng)
        stats.passed["plan"] += 1
        stats.attempts["execute"] += 1
        if execution.failure is not None:
            raise Rejected(f"{execution.failure.kind}:{execution.failure.function}")
        if moved_flows(info.trace.calls, execution.calls, plan.calls, state):
            raise Rejected("moved_flow")
        candidate = self._candidate(seed, plan, execution, index, 1, strategy="recast")
        trace = trace_task(candidate)
        mismatches = info.profile.mismatches(profile_of(candidate, trace), same_counts=self.config.same_counts)
        if mismatches:
            raise Rejected("profile_mismatch:" + ",".join(mismatches))
        if hollow_reads(info.trace, trace):
            raise Rejected("read_finds_nothing")
        judged, violations = self._seed_checks(seed, plan)
        pairs = argument_pairs(info.trace.calls, execution.calls) + pairs
        said = [message_text(seed.question), *violations,
                *(f for v in (judged.verdicts if judged else {}).values() for f in v.failures)]
        mentions = Mentions.of(pairs, plan.remapper.people, plan.remapper.vocabulary, "\n".join(said))

        def translate(text: str) -> str:
            return mentions.apply(text)[0]

        broken = self._incoherent(plan, candidate, beside={translate(v) for v in violations})
        if broken:
            raise Rejected(f"coherence:{broken.kind}")
        stats.passed["execute"] += 1
        stats.attempts["recast"] += 1
        question = recast_question([[m.model_dump() for m in turn] for turn in seed.question], mentions)
        task = Task.model_validate({**candidate.model_dump(), "question": question})
        if (task.question, task.ground_truth) == (seed.question, seed.ground_truth):
            # the seed's errand word for word and call for call, only the world around it moved (its dates): no
            # new task, re-planned as a seed with nothing of its own to change
            raise Rejected("unchanged")
        stats.passed["recast"] += 1
        if judged is not None:
            turns = turn_contexts(plan, execution, planner.graph.phrasings)
            task = self._judged(task, plan, execution, turns, stats, seed=judged, translate=translate)
        stats.attempts["gate"] += 1
        self.gate.check(seed, task, info.profile)
        stats.passed["gate"] += 1
        return task

    def _counterpart(self, seed: Task, rng: random.Random) -> tuple[Plan, dict, list, Execution]:
        """The first of `COUNTERPARTS_TRIED` counterparts (`Planner.counterparts`) whose calls run as the seed's
        (a call meant to fail fails): its plan, state mapping, value pairs and run; the last run where none does."""
        tried = None
        for plan, mapping in itertools.islice(self.planner_for(seed.environment).counterparts(seed, rng=rng),
                                              COUNTERPARTS_TRIED):
            pairs = [(json.loads(old), new) for old, new in mapping.items()]
            state = {key: new for old, new in pairs if (key := value_key(old)) is not None}
            tried = (plan, state, pairs, self.executor.run(plan))
            if tried[3].failure is None:
                return tried
        if tried is None:
            raise Rejected("unchanged")  # no counterpart: re-planned, as a seed with nothing to recast
        return tried

    def _slice_variant(self, seed: Task, episode: Task, index: int, rng: random.Random,
                       stats: SynthStats) -> Task:
        """A variant of a turn slice: the same turn of a variant of the episode it was cut from (§4.10).

        The episode (turns 0..t of the slice's source) goes through every stage
        as any seed, so the variant's history is new too (narrative, calls,
        values, state) and its earlier turns' queries are written with its
        last; then it is sliced at t and the slice passes the gate against the
        seed slice. Augmentation is off: it would move the turns.
        """
        turn = seed.provenance.slice_turn  # type: ignore[attr-defined]
        full = self._variant(episode, index, rng, stats, may_augment=False)
        stats.attempts["slice"] += 1
        piece = turn_slice(full, turn, slice_id=full.id)
        if piece is None:
            raise Rejected("slice:no_call_at_turn")
        piece.provenance.parent_id = seed.id
        self.gate.check(seed, piece, self.planner_for(seed.environment).analyze(seed).profile)
        stats.passed["slice"] += 1
        return piece

    def _plan_and_execute(self, seed: Task, index: int, rng: random.Random, seed_profile: ComplexityProfile,
                          stats: SynthStats) -> tuple[Plan, Execution, int]:
        """Plan, run, patch or re-plan until a run keeps Φ; at most `max_attempts` runs.

        A failing function is blacklisted at its position for the re-plan (and
        remembered for later variants of the seed); so are planned functions the
        executor had to replace by an alternative.
        """
        cfg = self.config
        planner = self.planner_for(seed.environment)
        blacklist: set[tuple[int, str]] = set()
        patched: set[str] = set()
        plan: Plan | None = None
        last = "no attempt"
        replan = True
        blind = not cfg.feedback_repair  # no_feedback_repair ablation: blind re-sampling, no feedback (lang)
        for attempts in range(1, cfg.max_attempts + 1):
            if replan:
                stats.attempts["plan"] += 1
                plan = planner.plan(seed, rng=rng, attempt=attempts,
                                    blacklist=frozenset() if blind else frozenset(blacklist))
                stats.passed["plan"] += 1
            stats.attempts["execute"] += 1
            execution = self.executor.run(plan)
            for position, function in [] if blind else execution.fallbacks:
                planner.remember_failure(seed, function, position)
                blacklist.add((position, function))
            if execution.ok:
                candidate = self._candidate(seed, plan, execution, index, attempts)
                variant_profile = profile_of(candidate)
                matches = variant_profile.matches(seed_profile, same_counts=cfg.same_counts)
                broken = self._incoherent(plan, candidate) if matches else None
                unsaid = matches and not broken and not self._can_leave_out(plan, execution)
                if matches and not broken and not unsaid:
                    stats.passed["execute"] += 1
                    return plan, execution, attempts
                if unsaid:
                    # a miss_param turn must leave a value out that the user says next: with every value of its
                    # calls taken from results there is none, and the two turns would ask the same thing
                    last = "miss_param:nothing_to_leave_out"
                    asked = {t + 1 for t in range(plan.seed.num_turns - 1) if not plan.seed.ground_truth[t]}
                    for j, call in enumerate(plan.calls):
                        if call.turn in asked:
                            blacklist.add((j, call.name))
                    replan = True
                    continue
                if broken:  # re-plan around the call that broke a rule (any position for task-wide rules)
                    last = f"coherence:{broken.kind}"
                    if broken.call >= 0:
                        blacklist.add((broken.call, plan.calls[broken.call].name))
                        planner.remember_failure(seed, plan.calls[broken.call].name, broken.call)
                    if broken.turn:  # a turn apart: another function at each of its calls
                        turn = plan.calls[broken.call].turn
                        blacklist.update((j, c.name) for j, c in enumerate(plan.calls) if c.turn == turn)
                    replan = True
                    continue
                last = "profile_mismatch:" + ",".join(seed_profile.mismatches(variant_profile,
                                                                             same_counts=cfg.same_counts))
                blacklist.update((j, c.name) for j, c in enumerate(plan.calls) if c.name != c.original)
                replan = True
                continue
            failure = execution.failure
            last = f"{failure.kind}:{failure.function}"
            if blind:  # (lang) the ablation: no failure memory, no patch; the next attempt re-samples
                replan = True
                continue
            planner.remember_failure(seed, failure.function, failure.index)
            patch = self.executor.patch(plan, execution) if cfg.feedback_repair else None
            kind = patch.split(":")[-1].strip().split(" ")[0] if patch else None
            if patch and kind not in patched:  # the same repair twice would not help
                patched.add(kind)
                stats.patches[kind] += 1
                replan = False
            else:
                blacklist.add((failure.index, failure.function))  # re-plan around the failing function
                patched = set()
                replan = True
        raise Rejected(last)

    def _rewrite_and_judge(self, task: Task, plan: Plan, execution: Execution, stats: SynthStats) -> Task:
        """Write the queries (jointly, or each turn on its own), judge them; a query fault goes back once.

        A rewrite answer of the wrong shape fails its reply model: after the
        backend's repairs it is a counted rejection (``llm_error:rewrite``).
        """
        cfg = self.config
        turns = turn_contexts(plan, execution, self.planner_for(plan.seed.environment).graph.phrasings)
        stats.attempts["rewrite"] += 1
        if cfg.rewrite:
            queries = self.rewriter.rewrite(plan, execution, turns=turns)
        else:
            queries = self.rewriter.rewrite_each(plan, execution, turns=turns)
        task = Task.model_validate({**task.model_dump(), "question": with_queries(plan.seed, queries)})
        stats.passed["rewrite"] += 1
        if not cfg.judge:
            return task
        return self._judged(task, plan, execution, turns, stats)

    def _judged(self, task: Task, plan: Plan, execution: Execution, turns: list[dict[str, Any]], stats: SynthStats,
                seed: Judgement | None = None, translate: Callable[[str], str] = str) -> Task:
        """The judge's verdicts on a written task; a query fault goes back to the rewriter once, any fault left
        rejects. A recast (`seed`: its seed's judgement) is judged without the backend's verdict, beside its seed
        (`Judgement.beside`, the seed's values `translate`d to its own), and has no rewriter to go back to."""
        cfg = self.config
        stats.attempts["judge"] += 1
        rules = self.coherence_for(plan.seed) if cfg.coherence else None
        judgement = self.judge.judge(task, execution, turns, rules, plan.seed, ask=seed is None)
        if seed is not None:
            judgement = judgement.beside(seed, translate)
        elif judgement.fault == "query" and cfg.rewrite and cfg.feedback_repair:
            queries = self.rewriter.rewrite(plan, execution, feedback=judgement.failed_reasons(), turns=turns)
            task = Task.model_validate({**task.model_dump(), "question": with_queries(plan.seed, queries)})
            judgement = self.judge.judge(task, execution, turns, rules, plan.seed)
        if not judgement.passed:
            reason = judgement.failed_reasons()[0].split(":")
            if reason[0] == "coherence":  # counted by rule: judge:coherence:<rule>
                raise Rejected(f"judge:coherence:{reason[1].strip()}")
            raise Rejected(f"judge:{judgement.fault}:{reason[0]}")
        stats.passed["judge"] += 1
        task.provenance.verdicts = judgement.to_dict()
        return task

    def _seed_checks(self, seed: Task, plan: Plan) -> tuple[Judgement | None, list[str]]:
        """What a recast of `seed` (`plan`: one of them) is held to, computed once per seed: the judge's verdicts
        on the seed as on its recasts (None without the judge) and the coherence rules its ground truth breaks
        itself (`_incoherent`): a recast fails only where its seed does not (`Judgement.beside`)."""
        key = (seed.id, content_hash(seed))
        with self._lock:
            known = self._seed_judgements.get(key)
        if known is None:
            planner = self.planner_for(seed.environment)
            info = planner.analyze(seed)
            judged = None
            if self.config.judge:
                own = as_seed(plan, info.trace, info.base_config)
                execution = Execution(calls=list(info.trace.calls), results=list(info.trace.results),
                                      ground_truth=[list(turn) for turn in seed.ground_truth])
                turns = turn_contexts(own, execution, planner.graph.phrasings)
                rules = self.coherence_for(seed) if self.config.coherence else None
                judged = self.judge.judge(seed, execution, turns, rules, seed, ask=False)
            broken = (self.coherence_for(seed).violations(seed, seed=seed, kinds=PLAN_KINDS, queries=False)
                      if self.config.coherence else [])
            known = (judged, [str(v) for v in broken])
            with self._lock:
                self._seed_judgements[key] = known
        return known

    def coherence_for(self, seed: Task) -> Coherence:
        """The coherence rules of a seed's environment, with the flows its API graph saw in human seeds."""
        graph = self.planner_for(seed.environment).graph
        key = (seed.environment, id(graph))
        with self._lock:
            rules = self._coherence.get(key)
            if rules is None:
                classes = sorted({n.api_class for n in graph.nodes.values()} | set(seed.involved_classes))
                rules = self._coherence[key] = Coherence(seed.environment, classes, graph.flows)
            return rules

    @staticmethod
    def _can_leave_out(plan: Plan, execution: Execution) -> bool:
        """Whether a miss_param variant has a value its under-specified turn can leave out (other tasks: True)."""
        if plan.seed.category != "miss_param" or not any(not gt for gt in plan.seed.ground_truth[:-1]):
            return True
        return any(t["kind"] == "ask_missing" for t in turn_contexts(plan, execution))

    def _incoherent(self, plan: Plan, candidate: Task, beside: Set[str] = frozenset()) -> Violation | None:
        """The first coherence rule a ground truth breaks before its queries exist (`PLAN_KINDS`), if any; `beside`:
        what its seed breaks itself (a recast's, as it reads with the recast's values), which does not count."""
        if not self.config.coherence:
            return None
        broken = self.coherence_for(plan.seed).violations(candidate, seed=plan.seed, kinds=PLAN_KINDS, queries=False)
        broken = [v for v in broken if str(v) not in beside]
        return broken[0] if broken else None

    def _candidate(self, seed: Task, plan: Plan, execution: Execution, index: int, attempts: int,
                   strategy: str = "replan") -> Task:
        gen = seed.provenance.generation + self.config.generation_offset
        layout = plan.seed  # the seed itself, or the augmenter's skeleton
        root = seed.id.split("__syn")[0]  # variants of variants keep short ids
        return Task(
            id=f"{root}__syn{gen}_{plan.rng_seed:08x}_{index}",
            category=layout.category,
            environment=seed.environment,
            question=[[m.model_dump() for m in q] for q in layout.question],
            initial_config=json.loads(json.dumps(plan.initial_config)),
            involved_classes=list(seed.involved_classes),
            ground_truth=execution.ground_truth,
            missed_function=plan.missed_function,
            expected_errors=_expected_errors(plan),
            provenance=Provenance(
                origin="synthetic", parent_id=seed.id, generation=gen, step_created=self.config.step_created,
                narrative=plan.narrative, backend=self.name, attempts=attempts, strategy=strategy,
                substitutions={str(k): v for k, v in plan.substitutions.items()},
            ),
        )

    def report(self) -> dict[str, Any]:
        """Per-stage statistics, the LLM accounting per accepted task, and each backbone's acceptance."""
        llm = per_accepted(merge_snapshots([m.backend.stats.snapshot() for m in self._distinct_backends()]),
                            self.stats.accepted)
        out = self.stats.to_dict(llm)
        for member in self.members:
            if len(self.members) > 1 and member.name in out["backbones"]:
                out["backbones"][member.name]["llm"] = per_accepted(member.backend.stats.snapshot(),
                                                                     self.stats.accepted_by[member.name])
        # model answers that named unknown functions or config keys: ignored, counted here
        planners = [p for m in self.members for p in m._planners.values()]
        out["invalid_answers"] = {"plan.sequence": sum(p.invalid_proposals for p in planners),
                                  "plan.arguments": sum(p.invalid_arguments for p in planners),
                                  "plan.arguments.out_of_domain": sum(p.out_of_domain_arguments for p in planners),
                                  "config_patch": sum(m.executor.invalid_patches for m in self.members)}
        out["routing"] = self.config.routing if len(self.members) > 1 else None
        return out

    def _distinct_backends(self) -> list[Pipeline]:
        seen, out = set(), []
        for member in self.members:
            if id(member.backend) not in seen:
                seen.add(id(member.backend))
                out.append(member)
        return out


_DEFAULT: Pipeline | None = None
_DEFAULT_LOCK = threading.Lock()


def synthesize(seeds: list[Task], backend: LLMBackend | None = None, config: SynthConfig | None = None) -> list[Task]:
    """A plain, picklable `seeds -> accepted tasks` function (for the data engine's worker).

    Without arguments it uses one pipeline per process (template backend), so
    repeated calls keep drawing new variants and never repeat an accepted one.
    """
    global _DEFAULT
    if backend is not None or config is not None:
        if backend is None:
            from rods.llm import make_backend

            backend = make_backend("template")
        return Pipeline(backend, config)(seeds)
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            from rods.llm import make_backend

            _DEFAULT = Pipeline(make_backend("template"))
    return _DEFAULT(seeds)


def _expected_errors(plan: Plan) -> dict[str, list[int]]:
    """`Task.expected_errors` of a plan's task: the calls meant to fail (`PlannedCall.fails`, a recast's of its
    seed's), by turn and index within the turn."""
    out: dict[str, list[int]] = {}
    counts: dict[int, int] = {}
    for call in plan.calls:
        index = counts.get(call.turn, 0)
        counts[call.turn] = index + 1
        if call.fails:
            out.setdefault(str(call.turn), []).append(index)
    return out
