"""Skill-aligned synthesis (docs/design.md §4): new tasks with a boundary seed's structure.

One module per stage, each usable alone: `profile` (Φ), `api_graph`, `values`
(new content), `planner` (new call sequences from the graph, written as a
`plan`), `arguments` and `resolver` (each planned call made concrete in the
live state), `executor`, `rewriter`, `judge`, `augmenter`, the `gate` every
accepted variant passes, and `pipeline`, which runs them for a batch of seeds
(on one backbone or an `ensemble`) under its `settings` and counts them in
`stats`; `leak` measures how often queries recite their calls' docs, `novelty`
how far call sequences move from the seeds'.
"""

from rods.synth.leak import leaks, query_leak

__all__ = ["leaks", "query_leak"]
