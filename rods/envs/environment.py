"""Executable tool environments: per-rollout instances of the BFCL API classes.

A `ToolEnvironment` holds this rollout's own instances of a task's involved
classes, loaded as BFCL loads them (`_load_scenario(deepcopy(config),
long_context=...)`), and executes parsed calls on them. It mirrors the
observable behaviour of BFCL's executor (`execute_multi_turn_func_call`)
without its `eval` and without its module-global instance cache:

* only public methods of the involved instances can be called (a method name
  maps to the last involved class that has it, as in BFCL), with literal
  arguments (see `rods.envs.calls`);
* results are formatted as BFCL does: a `str` as is, a `dict` via
  `json.dumps` (falling back to `str`), anything else via `str`;
* failures become `"Error during execution: {e}"`; an unknown name reads
  `name 'foo' is not defined`, as `eval` would say; BFCL's refused names
  (`kill`, `exit`, ...) read `Function call kill is not allowed.`

Isolation: after loading, every instance's attributes are deep-copied, so no
instance shares mutable data with BFCL's module-level tables (the long-context
travel cards and bookings hang the module's own dicts into `credit_card_list`
and `booking_record`). The vehicle API's long-context weather dict is written
and returned in the same call (the written value comes from the instance's own
seeded `_random`), so nothing flows through it between rollouts. The MathAPI's
process-global precision (`mpmath.mp.dps`, the `decimal` context) is restored
after every call.
"""

from __future__ import annotations

import copy
import decimal
import importlib
import inspect
import json
import logging
import pickle
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from rods.envs.calls import CallParseError, ToolCall, parse_call_text

if TYPE_CHECKING:
    from rods.tasks.model import Task

logger = logging.getLogger(__name__)

_BACKEND = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
#: Class name -> module of the BFCL API classes used by the multi-turn categories.
CLASS_MODULES = {
    "GorillaFileSystem": f"{_BACKEND}.gorilla_file_system",
    "MathAPI": f"{_BACKEND}.math_api",
    "MessageAPI": f"{_BACKEND}.message_api",
    "TwitterAPI": f"{_BACKEND}.posting_api",
    "TicketAPI": f"{_BACKEND}.ticket_api",
    "TradingBot": f"{_BACKEND}.trading_bot",
    "TravelAPI": f"{_BACKEND}.travel_booking",
    "VehicleControlAPI": f"{_BACKEND}.vehicle_control",
}
#: Classes without a scenario to load (BFCL's STATELESS_CLASSES).
STATELESS_CLASSES = frozenset({"MathAPI"})
#: Names BFCL refuses before executing anything.
BLOCKED_NAMES = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})
ERROR_PREFIX = "Error during execution: "

_ATOMIC = (str, int, float, bool, type(None), bytes, complex)


@lru_cache(maxsize=None)
def api_class(name: str) -> type:
    """The BFCL API class of that name (imported on first use)."""
    if name not in CLASS_MODULES:
        raise ValueError(f"unknown API class {name!r}; expected one of {sorted(CLASS_MODULES)}")
    return getattr(importlib.import_module(CLASS_MODULES[name]), name)


@lru_cache(maxsize=None)
def public_methods(name: str) -> tuple[str, ...]:
    """Names of the public methods of an API class, as BFCL maps them (bound, not `_`)."""
    instance = api_class(name)()
    return tuple(m for m, _ in inspect.getmembers(instance, predicate=inspect.ismethod) if not m.startswith("_"))


def method_owners(involved_classes: Iterable[str]) -> dict[str, str]:
    """Function name -> class that executes it; on a clash the last class wins (as in BFCL)."""
    owners: dict[str, str] = {}
    for cls in involved_classes:
        for method in public_methods(cls):
            owners[method] = cls
    return owners


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


def load_instances(initial_config: Mapping[str, Any], involved_classes: Iterable[str], long_context: bool) -> dict[str, Any]:
    """Fresh, isolated instances of the involved classes, loaded from the initial config."""
    instances: dict[str, Any] = {}
    for cls in involved_classes:
        instance = api_class(cls)()
        if cls not in STATELESS_CLASSES:
            instance._load_scenario(copy.deepcopy(dict(initial_config.get(cls, {}))), long_context=long_context)
        instances[cls] = instance
    # Own every attribute: cut references into BFCL's module-level tables.
    return copy_instances(instances)


def copy_instances(instances: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of a set of instances (shared references stay shared).

    A pickle round trip: the same result as `copy.deepcopy` for these plain
    data objects, about 3x faster (deepcopy walks a seeded `random.Random`'s
    625-word state in Python).
    """
    return pickle.loads(freeze_instances(instances))


def freeze_instances(instances: dict[str, Any]) -> bytes:
    """The instances as bytes, to be thawed into independent copies by `pickle.loads`."""
    try:
        return pickle.dumps(instances, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError) as err:
        raise RuntimeError(f"environment state cannot be copied: {err}") from err


class EnvTemplate:
    """A frozen environment state that spawns independent environments cheaply."""

    def __init__(self, env: ToolEnvironment):
        self._blob = freeze_instances(env.instances)
        self.involved_classes = list(env.involved_classes)
        self.long_context = env.long_context
        self._owners = dict(env._owners)

    def spawn(self) -> ToolEnvironment:
        """A new environment in the frozen state."""
        return ToolEnvironment._from_instances(
            pickle.loads(self._blob), list(self.involved_classes), self.long_context, self._owners
        )


class ToolEnvironment:
    """One rollout's executable tool surface: isolated instances + a safe executor.

    Build it from a `Task` (`ToolEnvironment(task)`) or from a raw config
    (`ToolEnvironment(initial_config, involved_classes, long_context=...)`).
    `fork()` gives an independent copy in its current state (cheaper than
    reloading; the reward's ground-truth cache uses it).

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
            task = task_or_config
            config, classes = task.initial_config, list(task.involved_classes)
            long = task.long_context if long_context is None else long_context
        else:
            if involved_classes is None:
                raise ValueError("involved_classes is required when building from a config")
            config, classes, long = task_or_config, list(involved_classes), bool(long_context)
        self.involved_classes: list[str] = classes
        self.long_context: bool = long
        self.instances: dict[str, Any] = load_instances(config, classes, long)
        self._owners = method_owners(classes)

    @classmethod
    def _from_instances(cls, instances: dict[str, Any], classes: list[str], long: bool, owners: dict[str, str]) -> ToolEnvironment:
        env = cls.__new__(cls)
        env.involved_classes, env.long_context, env.instances, env._owners = classes, long, instances, owners
        return env

    def fork(self) -> ToolEnvironment:
        """An independent deep copy of this environment in its current state."""
        return self._from_instances(copy_instances(self.instances), list(self.involved_classes), self.long_context, self._owners)

    def freeze(self) -> EnvTemplate:
        """This environment's current state as a template that spawns independent copies."""
        return EnvTemplate(self)

    # -- the tool surface ----------------------------------------------------

    @property
    def functions(self) -> frozenset[str]:
        """Names that can be called in this environment."""
        return frozenset(self._owners)

    def execute(self, call: str | ToolCall) -> str:
        """Execute one call (text or `ToolCall`) and return its BFCL-formatted result.

        Never raises for bad model input: parse errors, unknown or refused names
        and exceptions inside the API all come back as `Error during execution: ...`.
        A text holding a list of calls runs them in order and returns `str` of
        their raw results, as BFCL's `eval` of a list would.
        """
        if isinstance(call, ToolCall):
            try:
                return format_result(self._run(call))
            except Exception as err:
                return f"{ERROR_PREFIX}{err}"
        try:
            calls, container = parse_call_text(call)
        except CallParseError as err:
            return f"{ERROR_PREFIX}{err}"
        try:
            if container is None:
                return format_result(self._run(calls[0]))
            return str(container(self._run(c) for c in calls))
        except Exception as err:
            return f"{ERROR_PREFIX}{err}"

    def execute_all(self, calls: Iterable[str | ToolCall]) -> list[str]:
        """Execute calls in order; one formatted result per call."""
        return [self.execute(c) for c in calls]

    def _run(self, call: ToolCall) -> Any:
        name = call.name
        if name in BLOCKED_NAMES:
            raise RuntimeError(f"Function call {name} is not allowed.")
        owner = self._owners.get(name)
        if owner is None:
            raise NameError(f"name '{name}' is not defined")
        method = getattr(self.instances[owner], name)
        args, kwargs = call.args, call.arguments
        # Parsed calls are cached and shared: never let an API method keep (and
        # later mutate) an argument object that another rollout also holds.
        if not all(type(v) in _ATOMIC for v in args):
            args = copy.deepcopy(args)
        if not all(type(v) in _ATOMIC for v in kwargs.values()):
            kwargs = copy.deepcopy(kwargs)
        if owner == "MathAPI":
            return _run_isolating_precision(method, args, kwargs)
        return method(*args, **kwargs)

    # -- state ---------------------------------------------------------------

    def state(self) -> dict[str, dict[str, Any]]:
        """Class -> public attributes (live values): what BFCL's state checker compares."""
        return {cls: public_state(inst) for cls, inst in self.instances.items()}

    def snapshot(self) -> dict[str, dict[str, Any]]:
        """A deep copy of `state()`, safe to keep while the environment moves on."""
        return copy.deepcopy(self.state())

    def __repr__(self) -> str:
        return f"ToolEnvironment({self.involved_classes}, long_context={self.long_context})"


def public_state(instance: Any) -> dict[str, Any]:
    """The attributes of an instance whose names do not start with `_`."""
    return {k: v for k, v in vars(instance).items() if not k.startswith("_")}


def _run_isolating_precision(method: Any, args: tuple, kwargs: dict) -> Any:
    """Run a MathAPI method without leaking its process-global precision changes."""
    import mpmath

    dps = mpmath.mp.dps
    try:
        with decimal.localcontext():
            return method(*args, **kwargs)
    finally:
        mpmath.mp.dps = dps
