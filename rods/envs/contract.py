"""The environment contract the layers above `rods.envs` use: what a rollout's environment offers them.

`rods.envs.protocol.Environment` is what a user implements (tools, reset,
call, snapshot, close). The reward, the rollouts and synthesis need a little
more of the environment a task runs in: its classes and who executes which
function, formatted execution of call text, copies (`fork`), templates that
spawn copies cheaply (`freeze`), and each class's state for the state check.
`RolloutEnvironment` and `FrozenEnvironment` list exactly that, as
`typing.Protocol`s; the layers above type against them, build environments
with the functions below, and never touch a private field of an environment
class (`tests/test_layers.py` checks both).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from rods.envs.calls import ToolCall
    from rods.envs.protocol import ToolSpec
    from rods.tasks.model import Task


class RolloutEnvironment(Protocol):
    """One rollout's tools and state, as the reward, the rollouts and synthesis use them."""

    #: The task's classes (class keys), in the task's order.
    involved_classes: list[str]
    #: Whether the classes loaded with BFCL's long-context flag (False elsewhere).
    long_context: bool
    #: Function name -> the class that executes it.
    owners: dict[str, str]

    @property
    def functions(self) -> frozenset[str]:
        """Names that can be called in this environment."""
        ...

    @property
    def instances(self) -> dict[str, Any]:
        """Class -> this rollout's instance."""
        ...

    def tools(self) -> list[ToolSpec]: ...

    def execute(self, call: str | ToolCall, formatter: Callable[[Any], str] = ...) -> str:
        """Run call text (or a parsed call); its result text, or an error result. Never raises for bad input."""
        ...

    def execute_all(self, calls: Iterable[str | ToolCall], formatter: Callable[[Any], str] = ...) -> list[str]: ...

    def instance(self, cls: str) -> Any:
        """One class's instance (what the state check reads)."""
        ...

    def untouched(self, cls: str) -> bool:
        """Whether a class is still exactly its template's (no call of it ran)."""
        ...

    def take_called(self) -> set[str]:
        """Classes whose functions ran since the last time this was asked."""
        ...

    def fork(self, classes: Iterable[str] | None = None) -> RolloutEnvironment:
        """An independent copy in the current state (`classes`: copy only those, share the rest)."""
        ...

    def freeze(self) -> FrozenEnvironment:
        """The current state as a template that spawns independent copies."""
        ...

    def state(self) -> dict[str, dict[str, Any]]:
        """Class -> public state (live values): what the state check compares."""
        ...

    def snapshot(self) -> Any: ...

    def close(self) -> None: ...


class FrozenEnvironment(Protocol):
    """A frozen state that spawns environments in it."""

    involved_classes: list[str]
    long_context: bool
    owners: dict[str, str]
    #: Class -> its instance frozen (`rods.envs.classes.freeze`): the reward re-freezes only what a turn touched.
    blobs: dict[str, bytes]

    def spawn(self) -> RolloutEnvironment: ...


def environment_for(task: Task) -> RolloutEnvironment:
    """A fresh environment in a task's initial state."""
    from rods.envs.environment import ToolEnvironment

    return ToolEnvironment(task)


def environment_from(initial_config: Mapping[str, Any], classes: Iterable[str], *,
                     long_context: bool = False) -> RolloutEnvironment:
    """A fresh environment of `classes` in the state `initial_config` describes."""
    from rods.envs.environment import ToolEnvironment

    return ToolEnvironment(initial_config, classes, long_context=long_context)


def template_for(task: Task) -> FrozenEnvironment:
    """A template of a task's initial state."""
    from rods.envs.environment import EnvTemplate

    return EnvTemplate.load(task)


def template_with_state(task: Task) -> tuple[FrozenEnvironment, dict[str, dict[str, Any]]]:
    """`template_for(task)` plus the initial public state (compare with it at once; never keep or mutate it)."""
    from rods.envs.environment import EnvTemplate

    return EnvTemplate.load_with_state(task)


def template_from(blobs: dict[str, bytes], classes: list[str], long_context: bool,
                  owners: dict[str, str]) -> FrozenEnvironment:
    """A template of frozen instances (`rods.envs.classes.freeze`), one per class."""
    from rods.envs.environment import EnvTemplate

    return EnvTemplate(blobs, classes, long_context, owners)
