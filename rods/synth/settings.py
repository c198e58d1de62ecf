"""`SynthConfig`: the synthesis pipeline's settings (docs/design.md §4.7, §7.1).

A `rods.config.Section` like every other settings block: per-field help and
bounds, the paper's values as defaults, unknown keys rejected with their dotted
path. Training configs hold it as `synthesis.options`, verl configs as
`rods.synthesis.pipeline_kwargs`; the three switches `rewrite`, `narrative` and
`feedback_repair` give the paper's ablations (:meth:`SynthConfig.ablation`).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from rods.config import Section
from rods.synth.ensemble import Routing

#: The paper's ablations, each one switch of `SynthConfig` turned off.
ABLATIONS: dict[str, dict[str, bool]] = {
    "no_rewrite": {"rewrite": False},
    "no_narrative": {"narrative": False},
    "no_feedback_repair": {"feedback_repair": False},
}


class SynthConfig(Section):
    """Pipeline settings (paper defaults; the switches give the ablations)."""

    per_seed: int = Field(1, ge=1, description="Variants attempted per seed.")
    max_attempts: int = Field(3, ge=1, description="Plan/execute runs per variant (the paper: 3).")
    rewrite: bool = Field(
        True,
        description="Write all turns' queries in one call that sees the whole plan and the narrative (off: the "
        "paper's no-rewrite ablation: each turn's query written on its own, one call per turn, no narrative).",
    )
    narrative: bool = Field(True, description="The planner's narrative (off: the no-narrative ablation).")
    feedback_repair: bool = Field(
        True,
        description="Error feedback to the planner (blacklist, failure memory), Config Patches and judge->rewrite "
        "repair (off: the paper's no-feedback-repair ablation: the same max_attempts, each a blind re-sample with "
        "a fresh random stream, no patch, no repair).",
    )
    judge: bool = Field(True, description="Run the Judge stage.")
    augment: float = Field(
        0.0, ge=0.0, le=1.0,
        description="Probability of turning an accepted basic variant into a miss_func / miss_param variant.",
    )
    candidates: int = Field(4, ge=1, description="Graph-valid call sequences the planner offers the backend per plan.")
    seed_function_weight: float = Field(
        0.25, gt=0.0,
        description="How the planner weighs a position's own seed function against the other functions of its "
        "class: below 1 it moves away from the seed's calls (default: new call sequences, docs/design.md §4.2), "
        "above 1 it keeps them more often (variants closer to their seed in what they ask of the policy).",
    )
    recast: float | None = Field(
        None, ge=0.0, le=1.0,
        description="The share of variants that are recasts (rods.synth.recast, docs/design.md §4.12): the seed's own "
        "calls and words in a new world (new people, ids, dates by whole weeks, the same mapping in state, calls and "
        "messages), drawn per variant; the rest are re-planned (a new call sequence, requests written for it). A "
        "seed whose state is the environment's own (tau2's database) is always re-planned. None: 1 with the "
        "template backend, whose re-planned requests no blind read found coherent (0 of 25 in six reads), 0.5 with "
        "a model that writes them. 0: the paper's pipeline alone.",
    )
    coherence: bool = Field(
        True,
        description="Hold every variant to the coherence rules (rods.synth.coherence: no placeholder values, flows "
        "that keep their role, no superfluous write or unused read, one goal); a ground truth that breaks one is "
        "re-planned around the offending call, a finished variant that breaks one is rejected (counted by rule).",
    )
    skill_overlap: tuple[float, float] = Field(
        (0.3, 0.7),
        description="The band of skill overlap (Jaccard of the seed's and the variant's function sets) a variant's "
        "call sequence is drawn in: new calls, but near the seed's skills, so it stays near the capability boundary "
        "(the paper). Candidates outside it are used only when none falls inside.",
    )
    same_counts: bool = Field(
        True,
        description="Keep the seed's calls per turn (off: a variant may drop one read call without data-flow edges; "
        "the profile then matches on topology, depth, turns and categories, not on call counts).",
    )
    workers: int = Field(2, ge=1, description="Seeds synthesized concurrently (threads).")
    routing: Routing = Field(
        "round_robin",
        description="With several backends, how each variant's backbone is picked: round_robin or acceptance "
        "(rods.synth.ensemble).",
    )
    seed: int = Field(0, description="Base of every variant's random stream.")
    generation_offset: int = Field(1, ge=1, description="Added to the seed's generation for its variants.")
    step_created: int | None = Field(
        None, description="Training step recorded in each variant's provenance (set by the data engine)."
    )

    @classmethod
    def ablation(cls, name: str, **kw: Any) -> SynthConfig:
        """`no_rewrite`, `no_narrative` or `no_feedback_repair` (docs/design.md §7.1)."""
        if name not in ABLATIONS:
            raise ValueError(f"unknown ablation {name!r}; choose one of {sorted(ABLATIONS)}")
        return cls(**{**ABLATIONS[name], **kw})
