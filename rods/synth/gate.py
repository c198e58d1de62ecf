"""The validation gate every accepted variant passes (docs/design.md §4.7).

A variant's gold calls pass the checks every task passes
(`rods.envs.validation`: each names a function of the environment, fits its
schema and succeeds; rejections count as `gate:<kind>`, e.g. `gate:schema`,
`gate:call_error`); it scores RP = 1 and binary = 1 with `rods.reward.score`
(which replays the gold a second time, so a non-deterministic one fails there); its profile Φ matches
the seed's; it copies no distinctive value of the seed (`rods.synth.values`);
and no other accepted task has the same content (`rods.tasks.content_hash`,
the hash the replay pool uses too). One `Gate` is shared by the members of an
ensemble, so duplicates are caught across backbones.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

from rods.envs.classes import REPLAY_KEY
from rods.envs.domains import domain_of_task
from rods.envs.validation import describe, validate_task
from rods.reward import score
from rods.synth.api_graph import graph_for
from rods.synth.dates import as_date
from rods.synth.profile import (
    ComplexityProfile,
    Trace,
    call_values,
    environment_made,
    parse_ground_truth,
    profile_of,
    result_value,
    trace_task,
    value_paths,
)
from rods.synth.value_kinds import config_values, is_distinctive, leaves, vocabulary_of
from rods.tasks import Task, content_hash

logger = logging.getLogger(__name__)


class Rejected(Exception):
    """A variant left the pipeline; `reason` is the counted rejection reason."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def copied_values(seed: Task, variant: Task, produced: set[str] = frozenset()) -> list[Any]:
    """Distinctive seed values that reappear verbatim in the variant's arguments or config.

    Values are compared as JSON text; the class names of the config, its
    attributes and its records' field names are not values (`config_values`).
    `produced` holds (as JSON) values that come from the simulator, not from
    the seed: what the variant's own calls returned (a shop address, a computed
    price) and the long-context filler the simulator loads itself.
    """

    def config_leaves(task: Task) -> list[Any]:
        # a turn slice's replayed history (REPLAY_KEY) is calls, not state: its episode was checked whole
        return [v for value in task.initial_config.values()
                for v in config_values({k: x for k, x in value.items() if k != REPLAY_KEY})]

    def cfg(task: Task) -> set[str]:
        return {json.dumps(v) for v in config_leaves(task)}

    words = vocabulary_of(seed.environment)
    seed_args = {json.dumps(v) for turn in parse_ground_truth(seed) for c in turn for v in call_values(c)
                 if is_distinctive(v, words)}
    seed_cfg = {json.dumps(v) for v in config_leaves(seed) if is_distinctive(v, words)}
    var_args = {json.dumps(v) for turn in parse_ground_truth(variant) for c in turn for v in call_values(c)}
    # a member of one of the environment's categories (a room type, a status) is no copy: it is what the slot holds
    categories = {json.dumps(v) for v in graph_for(seed.environment).values.categories}
    return sorted(((seed_args & var_args) | (seed_cfg & cfg(variant))) - set(produced) - categories)


def scenery(seed: Task) -> frozenset[str]:
    """JSON texts of the seed's state values its task neither passes nor names: the world a recast keeps as it was
    (`rods.synth.touched.touched_values`), which is therefore no copy, with the state's numbers the calls pass for
    another thing (`rods.synth.touched.coincident`); and the seed's dates, which a recast moves all alike by whole
    weeks (a date moved onto another of the seed's is no copy of it)."""
    from rods.synth.mentions import message_text
    from rods.synth.touched import coincident, said_values, touched_values

    calls = [c for turn in parse_ground_truth(seed) for c in turn]
    said = said_values(calls)
    touched = touched_values(seed.initial_config, said, message_text(seed.question),
                             graph_for(seed.environment).values.people)
    kept = coincident(seed.initial_config, calls)  # the state's, where the calls pass them for another thing
    return frozenset(json.dumps(v) for v in [*leaves(seed.initial_config), *said] if not isinstance(v, bool)
                     and (v not in touched or as_date(v) is not None)) \
        | frozenset(json.dumps(v) for v in leaves(seed.initial_config)
                    if isinstance(v, (int, float)) and not isinstance(v, bool) and float(v) in kept)


def returned_values(trace: Trace) -> set[str]:
    """JSON texts of every scalar the calls of a trace returned."""
    return {json.dumps(v) for r in trace.results for _, v in value_paths(result_value(r))}


class Gate:
    """Checks variants (see the module docstring); remembers the content of those it let through."""

    def __init__(self, same_counts: bool = True):
        self.same_counts = same_counts
        self._hashes: set[str] = set()
        self._lock = threading.Lock()

    def check(self, seed: Task, task: Task, seed_profile: ComplexityProfile) -> None:
        """Return if `task` passes; raise `Rejected` ("gate:<why>") if not."""
        failures = validate_task(task, replays=1)
        if failures:
            logger.debug("variant of %s rejected: %s", seed.id, describe(failures[0], task.id))
            raise Rejected(f"gate:{failures[0].kind}")
        trace = trace_task(task)
        result = score(task, [[list(turn)] if turn else [] for turn in task.ground_truth])
        if result.progress != 1.0 or result.binary != 1:
            raise Rejected("gate:reward_below_1")
        if not profile_of(task, trace).matches(seed_profile, same_counts=self.same_counts):
            raise Rejected("gate:profile_mismatch")
        own = returned_values(trace)
        if domain_of_task(task).makes_own_values(task):
            # what the environment makes itself (long-context filler, ids a class assigns on loading)
            # is not the seed's content
            own |= {json.dumps(v) for v in environment_made(task)}
        kept = scenery(seed) if task.provenance.strategy == "recast" else frozenset()
        copied = [v for v in copied_values(seed, task, own) if v not in kept]
        if copied:
            logger.debug("variant of %s copies %s", seed.id, copied[:5])
            raise Rejected("gate:copies_seed_values")
        digest = content_hash(task)
        with self._lock:
            if digest in self._hashes:
                raise Rejected("gate:duplicate")
            self._hashes.add(digest)
