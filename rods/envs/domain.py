"""Domains: what each family of environments tells the layers above it (docs/design.md §2.9).

An environment family (BFCL's API classes, a user's Python class, tau2-bench's
domains, an MCP server) is a *domain*: one folder under `rods/envs/` with the
same files (`domain.py` holding its `Domain`, plus whatever it needs to load
and run its environments). Synthesis, the reward, the templates and
evaluation never ask which domain they talk to; they read its hooks:

* **loading**: the classes an environment name spans, the class behind a
  key, its tools and their docs, a loaded instance, how one call runs
  (`classes`, `load_class`, `tool_names`, `tool_docs`, `load`, `invoke`,
  `stateless`);
* **state**: how its state reads as (path, value) leaves (`state_leaves`);
* **errors**: which results are failures (`error_of`); every domain reads
  `ERROR_PREFIX` (an exception, a refused or unknown call) and a JSON object
  with an `error` key, and may add its own convention; documented argument
  types its own tasks do not keep to (`untyped_arguments`, for validation);
* **values**: the words its code knows and synthesis must keep
  (`vocabulary`), names a call can see that the public state does not show
  (`visible_names`), whether its loading makes values of its own
  (`makes_own_values`), whether free-text arguments come from the seeds'
  examples (`free_text_from_seeds`), reference tasks its API graph is learned
  from (`reference_tasks`);
* **phrases**: how a person names what a class is about and what each tool
  achieves (`subject`, `outcome_phrases`, `nouns`, `forms`); a domain with no
  phrases is phrased from its own tool and parameter documentation;
* **config**: a class's default state (`default_config`), the repairs that
  make a failing call's precondition hold (`patch_config`) and a last touch
  after a config's values are re-drawn (`adjust_config`);
* **defaults**: calls that only read (`read_only_calls`), the code whose
  source keys ground truths cached on disk (`cache_code`), the domain's own
  independent checker, if it has one (`official_verdict`), and how reports
  name and group its tasks (`title`, `report_group`).

`rods.envs.domains.domain_of(key)` finds the domain of a class key (a BFCL
class name, an import path `package.module:Class`, an MCP manifest path); a
Python class names its own domain with a class attribute `rods_domain`, and
may declare its error convention with a static method
`rods_error(result) -> str | None`. This module holds only the contract, so
it imports none of the domains that build on it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rods.envs.protocol import ERROR_PREFIX

if TYPE_CHECKING:
    from rods.tasks.model import Task

#: A phrase for a tool's outcome: a pattern with `{param}` slots and the optional parameters' segments
#: (see `rods.llm.outcomes`).
Phrase = tuple[str, dict[str, Any]]


def standard_error(result: str) -> str | None:
    """The error every domain reads: an `ERROR_PREFIX` result, or a JSON object with a non-empty `error` key."""
    if result.startswith(ERROR_PREFIX):
        return result[len(ERROR_PREFIX):] or "error"
    text = result.lstrip()
    if not text.startswith("{") or '"error"' not in text:
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, dict) and value.get("error") not in (None, "", False):
        return str(value["error"])
    return None


class Domain:
    """The hooks of one environment family, with the defaults of a plain Python class (see the module docstring).

    Subclasses override what their family knows better; every hook takes the
    class key it is asked about, since a domain may hold several classes.
    """

    #: A short name for reports and messages ("bfcl", "python", "tau2", "mcp").
    name = "python"

    # -- loading ------------------------------------------------------------------------------

    def owns(self, key: str) -> bool:
        """Whether a key names this domain by itself (no class to import), as BFCL's names and manifests do."""
        return False

    def classes(self, environment: str) -> list[str]:
        """The class keys an environment name spans (a task's `involved_classes` are some of them)."""
        return [environment]

    def load_class(self, key: str) -> type:
        """The class whose instances hold a rollout's state (a stand-in class for a hosted environment)."""
        raise NotImplementedError

    def tool_names(self, key: str) -> tuple[str, ...]:
        """The names of the class's tools (its public methods, as the executor dispatches them)."""
        raise NotImplementedError

    def tool_docs(self, key: str) -> list[dict[str, Any]]:
        """The class's tools as function docs (name, description, JSON-schema parameters, effect)."""
        raise NotImplementedError

    def load(self, key: str, config: dict[str, Any], *, long_context: bool, seed: int | None) -> Any:
        """A new instance in the state `config` (the class's entry of `initial_config`, a private copy) describes."""
        raise NotImplementedError

    def invoke(self, key: str, method: Callable[..., Any], args: tuple, kwargs: dict[str, Any],
               formatter: Callable[[Any], str] | None) -> Any:
        """Run one bound tool method; its result through `formatter` (the raw result without one)."""
        result = method(*args, **kwargs)
        return formatter(result) if formatter is not None else result

    def stateless(self, key: str) -> bool:
        """Whether the class has no state at all (nothing to load; every tool only reads)."""
        return False

    # -- state ---------------------------------------------------------------------------------

    def state_leaves(self, key: str, state: Any) -> list[tuple[str, Any]]:
        """(path, scalar) leaves of a class's public state (or its delta), for synthesis to find values in.

        The default reads the state's JSON form (`rods.envs.state.json_leaves`)."""
        from rods.envs.state import json_leaves

        return json_leaves(state)

    # -- errors --------------------------------------------------------------------------------

    def error_of(self, key: str, result: str) -> str | None:
        """Why a call's result is a failure, or None (`standard_error`; a domain may add its own convention)."""
        return standard_error(result)

    def untyped_arguments(self, key: str) -> Mapping[str, str]:
        """`function.parameter` -> why the documented type of that argument does not hold for the domain's own
        tasks. Validation (`rods.envs.validation`) still checks such an argument's name and presence, not its type."""
        return {}

    # -- values --------------------------------------------------------------------------------

    def vocabulary(self, key: str) -> frozenset[str]:
        """Words the class's code knows by name (kept when synthesis re-draws values)."""
        return frozenset()

    def visible_names(self, key: str, instance: Any) -> list[tuple[str, bool]] | None:
        """(name, is a container) pairs a call can see that the public state does not show, or None."""
        return None

    def makes_own_values(self, task: Task) -> bool:
        """Whether loading a task makes values its config does not hold (ids, filler) that belong to the domain."""
        return True

    #: Free-text arguments (an SQL statement, a message) re-drawn from the seeds' own examples.
    free_text_from_seeds = True

    def reference_tasks(self) -> tuple[list[str], Sequence[Task]] | None:
        """(classes, tasks) the domain's API graph is learned from once and for all, or None (then each
        environment's graph is learned from the seeds seen)."""
        return None

    # -- phrases -------------------------------------------------------------------------------

    def subject(self, key: str) -> str | None:
        """What a class is about, in a user's words ("my car"), or None (said from the class's name)."""
        return None

    def outcome_phrases(self) -> Mapping[str, Phrase]:
        """Tool name -> the outcome a person asks for; tools without one are phrased from their docs."""
        return {}

    def nouns(self) -> Mapping[str, str]:
        """Parameter name -> how a person refers to a value of it taken from an earlier result ("that file")."""
        return {}

    def forms(self) -> Mapping[str, str]:
        """Parameter name -> how a value the user supplies is said ("ticket {}")."""
        return {}

    # -- config --------------------------------------------------------------------------------

    def default_config(self, key: str) -> dict[str, Any]:
        """The class's default state as JSON data; a Python class's defaults are what its constructor makes."""
        return {}

    def patch_config(self, key: str, config: dict[str, Any], failure: str, call: Any, env: Any,
                     fresh_text: Callable[[str], str]) -> str | None:
        """Edit `config` (the class's initial state) so the failing `call` can succeed; what was done, or None.

        `failure` is the call's error result, `env` the environment it failed in,
        `fresh_text(example)` new text of the example's shape for anything the patch creates.
        """
        return None

    def adjust_config(self, config: dict[str, dict[str, Any]], seed: Task, rng: random.Random) -> None:
        """A last edit of a variant's re-drawn config (e.g. rename what came out unchanged)."""

    # -- defaults ------------------------------------------------------------------------------

    def read_only_calls(self, key: str) -> list[str]:
        """Calls of the class that change nothing (for perturbed trajectories): its read tools without
        required parameters."""
        return [f"{doc['name']}()" for doc in self.tool_docs(key)
                if doc.get("effect") == "read" and not doc.get("parameters", {}).get("required")]

    #: Modules whose source decides a ground truth's execution (part of a disk cache key); empty: the
    #: domain's ground truths are not cached on disk (a user's code may change between runs unseen).
    cache_code: tuple[str, ...] = ()

    def official_verdict(self, task: Task, decoded: list) -> dict[str, Any] | None:
        """The domain's own checker's verdict on decoded calls (per turn, per step): `{"valid": bool, ...}`,
        or None if the domain has no checker of its own."""
        return None

    @property
    def has_own_checker(self) -> bool:
        """Whether the domain has a checker of its own (overrides `official_verdict`)."""
        return type(self).official_verdict is not Domain.official_verdict

    def report_group(self, task: Task) -> str:
        """The row a task counts in when a policy is scored: its class's name, with the category if not base."""
        name = task.environment.rpartition(":")[2].rpartition("/")[2]
        return name if task.category == "base" else f"{name} {task.category}"

    def title(self, environments: Sequence[str]) -> str:
        """How an evaluation report names what it scored."""
        names = sorted({e.rpartition(":")[2].rpartition("/")[2] for e in environments})
        return ", ".join(names) + " multi-turn"
