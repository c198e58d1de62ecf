"""Stage 5, Augment: turn a basic variant into a miss_func or miss_param task.

Both use BFCL's exact representation (docs/design.md §2.1):

* **miss_func**: pick a turn k whose calls use a function f not used before;
  turn k keeps the user's request but gets no ground truth (the model cannot
  act yet), a new turn k+1 has ``question == []`` and the original calls, and
  ``missed_function = {"k+1": [f]}``: f is hidden until the reveal turn.
* **miss_param**: pick a turn k with a value the user must give; turn k asks
  without that value and has no ground truth, a new turn k+1 supplies the
  value and holds the original calls.

The augmenter changes only the turn layout: calls, their order and the
data-flow graph stay as executed. It returns a new plan whose `seed` is a
*skeleton* task with the new layout (category, empty questions, empty ground
truth turns), which the rewriter and judge read as they read a seed.
"""

from __future__ import annotations

import copy
import dataclasses
import random

from rods.synth.executor import Execution
from rods.synth.plan import Plan
from rods.synth.profile import ComplexityProfile
from rods.synth.value_kinds import is_distinctive
from rods.tasks.model import Task

KINDS = ("miss_func", "miss_param")


def _skeleton(seed: Task, category: str, num_turns: int, reveal_turn: int | None) -> Task:
    question = [[] if t == reveal_turn else [{"role": "user", "content": "..."}] for t in range(num_turns)]
    return Task(id=f"{seed.id}#{category}", category=category, environment=seed.environment, question=question,
                initial_config=seed.initial_config, involved_classes=list(seed.involved_classes),
                ground_truth=[[] for _ in range(num_turns)],
                missed_function={} if reveal_turn is None else {str(reveal_turn): ["?"]})


def _split_turn(plan: Plan, execution: Execution, k: int, category: str, reveal: bool) -> tuple[Plan, Execution]:
    new = copy.copy(plan)
    new.calls = [dataclasses.replace(c, turn=c.turn + 1 if c.turn >= k else c.turn) for c in plan.calls]
    n = plan.seed.num_turns + 1
    skeleton = _skeleton(plan.seed, category, n, k + 1 if reveal else None)
    gt = [list(t) for t in execution.ground_truth]
    gt.insert(k, [])
    if reveal:
        names = sorted({c.name for c in new.calls if c.turn == k + 1} - {c.name for c in new.calls if c.turn <= k})
        new.missed_function = {str(k + 1): names[:1]}
        skeleton = skeleton.model_copy(update={"missed_function": dict(new.missed_function)})
    else:
        new.missed_function = {}
    skeleton = skeleton.model_copy(update={"ground_truth": gt})
    new.seed = skeleton
    out = dataclasses.replace(execution, ground_truth=gt)
    return new, out


def miss_func(plan: Plan, execution: Execution, rng: random.Random) -> tuple[Plan, Execution] | None:
    """The miss_func variant, or None if no turn introduces a new function."""
    turns = plan.turns()
    choices = []
    for k in range(1, len(turns)):
        before = {c.name for t in turns[:k] for c in t}
        if turns[k] and any(c.name not in before for c in turns[k]) and plan.seed.question[k]:
            choices.append(k)
    if not choices:
        return None
    return _split_turn(plan, execution, rng.choice(choices), "miss_func", reveal=True)


def miss_param(plan: Plan, execution: Execution, rng: random.Random) -> tuple[Plan, Execution] | None:
    """The miss_param variant, or None if no turn has a value the user must give."""
    turns = plan.turns()
    choices = []
    index = 0
    words = plan.remapper.vocabulary
    for k, turn in enumerate(turns):
        for call in turn:
            call_exec = execution.calls[index]
            index += 1
            if any(key not in call.bindings and is_distinctive(v, words) and not isinstance(v, (list, dict))
                   for key, v in call_exec.arguments.items()) and plan.seed.question[k]:
                choices.append(k)
                break
    if not choices:
        return None
    return _split_turn(plan, execution, rng.choice(choices), "miss_param", reveal=False)


def augment(plan: Plan, execution: Execution, rng: random.Random, kind: str | None = None):
    """A miss_func or miss_param variant (kind drawn if None), or None if the layout has no room."""
    kind = kind or rng.choice(KINDS)
    return (miss_func if kind == "miss_func" else miss_param)(plan, execution, rng)


def expected_profile(seed_profile: ComplexityProfile, skeleton: Task) -> ComplexityProfile:
    """The seed's Φ moved to the augmented layout: same calls, edges and depth."""
    per_turn = [0] * skeleton.num_turns
    return dataclasses.replace(
        seed_profile,
        category=skeleton.category,
        num_turns=skeleton.num_turns,
        calls_per_turn=tuple(len(t) for t in skeleton.ground_truth) if skeleton.ground_truth else tuple(per_turn),
        empty_turns=tuple(t for t, gt in enumerate(skeleton.ground_truth) if not gt),
        held_out=tuple((int(k), len(v)) for k, v in sorted(skeleton.missed_function.items())),
    )
