"""How far variants move from their seeds: the novelty figures of `bench/synth_novelty.py`.

Skill-aligned synthesis must keep a seed's structure (Φ) and change its
content, call sequence included (docs/design.md §4.2). These figures compare each
variant's flattened function-name sequence with its parent seed's:

* ``seq_changed``: fraction of variants whose sequence differs;
* ``fnset_changed``: fraction whose *set* of functions differs;
* ``mean_seq_distance``: mean of 1 - difflib's ratio of the two sequences;
* ``distinct_skeletons_per_seed``: mean, over seeds with a variant, of the
  number of distinct sequences among its variants;
* ``new_functions``: functions some variant calls and no seed does;
* ``profile_match``: fraction whose Φ matches the seed's (must be 1.0);
* ``skill_overlap``: mean Jaccard similarity of each variant's function set
  with its seed's (the paper keeps variants "near the capability boundary":
  new calls, but the seed's skills);
* ``skill_overlap_reachable`` and ``skill_in_band``: the mean overlap, and the
  fraction inside the planner's band, over the variants whose band is
  reachable at all (`band_reachable`: a one-call seed's variant keeps its
  function, 1.0, or replaces it, 0.0; nothing lies between).
"""

from __future__ import annotations

import difflib
from collections import defaultdict

from rods.synth.planner import PlannerConfig
from rods.synth.profile import ComplexityProfile, parse_ground_truth, profile_of
from rods.tasks.model import Task


def call_names(task: Task) -> list[str]:
    """The flattened function-name sequence of a task's ground truth."""
    return [c.name for turn in parse_ground_truth(task) for c in turn]


def sequence_distance(a: list[str], b: list[str]) -> float:
    """1 - difflib's similarity ratio of two name sequences (0: equal, 1: nothing shared)."""
    return 1 - difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def skill_overlap(seed: Task, variant: Task) -> float:
    """Jaccard similarity of the two tasks' function sets (1: the same functions, 0: none shared)."""
    a, b = set(call_names(seed)), set(call_names(variant))
    return len(a & b) / len(a | b) if a | b else 1.0


def band_reachable(seed: Task, variant: Task, band: tuple[float, float]) -> bool:
    """Whether some task of the variant's call count has a skill overlap inside `band` with the seed: k of the
    seed's functions kept and n new ones give k / (seed's functions + n)."""
    s, m = len(set(call_names(seed))), len(call_names(variant))
    low, high = band
    return any(low <= k / (s + n) <= high for k in range(min(s, m) + 1) for n in range(m - k + 1) if k + n)


def novelty(seeds: list[Task], variants: list[Task], profiles: dict[str, ComplexityProfile] | None = None,
            band: tuple[float, float] = PlannerConfig.skill_overlap) -> dict[str, float]:
    """The figures of the module docstring for `variants` (each names its seed in `provenance.parent_id`)."""
    names = {s.id: call_names(s) for s in seeds}
    by_id = {s.id: s for s in seeds}
    profiles = profiles or {s.id: profile_of(s) for s in seeds}
    seed_functions = {n for seq in names.values() for n in seq}
    changed = fnset = matched = 0
    distance = overlap = 0.0
    reachable: list[float] = []  # the overlaps of the variants whose band is reachable
    skeletons: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    used: set[str] = set()
    for task in variants:
        parent = task.provenance.parent_id
        mine, theirs = call_names(task), names[parent]
        changed += mine != theirs
        fnset += set(mine) != set(theirs)
        distance += sequence_distance(mine, theirs)
        jaccard = skill_overlap(by_id[parent], task)
        overlap += jaccard
        if band_reachable(by_id[parent], task, band):
            reachable.append(jaccard)
        skeletons[parent].add(tuple(mine))
        used |= set(mine)
        matched += profile_of(task).matches(profiles[parent])
    n = max(1, len(variants))
    return {
        "seq_changed": changed / n,
        "fnset_changed": fnset / n,
        "mean_seq_distance": distance / n,
        "distinct_skeletons_per_seed": sum(map(len, skeletons.values())) / max(1, len(skeletons)),
        "new_functions": len(used - seed_functions),
        "profile_match": matched / n,
        "skill_overlap": overlap / n,
        "skill_overlap_reachable": sum(reachable) / max(1, len(reachable)),
        "skill_in_band": sum(band[0] <= o <= band[1] for o in reachable) / max(1, len(reachable)),
    }
