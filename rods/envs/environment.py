"""Executable tool environments: one rollout's own instances of a task's classes, run by a safe executor.

`ToolEnvironment` is the instance-backed implementation of the environment
protocol (`rods.envs.protocol.Environment`) for every domain
(`rods.envs.domain`): BFCL's API classes, a user's Python class, tau2-bench's
domains, and protocol-only environments (MCP servers) hosted by replay. Each
class is loaded by its domain, and each call runs through its domain's
`invoke` (BFCL's precision guard, a Python class's time limit).

It mirrors the observable behaviour of BFCL's executor
(`execute_multi_turn_func_call`) without its `eval` and without its
module-global instance cache:

* only public methods of the involved instances can be called (a method name
  maps to the last involved class that has it, as in BFCL), with literal
  arguments (see `rods.envs.calls`);
* results are formatted as BFCL does: a `str` as is, a `dict` via
  `json.dumps` (falling back to `str`), anything else via `str`;
* failures become `"Error during execution: {e}"`; an unknown name reads
  `name 'foo' is not defined`, as `eval` would say; BFCL's refused names
  (`kill`, `exit`, ...) read `Function call kill is not allowed.`

Isolation: after loading, every instance is deep-copied (a pickle round trip),
so no instance shares mutable data with module-level tables a class hangs
into its instances (BFCL's long-context data does: `rods.envs.bfcl.classes`),
nor with another rollout.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from rods.envs import python as python_env
from rods.envs.calls import CallParseError, ToolCall, parse_call_text
from rods.envs.classes import (  # noqa: F401 - api_class & co. re-exported for callers
    api_class,
    freeze,
    load_frozen,
    load_instance,
    load_shared,
    method_owners,
    public_methods,
    thaw,
)
from rods.envs.domains import domain_of
from rods.envs.protocol import ERROR_PREFIX, Environment, ToolSpec
from rods.envs.schemas import tool_specs

if TYPE_CHECKING:
    from rods.tasks.model import Task

logger = logging.getLogger(__name__)

#: Names BFCL refuses before executing anything.
BLOCKED_NAMES = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})

_ATOMIC = (str, int, float, bool, type(None), bytes, complex)


def format_result(value: Any) -> str:
    """A return value as BFCL records it: str as is, dict as JSON (else str), anything else str."""
    if type(value) is str:
        return value
    if type(value) is dict:
        try:
            return json.dumps(value)
        except Exception:  # BFCL: bare except -> str()
            return str(value)
    return str(value)


class EnvTemplate:
    """A frozen environment state that spawns independent environments cheaply.

    Each class is frozen separately and thawed only when the rollout first calls
    one of its functions (or reads `instances`): untouched classes cost nothing,
    and the reward knows their state is the template's.
    """

    def __init__(
        self,
        blobs: dict[str, bytes],
        involved_classes: list[str],
        long_context: bool,
        owners: dict[str, str] | None = None,
    ):
        self.blobs = blobs
        self.involved_classes = list(involved_classes)
        self.long_context = long_context
        self.owners = owners if owners is not None else method_owners(self.involved_classes)

    @classmethod
    def of(cls, env: ToolEnvironment) -> EnvTemplate:
        """A template of an environment's current state (untouched classes keep their bytes)."""
        blobs = {c: env._frozen[c] if c in env._frozen else freeze(env._live[c]) for c in env.involved_classes}
        return cls(blobs, env.involved_classes, env.long_context, env.owners)

    @classmethod
    def load(cls, task: Task) -> EnvTemplate:
        """A template of a task's initial state (loaded as `ToolEnvironment(task)` would)."""
        classes = list(task.involved_classes)
        blobs = {c: load_frozen(c, task.initial_config, task.long_context) for c in classes}
        return cls(blobs, classes, task.long_context)

    @classmethod
    def load_with_state(cls, task: Task) -> tuple[EnvTemplate, dict[str, dict[str, Any]]]:
        """`load(task)` plus the initial public state, for immediate read-only use.

        The state's values may still be BFCL's module-level objects: compare with
        them right away, never keep or mutate them.
        """
        classes = list(task.involved_classes)
        loaded = {c: load_shared(c, task.initial_config, task.long_context) for c in classes}
        template = cls({c: freeze(inst) for c, inst in loaded.items()}, classes, task.long_context)
        return template, {c: public_state(inst) for c, inst in loaded.items()}

    def spawn(self) -> ToolEnvironment:
        """A new environment in the frozen state."""
        env = ToolEnvironment.__new__(ToolEnvironment)
        env.involved_classes, env.long_context = list(self.involved_classes), self.long_context
        env.owners = self.owners
        env._live, env._frozen, env.template, env._called = {}, dict(self.blobs), self, set()
        return env


class ToolEnvironment(Environment):
    """One rollout's executable tool surface: isolated instances + a safe executor.

    Build it from a `Task` (`ToolEnvironment(task)`) or from a raw config
    (`ToolEnvironment(initial_config, involved_classes, long_context=...)`).
    `fork()` gives an independent copy in its current state; `freeze()` an
    `EnvTemplate` that spawns copies cheaply (the reward's ground-truth cache
    keeps one per task, and rollouts spawn from it).

    Held-out (miss_func) functions are executable, as in BFCL: hiding them is the
    tool list's job, not the executor's.
    """

    def __init__(
        self,
        task_or_config: Task | Mapping[str, Any],
        involved_classes: Iterable[str] | None = None,
        *,
        long_context: bool | None = None,
    ):
        if hasattr(task_or_config, "initial_config") and hasattr(task_or_config, "involved_classes"):
            task = cast("Task", task_or_config)
            config: Mapping[str, Any] = task.initial_config
            classes = list(task.involved_classes)
            long = task.long_context if long_context is None else long_context
        else:
            if involved_classes is None:
                raise ValueError("involved_classes is required when building from a config")
            config, classes, long = task_or_config, list(involved_classes), bool(long_context)
        self.involved_classes: list[str] = classes
        self.long_context: bool = long
        self.owners = method_owners(classes)
        self.reset(config)

    # -- the environment protocol ---------------------------------------------

    def tools(self) -> list[ToolSpec]:
        """Every function of the involved classes (held-out ones too: hiding them is the prompt's job)."""
        return tool_specs(self.involved_classes)

    def reset(self, initial_config: Mapping[str, Any], seed: int | None = None) -> None:
        """Reload every involved class from `initial_config` (a Python class gets `seed`)."""
        self._live: dict[str, Any] = {
            cls: load_instance(cls, initial_config, self.long_context, seed) for cls in self.involved_classes
        }
        self._frozen: dict[str, bytes] = {}
        self._called: set[str] = set()
        #: The template this env was spawned from (None if loaded directly).
        self.template: EnvTemplate | None = None

    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Run `name(**arguments)`; the result text, or an `ERROR_PREFIX` message."""
        return self.execute(ToolCall(name, dict(arguments)))

    def snapshot(self) -> dict[str, Any]:
        """Class -> public state as plain JSON data (declared volatile attributes left out)."""
        return cast("dict[str, Any]", python_env.to_json(self.state()))

    def close(self) -> None:
        """Release what hosted environments hold (an MCP server goes back to its pool)."""
        for instance in self._live.values():
            if getattr(type(instance), "rods_snapshot", False):
                instance.close()

    @property
    def instances(self) -> dict[str, Any]:
        """Class -> this rollout's instance (all thawed; callers may inspect or mutate them)."""
        for cls in list(self._frozen):
            self.instance(cls)
        return self._live

    def instance(self, cls: str) -> Any:
        """One class's instance, thawed on first use."""
        live = self._live.get(cls)
        if live is None:
            live = self._live[cls] = thaw(self._frozen.pop(cls))
        return live

    def untouched(self, cls: str) -> bool:
        """True while a class's instance is still exactly its template's (never thawed)."""
        return cls in self._frozen

    def fork(self, classes: Iterable[str] | None = None) -> ToolEnvironment:
        """An independent deep copy of this environment in its current state.

        With `classes`, only those instances are copied and the others are
        shared: cheap copy-on-write for a caller that runs calls of those
        classes only and never mutates this environment again.
        """
        env = ToolEnvironment.__new__(ToolEnvironment)
        env.involved_classes, env.long_context = list(self.involved_classes), self.long_context
        env.owners = self.owners
        copied = set(self._live) if classes is None else set(classes)
        env._live = {cls: thaw(freeze(inst)) if cls in copied else inst for cls, inst in self._live.items()}
        env._frozen, env.template, env._called = dict(self._frozen), self.template, set(self._called)
        return env

    def take_called(self) -> set[str]:
        """Classes whose methods ran since the last call (then forgets them).

        BFCL's classes never reference each other, so a class not in this set
        has the same state as before.
        """
        called, self._called = self._called, set()
        return called

    def freeze(self) -> EnvTemplate:
        """This environment's current state as a template that spawns independent copies."""
        return EnvTemplate.of(self)

    # -- the tool surface ----------------------------------------------------

    @property
    def functions(self) -> frozenset[str]:
        """Names that can be called in this environment."""
        return frozenset(self.owners)

    def execute(self, call: str | ToolCall, formatter: Callable[[Any], str] = format_result) -> str:
        """Execute one call (text or `ToolCall`) and return its BFCL-formatted result.

        Never raises for bad model input: parse errors, unknown or refused names
        and exceptions inside the API all come back as `Error during execution: ...`.
        A text holding a list of calls runs them in order and returns `str` of
        their raw results, as BFCL's `eval` of a list would. `formatter` turns a
        single call's return value into its result (the reward passes one that
        skips formatting results no check can use).
        """
        if isinstance(call, ToolCall):
            try:
                return self._run(call, formatter)
            except Exception as err:
                return f"{ERROR_PREFIX}{err}"
        try:
            calls, container = parse_call_text(call)
        except CallParseError as err:
            return f"{ERROR_PREFIX}{err}"
        try:
            if container is None:
                return self._run(calls[0], formatter)
            return str(container(self._run(c) for c in calls))
        except Exception as err:
            return f"{ERROR_PREFIX}{err}"

    def execute_all(
        self, calls: Iterable[str | ToolCall], formatter: Callable[[Any], str] = format_result
    ) -> list[str]:
        """Execute calls in order; one formatted result per call."""
        return [self.execute(c, formatter) for c in calls]

    def _run(self, call: ToolCall, formatter: Callable[[Any], str] | None = None) -> Any:
        """Call the method; return its raw result, or `formatter(result)` if a formatter is given."""
        name = call.name
        if name in BLOCKED_NAMES:
            raise RuntimeError(f"Function call {name} is not allowed.")
        owner = self.owners.get(name)
        if owner is None:
            raise NameError(f"name '{name}' is not defined")
        method = getattr(self.instance(owner), name)
        self._called.add(owner)
        args, kwargs = call.args, call.arguments
        # Parsed calls are cached and shared: never let an API method keep (and
        # later mutate) an argument object that another rollout also holds.
        if not all(type(v) in _ATOMIC for v in args):
            args = copy.deepcopy(args)
        if not all(type(v) in _ATOMIC for v in kwargs.values()):
            kwargs = copy.deepcopy(kwargs)
        return domain_of(owner).invoke(owner, method, args, kwargs, formatter)

    # -- state ---------------------------------------------------------------

    def state(self) -> dict[str, dict[str, Any]]:
        """Class -> public attributes (live values): what BFCL's state checker compares."""
        return {cls: public_state(inst) for cls, inst in self.instances.items()}

    def __repr__(self) -> str:
        return f"ToolEnvironment({self.involved_classes}, long_context={self.long_context})"


def public_state(instance: Any) -> dict[str, Any]:
    """The attributes of an instance whose names do not start with `_` (minus any it declares volatile)."""
    kind = type(instance)
    if getattr(kind, "rods_snapshot", False):  # a protocol environment hosted by replay: its snapshot
        return cast("dict[str, Any]", instance.rods_state())
    skip = getattr(kind, python_env.VOLATILE_ATTRIBUTE, ())
    return {k: v for k, v in vars(instance).items() if not k.startswith("_") and k not in skip}
