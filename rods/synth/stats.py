"""`SynthStats`: what a synthesis run tried, passed and rejected, per stage and per backbone."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

#: The pipeline's stages, in the order a variant meets them.
#: A recast's "recast" stage (its seed's words with the new values) stands where a re-planned one's "rewrite" does.
STAGES = ("plan", "execute", "rewrite", "recast", "judge", "augment", "gate")


@dataclass
class SynthStats:
    """Per-stage counters over a run."""

    seeds: int = 0
    #: Seeds rejected by validation before any stage (`Pipeline.admit`).
    invalid_seeds: int = 0
    variants: int = 0
    accepted: int = 0
    attempts: Counter = field(default_factory=Counter)  # stage -> runs
    passed: Counter = field(default_factory=Counter)  # stage -> passes
    rejections: Counter = field(default_factory=Counter)  # reason -> count
    patches: Counter = field(default_factory=Counter)
    tried_by: Counter = field(default_factory=Counter)  # backbone -> variants it wrote
    accepted_by: Counter = field(default_factory=Counter)  # backbone -> variants accepted
    strategies: Counter = field(default_factory=Counter)  # "replan" / "recast" -> variants tried
    accepted_strategies: Counter = field(default_factory=Counter)  # strategy -> variants accepted
    #: Variants drawn as recasts whose seed a recast would not change (`Planner.can_recast`): re-planned.
    recast_unavailable: int = 0
    #: Counterpart recasts (`rods.synth.counterparts`) rejected, by reason: each re-planned instead.
    counterpart_fallbacks: Counter = field(default_factory=Counter)
    seconds: float = 0.0

    def merge(self, other: SynthStats) -> None:
        self.seeds += other.seeds
        self.invalid_seeds += other.invalid_seeds
        self.variants += other.variants
        self.accepted += other.accepted
        self.recast_unavailable += other.recast_unavailable
        for name in ("attempts", "passed", "rejections", "patches", "tried_by", "accepted_by", "strategies",
                     "accepted_strategies", "counterpart_fallbacks"):
            getattr(self, name).update(getattr(other, name))

    def backbones(self) -> dict[str, dict[str, Any]]:
        """Per backbone: variants tried, accepted, and its acceptance rate."""
        return {name: {"tried": n, "accepted": self.accepted_by[name], "acceptance_rate": self.accepted_by[name] / n}
                for name, n in sorted(self.tried_by.items()) if n}

    def by_strategy(self) -> dict[str, dict[str, Any]]:
        """Per strategy ("replan", "recast"): variants tried, accepted, and the acceptance rate."""
        return {name: {"tried": n, "accepted": self.accepted_strategies[name],
                       "acceptance_rate": self.accepted_strategies[name] / n}
                for name, n in sorted(self.strategies.items()) if n}

    def to_dict(self, llm: dict[str, Any] | None = None) -> dict[str, Any]:
        out = asdict(self)
        for key in ("attempts", "passed", "rejections", "patches", "counterpart_fallbacks"):
            out[key] = dict(getattr(self, key))
        del out["tried_by"], out["accepted_by"], out["accepted_strategies"]
        out["backbones"] = self.backbones()
        out["strategies"] = self.by_strategy()
        out["pass_rate"] = {s: self.passed[s] / self.attempts[s] for s in self.attempts if self.attempts[s]}
        out["acceptance_rate"] = self.accepted / self.variants if self.variants else 0.0
        if llm is not None:
            out["llm"] = llm
        return out
