"""The synthesis pipeline: seeds in, verified variants out (docs/design.md §4.7).

For each seed and variant: plan -> execute (Config Patch, re-plan with the
failing function blacklisted; at most `max_attempts` runs) -> rewrite -> judge
(a query fault goes back to the rewriter once; a ground-truth fault discards)
-> optional augment -> the validation gate. Seeds run concurrently in threads.

The gate (every accepted task passes it): its ground truth replays on a fresh
environment without errors; it scores RP = 1 and binary = 1 with
`rods.reward.score`; its profile Φ matches the seed's; it copies no
distinctive value of the seed (`rods.synth.values`); no other accepted task
has the same content hash.

`Pipeline(...)` is callable: `synthesize(seeds) -> accepted tasks`, the plain
callable the data engine's worker uses. Given several backends it is an
ensemble: one set of stages per backbone, each variant written by the one a
:class:`~rods.synth.ensemble.Router` picks (`SynthConfig.routing`); the report
gives every backbone's tried / accepted / acceptance rate.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any

from rods.llm.base import LLMBackend, LLMError
from rods.llm.stats import merge_snapshots, per_accepted
from rods.synth.api_graph import APIGraph, default_graph
from rods.synth.augmenter import KINDS as AUGMENT_KINDS, augment, expected_profile
from rods.synth.ensemble import ROUTINGS, Router, backbone_names
from rods.synth.executor import Execution, Executor
from rods.synth.judge import Judge
from rods.synth.planner import Plan, Planner, PlannerConfig
from rods.synth.profile import ComplexityProfile, environment_made, profile_of, trace_task
from rods.synth.rewriter import Rewriter, turn_contexts, with_queries
from rods.synth.values import is_distinctive, leaves
from rods.tasks.model import Provenance, Task

logger = logging.getLogger(__name__)

STAGES = ("plan", "execute", "rewrite", "judge", "augment", "gate")


@dataclass
class SynthConfig:
    """Pipeline settings (paper defaults; the switches give the ablations).

    Attributes:
        per_seed: variants attempted per seed.
        max_attempts: plan/execute runs per variant (paper: 3).
        rewrite: write all turns' queries in one call that sees the whole plan
            and the narrative (off: the paper's no-rewrite ablation: each turn's
            query written on its own, one call per turn, no narrative).
        narrative: the planner's narrative (off: the no-narrative ablation).
        feedback_repair: error feedback to the planner (blacklist, failure
            memory), Config Patches and judge->rewrite repair (off: the paper's
            no-feedback-repair ablation: the same `max_attempts`, each a blind
            re-sample with a fresh random stream, no patch, no repair).
        judge: the Judge stage.
        augment: turn accepted variants into miss_func / miss_param variants
            ("none", or the probability of trying one).
        candidates: graph-valid call sequences the planner offers the backend per plan.
        same_counts: keep the seed's calls per turn (False: a variant may drop one
            read call without data-flow edges; Φ then matches on topology, depth,
            turns and categories, not on call counts).
        workers: seeds synthesized concurrently.
        routing: with several backends, how each variant's backbone is picked:
            "round_robin" or "acceptance" (`rods.synth.ensemble`).
        seed: base of every variant's random stream.
        generation_offset: added to the seed's generation for the variants.
    """

    per_seed: int = 1
    max_attempts: int = 3
    rewrite: bool = True
    narrative: bool = True
    feedback_repair: bool = True
    judge: bool = True
    augment: float = 0.0
    candidates: int = 4
    same_counts: bool = True
    workers: int = 2
    routing: str = "round_robin"
    seed: int = 0
    generation_offset: int = 1
    step_created: int | None = None

    def __post_init__(self) -> None:
        if self.per_seed < 1 or self.max_attempts < 1 or self.workers < 1 or self.candidates < 1:
            raise ValueError("SynthConfig: per_seed, max_attempts, workers and candidates must be >= 1")
        if self.routing not in ROUTINGS:
            raise ValueError(f"SynthConfig: routing must be one of {list(ROUTINGS)}, got {self.routing!r}")
        if not 0.0 <= self.augment <= 1.0:
            raise ValueError(f"SynthConfig: augment must be a probability in [0, 1], got {self.augment}")

    @classmethod
    def ablation(cls, name: str, **kw: Any) -> SynthConfig:
        """`no_rewrite`, `no_narrative` or `no_feedback_repair` (docs/design.md §7.1)."""
        switches = {"no_rewrite": {"rewrite": False}, "no_narrative": {"narrative": False},
                    "no_feedback_repair": {"feedback_repair": False}}
        if name not in switches:
            raise ValueError(f"unknown ablation {name!r}; choose one of {sorted(switches)}")
        return cls(**{**switches[name], **kw})


@dataclass
class SynthStats:
    """Per-stage counters over a run."""

    seeds: int = 0
    variants: int = 0
    accepted: int = 0
    attempts: Counter = field(default_factory=Counter)  # stage -> runs
    passed: Counter = field(default_factory=Counter)  # stage -> passes
    rejections: Counter = field(default_factory=Counter)  # reason -> count
    patches: Counter = field(default_factory=Counter)
    tried_by: Counter = field(default_factory=Counter)  # backbone -> variants it wrote
    accepted_by: Counter = field(default_factory=Counter)  # backbone -> variants accepted
    seconds: float = 0.0

    def merge(self, other: SynthStats) -> None:
        self.seeds += other.seeds
        self.variants += other.variants
        self.accepted += other.accepted
        for name in ("attempts", "passed", "rejections", "patches", "tried_by", "accepted_by"):
            getattr(self, name).update(getattr(other, name))

    def backbones(self) -> dict[str, dict[str, Any]]:
        """Per backbone: variants tried, accepted, and its acceptance rate."""
        return {name: {"tried": n, "accepted": self.accepted_by[name], "acceptance_rate": self.accepted_by[name] / n}
                for name, n in sorted(self.tried_by.items()) if n}

    def to_dict(self, llm: dict[str, Any] | None = None) -> dict[str, Any]:
        out = asdict(self)
        for key in ("attempts", "passed", "rejections", "patches"):
            out[key] = dict(getattr(self, key))
        del out["tried_by"], out["accepted_by"]
        out["backbones"] = self.backbones()
        out["pass_rate"] = {s: self.passed[s] / self.attempts[s] for s in self.attempts if self.attempts[s]}
        out["acceptance_rate"] = self.accepted / self.variants if self.variants else 0.0
        if llm is not None:
            out["llm"] = llm
        return out


class Rejected(Exception):
    """A variant left the pipeline; `reason` is the counted rejection reason."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def content_hash(task: Task) -> str:
    """Hash of what makes a task itself: questions, ground truth, config, held-out functions."""
    body = json.dumps([task.model_dump(mode="json", include={"question", "ground_truth", "initial_config",
                                                              "missed_function"})], sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def copied_values(seed: Task, variant: Task, produced: set[str] = frozenset()) -> list[Any]:
    """Distinctive seed values that reappear verbatim in the variant's arguments or config.

    Values are compared as JSON text; the class names of the config are not
    values. `produced` holds (as JSON) values that come from the simulator, not
    from the seed: what the variant's own calls returned (a shop address, a
    computed price) and the long-context filler the simulator loads itself.
    """
    from rods.synth.profile import call_values, parse_ground_truth

    def cfg(task: Task) -> set[str]:
        return {json.dumps(v) for value in task.initial_config.values() for v in leaves(value)}

    seed_args = {json.dumps(v) for turn in parse_ground_truth(seed) for c in turn for v in call_values(c)
                 if is_distinctive(v)}
    seed_cfg = {json.dumps(v) for value in seed.initial_config.values() for v in leaves(value) if is_distinctive(v)}
    var_args = {json.dumps(v) for turn in parse_ground_truth(variant) for c in turn for v in call_values(c)}
    return sorted(((seed_args & var_args) | (seed_cfg & cfg(variant))) - set(produced))


def produced_values(trace) -> set[str]:
    """JSON texts of every scalar in a trace's results."""
    from rods.synth.profile import result_value, value_paths

    return {json.dumps(v) for r in trace.results for _, v in value_paths(result_value(r))}


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
        self.graph = graph or default_graph()
        self.planner = Planner(backend, self.graph, PlannerConfig(candidates=self.config.candidates,
                                                                   narrative=self.config.narrative,
                                                                   same_counts=self.config.same_counts))
        self.executor = Executor(backend, llm_patches=self.config.feedback_repair)
        self.rewriter = Rewriter(backend)
        self.judge = Judge(backend)
        self.stats = SynthStats()
        self._lock = threading.Lock()
        self._hashes: set[str] = set()
        self._calls = 0
        # an ensemble: one set of stages per further backbone, sharing the duplicate check
        self.members: list[Pipeline] = [self]
        for other in backends[1:]:
            member = Pipeline(other, self.config, self.graph)
            member._lock, member._hashes = self._lock, self._hashes
            self.members.append(member)
        for member, name in zip(self.members, backbone_names([b.describe() for b in backends])):
            member.name = name
        self.router = Router(len(self.members), self.config.routing, seed=self.config.seed)

    def __call__(self, seeds: list[Task]) -> list[Task]:
        return self.synthesize(seeds)

    def synthesize(self, seeds: list[Task], progress: Callable[[int], None] | None = None) -> list[Task]:
        """Variants of every seed that pass the gate, in seed order."""
        start = time.perf_counter()
        with self._lock:
            self._calls += 1  # each batch draws new random streams
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
            self.router.record(which, True)
        return accepted, stats

    def _variant(self, seed: Task, index: int, rng: random.Random, stats: SynthStats) -> Task:
        """One variant through every stage; raises `Rejected` (or `LLMError`) with the reason."""
        cfg = self.config
        seed_profile = self.planner.analyze(seed).profile
        plan, execution, attempts = self._plan_and_execute(seed, index, rng, seed_profile, stats)
        expected = seed_profile
        augmented = None
        if cfg.augment > 0 and cfg.rewrite and seed.task_type == "basic" and rng.random() < cfg.augment:
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
        self._gate(seed, task, expected)
        stats.passed["gate"] += 1
        return task

    def _plan_and_execute(self, seed: Task, index: int, rng: random.Random, seed_profile: ComplexityProfile,
                          stats: SynthStats) -> tuple[Plan, Execution, int]:
        """Plan, run, patch or re-plan until a run keeps Φ; at most `max_attempts` runs.

        A failing function is blacklisted at its position for the re-plan (and
        remembered for later variants of the seed); so are planned functions the
        executor had to replace by an alternative.
        """
        cfg = self.config
        blacklist: set[tuple[int, str]] = set()
        patched: set[str] = set()
        plan: Plan | None = None
        last = "no attempt"
        replan = True
        blind = not cfg.feedback_repair  # no_feedback_repair ablation: blind re-sampling, no feedback (lang)
        for attempts in range(1, cfg.max_attempts + 1):
            if replan:
                stats.attempts["plan"] += 1
                plan = self.planner.plan(seed, rng=rng, attempt=attempts,
                                         blacklist=frozenset() if blind else frozenset(blacklist))
                stats.passed["plan"] += 1
            stats.attempts["execute"] += 1
            execution = self.executor.run(plan)
            for position, function in [] if blind else execution.fallbacks:
                self.planner.remember_failure(seed, function, position)
                blacklist.add((position, function))
            if execution.ok:
                variant_profile = profile_of(self._candidate(seed, plan, execution, index, attempts))
                if variant_profile.matches(seed_profile, same_counts=cfg.same_counts):
                    stats.passed["execute"] += 1
                    return plan, execution, attempts
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
            self.planner.remember_failure(seed, failure.function, failure.index)
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
        turns = turn_contexts(plan, execution)
        stats.attempts["rewrite"] += 1
        if cfg.rewrite:
            queries = self.rewriter.rewrite(plan, execution, turns=turns)
        else:
            queries = self.rewriter.rewrite_each(plan, execution, turns=turns)
        task = Task.model_validate({**task.model_dump(), "question": with_queries(plan.seed, queries)})
        stats.passed["rewrite"] += 1
        if not cfg.judge:
            return task
        stats.attempts["judge"] += 1
        judgement = self.judge.judge(task, execution, turns)
        if judgement.fault == "query" and cfg.rewrite and cfg.feedback_repair:
            queries = self.rewriter.rewrite(plan, execution, feedback=judgement.failed_reasons(), turns=turns)
            task = Task.model_validate({**task.model_dump(), "question": with_queries(plan.seed, queries)})
            judgement = self.judge.judge(task, execution, turns)
        if not judgement.passed:
            raise Rejected(f"judge:{judgement.fault}:{judgement.failed_reasons()[0].split(':')[0]}")
        stats.passed["judge"] += 1
        task.provenance.verdicts = judgement.to_dict()
        return task

    def _candidate(self, seed: Task, plan: Plan, execution: Execution, index: int, attempts: int) -> Task:
        gen = seed.provenance.generation + self.config.generation_offset
        layout = plan.seed  # the seed itself, or the augmenter's skeleton
        root = seed.id.split("__syn")[0]  # variants of variants keep short ids
        return Task(
            id=f"{root}__syn{gen}_{plan.rng_seed:08x}_{index}",
            category=layout.category,
            question=[[m.model_dump() for m in q] for q in layout.question],
            initial_config=json.loads(json.dumps(plan.initial_config)),
            involved_classes=list(seed.involved_classes),
            ground_truth=execution.ground_truth,
            missed_function=plan.missed_function,
            provenance=Provenance(
                origin="synthetic", parent_id=seed.id, generation=gen, step_created=self.config.step_created,
                narrative=plan.narrative, backend=self.name, attempts=attempts,
                substitutions={str(k): v for k, v in plan.substitutions.items()},
            ),
        )

    def _gate(self, seed: Task, task: Task, seed_profile) -> None:
        from rods.reward import score

        trace = trace_task(task)
        if trace.errors:
            raise Rejected("gate:replay_error")
        result = score(task, [[list(turn)] if turn else [] for turn in task.ground_truth])
        if result.progress != 1.0 or result.binary != 1:
            raise Rejected("gate:reward_below_1")
        if not profile_of(task, trace).matches(seed_profile, same_counts=self.config.same_counts):
            raise Rejected("gate:profile_mismatch")
        own = produced_values(trace)
        if task.long_context:  # the simulator's long-context filler is not the seed's content
            own |= {json.dumps(v) for v in environment_made(task)}
        copied = copied_values(seed, task, own)
        if copied:
            logger.debug("variant of %s copies %s", seed.id, copied[:5])
            raise Rejected("gate:copies_seed_values")
        digest = content_hash(task)
        with self._lock:
            if digest in self._hashes:
                raise Rejected("gate:duplicate")
            self._hashes.add(digest)

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
        out["invalid_answers"] = {"plan.sequence": sum(m.planner.invalid_choices for m in self.members),
                                  "plan.arguments": sum(m.planner.invalid_arguments for m in self.members),
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
