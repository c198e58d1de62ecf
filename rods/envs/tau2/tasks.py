"""tau2-bench's airline and retail tasks as rods seed tasks (docs/design.md §2.7).

A tau2 task is a scenario for a simulated customer plus the gold actions an
agent should take. rods has no user simulator, so a seed gets

* one user turn: the scenario's known facts, reason for calling and
  instructions, put in the customer's own voice (first person) by a few
  word rules (`first_person`);
* the gold actions of the assistant (not the user's) as that turn's ground
  truth, as call strings; those that fail in tau2's own environment (a
  lookup by an e-mail the customer misremembers, a refused return) are
  marked as expected to fail (`Task.expected_errors`, `tau2_errors`), so
  validation checks that they fail here too, and that nothing else does;
* the initial state from the task when it has one (tau2's `agent_data`, a
  partial update of the database); `initialization_actions` and message
  histories have no rods equivalent and are refused (none of airline's or
  retail's tasks has one).

Tasks with no gold action (the agent should refuse or only talk) have nothing
to replay or synthesize from and are left out; `convert` says which.
It lives beside the environments because ground truth is written with
`rods.envs.calls.format_call`.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from rods.envs.calls import ToolCall, format_call
from rods.envs.tau2.environment import ENVIRONMENTS
from rods.tasks import Message, Provenance, Task

log = logging.getLogger(__name__)

Domain = Literal["airline", "retail"]
DOMAINS: tuple[Domain, ...] = ("airline", "retail")
#: rods split name -> tau2's split name ("base" is all of a domain's tasks).
SPLITS = {"train": "train", "test": "test", "all": "base"}

#: Words after which "you" is an object ("tells you", "for you"), so becomes "me".
_OBJECT_OF = (
    "tells?", "told", "asks?", "asked", "gives?", "gave", "offers?", "offered", "to", "for", "with", "helps?",
    "lets?", "makes?", "sends?", "sent", "shows?", "reminds?", "contacts?", "transfers?", "call", "charges?",
    "allows?", "corrects?", "informs?", "assures?", "convinces?",
)
#: Second person -> first person, in order (the scenario is written to the simulated customer).
_VOICE: tuple[tuple[str, str], ...] = (
    (r"\bYou are\b", "I am"),
    (r"\byou are\b", "I am"),
    (r"\bYou were\b", "I was"),
    (r"\byou were\b", "I was"),
    (r"\bYou're\b", "I'm"),
    (r"\byou're\b", "I'm"),
    (r"\bYou've\b", "I've"),
    (r"\byou've\b", "I've"),
    (r"\bYou'd\b", "I'd"),
    (r"\byou'd\b", "I'd"),
    (r"\bYourself\b", "Myself"),
    (r"\byourself\b", "myself"),
    (r"\bYours\b", "Mine"),
    (r"\byours\b", "mine"),
    (r"\bYour\b", "My"),
    (r"\byour\b", "my"),
    (rf"\b({'|'.join(_OBJECT_OF)}) you\b", r"\1 me"),
    (r"\byou(?=[.,;:!?)]|$)", "me"),
    (r"\bYou\b", "I"),
    (r"\byou\b", "I"),
)


def first_person(text: str) -> str:
    """A customer brief ("You are Emma Kim. Your user id is ...") in the customer's voice ("I am ...")."""
    for pattern, replacement in _VOICE:
        text = re.sub(pattern, replacement, text)
    return text


@dataclass
class Conversion:
    """The seeds made from one domain's tasks, and the tasks left out with the reason."""

    domain: Domain
    tasks: list[Task] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def tau2_tasks(domain: Domain, split: str = "all") -> list[Any]:
    """tau2's own task objects of `domain` (its packaged tasks.json), in tau2's split `split`."""
    if domain not in DOMAINS:
        raise ValueError(f"unknown tau2 domain {domain!r}; expected one of {DOMAINS}")
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {sorted(SPLITS)}")
    if domain == "airline":
        from tau2.domains.airline.environment import get_tasks
    else:
        from tau2.domains.retail.environment import get_tasks
    return list(get_tasks(SPLITS[split]))


def user_turn(task: Any) -> str:
    """The one user message of a seed: the scenario's facts, request and instructions, first person."""
    scenario = task.user_scenario.instructions
    if isinstance(scenario, str):
        parts = [scenario]
    else:
        parts = [scenario.known_info, scenario.reason_for_call, scenario.task_instructions]
    text = "\n\n".join(p.strip() for p in parts if p and len(p.strip()) > 1)
    return first_person(text)


def tau2_errors(domain: Domain, task: Any) -> tuple[int, ...]:
    """Indices of the assistant's gold actions that fail when tau2's own environment replays them in order.

    tau2's evaluation replays the gold actions the same way and keeps going past
    an error (the error is what the scenario's agent saw), so these are part of
    the ground truth, not mistakes in it.
    """
    key = (domain, str(task.id))  # tau2's packaged tasks do not change within a process
    if key not in _ERRORS:
        _ERRORS[key] = _replay_in_tau2(domain, task)
    return _ERRORS[key]


_ERRORS: dict[tuple[str, str], tuple[int, ...]] = {}


def _replay_in_tau2(domain: Domain, task: Any) -> tuple[int, ...]:
    from tau2.data_model.message import ToolCall as Tau2Call

    if domain == "airline":
        from tau2.domains.airline.environment import get_environment
    else:
        from tau2.domains.retail.environment import get_environment
    env = get_environment()
    state = task.initial_state
    if state is not None:
        env.set_state(state.initialization_data, None, [])
    actions = [a for a in task.evaluation_criteria.actions if a.requestor == "assistant"]
    return tuple(i for i, action in enumerate(actions)
                 if env.get_response(Tau2Call(id=str(i), name=action.name, arguments=dict(action.arguments),
                                              requestor="assistant")).error)


def seed_task(domain: Domain, task: Any) -> Task:
    """One tau2 task as a rods seed; ValueError (with the reason) if it cannot be one."""
    criteria = task.evaluation_criteria
    actions = [a for a in (criteria.actions or []) if a.requestor == "assistant"] if criteria else []
    if not actions:
        raise ValueError("no gold action by the assistant (the task is judged on what the agent says)")
    config: dict[str, Any] = {}
    state = task.initial_state
    if state is not None:
        if state.initialization_actions or state.message_history:
            raise ValueError("initialization actions or a message history (no rods equivalent)")
        data = state.initialization_data
        if data is not None and data.agent_data:
            config["db"] = data.agent_data
    environment = ENVIRONMENTS[domain]
    purpose = task.description.purpose if task.description is not None else None
    failing = tau2_errors(domain, task)
    return Task(
        id=f"tau2_{domain}_{task.id}",
        category="base",
        environment=environment,
        question=[[Message(role="user", content=user_turn(task))]],
        initial_config={environment: config},
        involved_classes=[environment],
        ground_truth=[[format_call(ToolCall(a.name, dict(a.arguments))) for a in actions]],
        expected_errors={"0": list(failing)} if failing else {},
        provenance=Provenance(origin="seed", source=f"tau2:{domain}/{task.id}", purpose=purpose),
    )


def convert(domain: Domain, split: str = "all") -> Conversion:
    """Every task of `domain`'s tau2 `split` as a seed, or left out with the reason."""
    result = Conversion(domain)
    for task in tau2_tasks(domain, split):
        try:
            result.tasks.append(seed_task(domain, task))
        except ValueError as err:
            result.skipped[str(task.id)] = str(err)
            log.info("tau2 %s task %s left out: %s", domain, task.id, err)
    return result
