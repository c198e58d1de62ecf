"""Skill-aligned synthesis (docs/design.md §4): new tasks with a boundary seed's structure.

One module per stage, each usable alone: `profile` (Φ), `api_graph`, `values`
(new content), `planner` (new call sequences from the graph), `arguments` and
`resolver` (each planned call made concrete in the live state), `executor`,
`rewriter`, `judge`, `augmenter`, and `pipeline`, which runs them for a batch
of seeds (on one backbone or an `ensemble`); `leak` measures how often queries
recite their calls' docs, `novelty` how far call sequences move from the seeds'.
"""

from rods.synth.leak import leaks, query_leak

__all__ = ["leaks", "query_leak"]
