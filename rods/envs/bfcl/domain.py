"""The BFCL domain's hooks (`rods.envs.domain.Domain`): BFCL's eight API classes.

A task of this domain has the environment name `"bfcl"` and names its classes
in `involved_classes`; BFCL's own function docs, loading, result format
(`rods.envs.environment.format_result`), checker and the synthesis knowledge
gathered in this folder answer every hook.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rods.envs.bfcl import classes
from rods.envs.bfcl.docs import all_docs
from rods.envs.domain import Domain, Phrase
from rods.tasks.bfcl import API_CLASS_FILES

if TYPE_CHECKING:
    from rods.tasks.model import Task

#: The environment name of BFCL tasks (`rods.tasks.model.BFCL_ENVIRONMENT`).
ENVIRONMENT = "bfcl"


#: Per class, calls that read without changing public state (for perturbed trajectories).
READ_ONLY_CALLS = {
    "GorillaFileSystem": ["pwd()", "ls()", "ls(a=True)"],
    "MathAPI": ["add(a=1, b=2)", "mean(numbers=[1.0, 2.0])"],
    "MessageAPI": ["list_users()", "message_get_login_status()"],
    "TwitterAPI": ["posting_get_login_status()", "list_all_following()"],
    "TicketAPI": ["ticket_get_login_status()"],
    "TradingBot": ["get_current_time()", "trading_get_login_status()", "get_watchlist()"],
    "TravelAPI": ["list_all_airports()", "travel_get_login_status()"],
    "VehicleControlAPI": [
        "displayCarStatus(option='fuel')", "get_outside_temperature_from_google()", "get_current_speed()"
    ],
}


#: Per class, documented argument types BFCL's own tasks do not keep to (`Domain.untyped_arguments`).
UNTYPED_ARGUMENTS = {
    "TicketAPI": {
        "close_ticket.ticket_id": "TicketAPI documents ticket ids as integers, but task 173's state (in all four "
        "categories) holds the string id 'ticket_001', and its gold call passes it; the call succeeds",
    },
}


class BfclDomain(Domain):
    """BFCL V3's multi-turn API classes (see the module docstring)."""

    name = "bfcl"

    def owns(self, key: str) -> bool:
        return key == ENVIRONMENT or key in API_CLASS_FILES

    # -- loading
    def classes(self, environment: str) -> list[str]:
        """The environment `bfcl` spans the eight API classes; a class name, itself."""
        return list(API_CLASS_FILES) if environment == ENVIRONMENT else [environment]

    def load_class(self, key: str) -> type:
        return classes.api_class(key)

    def tool_names(self, key: str) -> tuple[str, ...]:
        return classes.public_methods(key)

    def tool_docs(self, key: str) -> list[dict[str, Any]]:
        return list(all_docs()[key])

    def load(self, key: str, config: dict[str, Any], *, long_context: bool, seed: int | None) -> Any:
        return classes.load(key, config, long_context)

    def invoke(self, key: str, method: Callable[..., Any], args: tuple, kwargs: dict[str, Any],
               formatter: Callable[[Any], str] | None) -> Any:
        if key in classes.STATELESS_CLASSES:  # MathAPI: process-global precision, costly arguments
            from rods.envs.bfcl.execution import run_isolating_precision

            return run_isolating_precision(method, args, kwargs, formatter)
        result = method(*args, **kwargs)
        return formatter(result) if formatter is not None else result

    def stateless(self, key: str) -> bool:
        return key in classes.STATELESS_CLASSES

    def untyped_arguments(self, key: str) -> Mapping[str, str]:
        return UNTYPED_ARGUMENTS.get(key, {})

    # -- state
    def state_leaves(self, key: str, state: Any) -> list[tuple[str, Any]]:
        """BFCL's state is live objects (directories, files): walked through their public attributes."""
        from rods.envs.state import walk

        return walk(state)

    # -- errors
    def error_of(self, key: str, result: str) -> str | None:
        """`standard_error`, then BFCL's own failure shapes (`rods.envs.bfcl.errors`)."""
        from rods.envs.bfcl.errors import bfcl_error

        return super().error_of(key, result) or bfcl_error(result)

    # -- values
    def vocabulary(self, key: str) -> frozenset[str]:
        from rods.envs.bfcl.vocabulary import vocabulary

        return vocabulary()

    def visible_names(self, key: str, instance: Any) -> list[tuple[str, bool]] | None:
        from rods.envs.bfcl.vocabulary import visible_names

        return visible_names(key, instance)

    def makes_own_values(self, task: Task) -> bool:
        """Only long-context loading adds records (filler files, cards) of its own."""
        return task.long_context

    #: BFCL's free-text arguments stay the proposer's fresh words.
    free_text_from_seeds = False

    def reference_tasks(self) -> tuple[list[str], Sequence[Task]]:
        """The train split over all eight classes (the paper's 400 training tasks)."""
        from rods.tasks.bfcl import API_CLASSES, load_split

        return list(API_CLASSES), load_split("train")

    # -- phrases
    def subject(self, key: str) -> str | None:
        from rods.envs.bfcl.phrases import SUBJECTS

        return SUBJECTS.get(key)

    def outcome_phrases(self) -> Mapping[str, Phrase]:
        from rods.envs.bfcl.phrases import OUTCOMES

        return OUTCOMES

    def nouns(self) -> Mapping[str, str]:
        from rods.envs.bfcl.phrases import NOUNS

        return NOUNS

    def forms(self) -> Mapping[str, str]:
        from rods.envs.bfcl.phrases import FORMS

        return FORMS

    # -- config
    def default_config(self, key: str) -> dict[str, Any]:
        from rods.envs.bfcl.patches import default_config

        return {} if key in classes.STATELESS_CLASSES else default_config(key)

    def patch_config(self, key: str, config: dict[str, Any], failure: str, call: Any, env: Any,
                     fresh_text: Callable[[str], str]) -> str | None:
        from rods.envs.bfcl.patches import patch_config

        return patch_config(key, config, failure, call, env, fresh_text)

    def adjust_config(self, config: dict[str, dict[str, Any]], seed: Task, rng: random.Random) -> None:
        from rods.envs.bfcl.patches import rename_unchanged_root

        rename_unchanged_root(config, seed.initial_config, rng)

    # -- defaults
    def read_only_calls(self, key: str) -> list[str]:
        return list(READ_ONLY_CALLS.get(key, []))

    #: BFCL's classes are installed and versioned, and MathAPI computes with mpmath.
    cache_code = ("bfcl_eval.eval_checker.multi_turn_eval.func_source_code", "mpmath")

    def official_verdict(self, task: Task, decoded: list) -> dict[str, Any] | None:
        """BFCL's own multi-turn checker's verdict (`rods.envs.bfcl.official.safe_official_verdict`)."""
        from rods.envs.bfcl.official import safe_official_verdict

        return safe_official_verdict(task, decoded)

    def report_group(self, task: Task) -> str:
        """BFCL scores per category (the official multi-turn overall is their unweighted mean)."""
        return task.category

    def title(self, environments: Sequence[str]) -> str:
        return "BFCL multi-turn"


DOMAIN = BfclDomain()
