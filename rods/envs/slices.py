"""Turn slices: a task mix a very small policy can learn from (`data.task_mix: turn_slices`).

A tiny model (the embedded SmolLM2-135M) scores zero on full BFCL multi-turn
tasks, so GRPO would see only all-zero groups. A *turn slice* is one turn t of a
seed task as a one-turn task of its own, so the policy trains on the first turn
and on the middle of episodes alike:

* its starting state is exactly the ground-truth state before turn t: the
  task's `initial_config` plus the gold calls of turns 0..t-1, which the
  environment replays after loading (per class, under
  `rods.envs.classes.REPLAY_KEY`; the classes never share data);
* its question is the conversation so far as history (each earlier turn's user
  messages, the gold calls as an assistant reply of Hermes ``<tool_call>``
  blocks, and their results as tool messages), then turn t's user messages;
* its ground truth is turn t's gold calls;
* its API classes are narrowed to those turn t's gold calls use, so the model
  sees fewer tools (and a shorter prompt);
* a slice of a long-context task keeps the long-context flag (its id keeps the
  marker and its category stays `long_context`); slices of the other
  categories become `base`. A turn with no gold call (a miss_param question
  the model must ask about) or no user message (a reveal turn) gives no slice.

Slices are ordinary `Task`s: the reward and the engine treat them as any other
one-turn task. `provenance.slice_of` names the source task,
`provenance.slice_turn` the turn and `provenance.slice_source` holds the
episode the slice was cut from (turns 0..t of the source, `episode_upto`), so
synthesis can make a variant of a slice as a slice of a variant of that
episode: new history, new state, the same turn (docs/design.md §4.10). Full
multi-turn tasks (`task_mix: full`) stay the default.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

from rods.envs.calls import CallParseError, ToolCall, parse_calls
from rods.envs.classes import REPLAY_KEY, method_owners
from rods.envs.environment import ToolEnvironment
from rods.llm.hermes import tool_call_block
from rods.tasks import Task

log = logging.getLogger(__name__)


def _owners_of(task: Task, gold: list[str]) -> list[str] | None:
    """The classes whose functions `gold` calls, in the task's order (None if a call is unreadable/unknown)."""
    owners = method_owners(task.involved_classes)
    used: set[str] = set()
    for text in gold:
        try:
            calls = parse_calls(text)
        except CallParseError:
            log.warning("task %s: unreadable gold call %r; no slice", task.id, text)
            return None
        for call in calls:
            cls = owners.get(call.name)
            if cls is None:
                return None
            used.add(cls)
    return [c for c in task.involved_classes if c in used]


def _reply(calls: list[ToolCall]) -> str:
    """Gold calls as the assistant reply a Hermes-format policy writes."""
    blocks = []
    for call in calls:
        arguments = dict(call.arguments)
        if call.args:  # BFCL's gold has a few positional arguments; show them as such
            arguments = {"_args": list(call.args), **arguments}
        blocks.append(tool_call_block(call.name, arguments))
    return "\n".join(blocks)


def _history(task: Task, turn: int) -> list[dict]:
    """The conversation of turns 0..turn-1 as the gold agent had it: user messages, gold calls, results."""
    if turn == 0:
        return []
    env = ToolEnvironment(task)  # the gold run, executed here (slices are built once per seed)
    messages: list[dict] = []
    for k in range(turn):
        messages += [m.model_dump() for m in task.question[k]]
        calls = [call for text in task.ground_truth[k] for call in parse_calls(text)]
        if not calls:
            continue
        messages.append({"role": "assistant", "content": _reply(calls)})
        messages += [{"role": "tool", "name": call.name, "content": env.execute(call)} for call in calls]
    return messages


def turn_slice(task: Task, turn: int, slice_id: str | None = None) -> Task | None:
    """Turn `turn` of `task` as a one-turn task from the ground-truth state before it (None: no slice).

    Its id (and its stored episode's) is `slice_id`, by default ``<task id>@turn<turn>``.
    """
    if not 0 <= turn < task.num_turns:
        raise ValueError(f"task {task.id}: no turn {turn} (it has {task.num_turns})")
    gold = task.ground_truth[turn]
    if not gold or not task.question[turn]:
        return None
    classes = _owners_of(task, gold)
    if classes is None:
        return None
    prefix = [text for k in range(turn) for text in task.ground_truth[k]]
    if prefix and _owners_of(task, prefix) is None:
        return None
    owners = method_owners(task.involved_classes)
    initial_config = {}
    for cls in classes:
        config = json.loads(json.dumps(task.initial_config.get(cls, {})))
        replay = [text for text in prefix if owners.get(parse_calls(text)[0].name) == cls]
        if replay:
            config[REPLAY_KEY] = replay
        if config or cls in task.initial_config:
            initial_config[cls] = config
    provenance = task.provenance.model_copy(deep=True)
    setattr(provenance, "slice_of", task.id)  # noqa: B010 - Provenance allows extra fields; typed ones do not list these
    setattr(provenance, "slice_turn", turn)  # noqa: B010
    slice_id = slice_id or f"{task.id}@turn{turn}"
    episode = episode_upto(task, turn).model_copy(update={"id": slice_id})
    setattr(provenance, "slice_source", episode.model_dump(mode="json"))  # noqa: B010
    question = _history(task, turn) + [m.model_dump() for m in task.question[turn]]
    expected = task.expected_errors.get(str(turn))
    return Task(
        id=slice_id,
        category="long_context" if task.long_context else "base",
        environment=task.environment,
        question=[question],
        initial_config=initial_config,
        involved_classes=classes,
        ground_truth=[list(gold)],
        expected_errors={"0": list(expected)} if expected else {},
        provenance=provenance,
    )


def episode_upto(task: Task, turn: int) -> Task:
    """Turns 0..`turn` of `task` as a task of its own: the episode a slice at `turn` is cut from.

    It keeps the task's id, classes, initial state and provenance. A miss_func
    episode that ends before its reveal, or a miss_param one without its
    under-specified turn, is a `base` task (its held-out functions are never
    needed, no value is missing).
    """
    if not 0 <= turn < task.num_turns:
        raise ValueError(f"task {task.id}: no turn {turn} (it has {task.num_turns})")
    missed = {k: list(v) for k, v in task.missed_function.items() if int(k) <= turn}
    category = task.category
    if category == "miss_func" and not missed:
        category = "base"
    if category == "miss_param" and not any(task.question[k] and not task.ground_truth[k] for k in range(turn + 1)):
        category = "base"
    provenance = task.provenance.model_dump(mode="json", exclude={"slice_source"})  # sources never nest
    return Task.model_validate({
        **task.model_dump(exclude={"question", "ground_truth", "missed_function", "category", "provenance"}),
        "category": category,
        "provenance": provenance,
        "question": [[m.model_dump() for m in q] for q in task.question[: turn + 1]],
        "ground_truth": [list(g) for g in task.ground_truth[: turn + 1]],
        "missed_function": missed,
        "expected_errors": {k: list(v) for k, v in task.expected_errors.items() if int(k) <= turn},
    })


def slice_source(task: Task) -> Task | None:
    """The episode a turn slice was cut from (`provenance.slice_source`), or None for any other task."""
    source = getattr(task.provenance, "slice_source", None)
    if source is None:
        return None
    try:
        return Task.model_validate(source)
    except ValueError as err:
        raise ValueError(f"task {task.id}: provenance.slice_source is not a task: {err}") from err


def first_turn_slice(task: Task) -> Task | None:
    """The first turn of `task` as a one-turn task, or None when that turn has no gold call."""
    return turn_slice(task, 0)


def task_slices(task: Task) -> list[Task]:
    """The slices of every turn of `task` that has one, in turn order."""
    return [piece for t in range(task.num_turns) if (piece := turn_slice(task, t)) is not None]


def turn_slices(tasks: Iterable[Task], *, max_calls: int | None = None, limit: int | None = None) -> list[Task]:
    """Slices at every turn of `tasks` (see module doc), keeping those with at most `max_calls` gold calls.

    Ordered turn by turn (every task's first-turn slice, then every second-turn
    slice, ...), so a `limit` or `data.max_slices` keeps early turns first.
    """
    by_turn: dict[int, list[Task]] = {}
    for task in tasks:
        for piece in task_slices(task):
            if max_calls is None or len(piece.ground_truth[0]) <= max_calls:
                by_turn.setdefault(piece.provenance.slice_turn, []).append(piece)  # type: ignore[attr-defined]
    out = [piece for turn in sorted(by_turn) for piece in by_turn[turn]]
    return out[:limit] if limit is not None else out
