"""Environments that only speak the protocol, hosted like an instance: copies by replay (docs/design.md §2.2).

The reward and the rollouts copy environments by pickling their instances
(`EnvTemplate`, `ToolEnvironment.fork`). An environment that only implements
the protocol (an MCP server, a user's own `Environment` subclass) cannot be
pickled, so it is hosted as one "class" of a `ToolEnvironment` by
`ReplayedEnvironment`: its tools are its methods, its state is its
`snapshot()`, and its pickle is the recipe (configuration, seed, calls so far)
that rebuilds it by resetting a fresh environment and replaying the calls.
Everything above `rods.envs` then treats it as any other class.

A class key names such an environment by a manifest path (`*.yaml`: an MCP
server, `rods.envs.mcp`) or by the import path of an `Environment` subclass.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from functools import cache
from typing import Any

from rods.envs.protocol import Environment, ToolSpec
from rods.tasks.model import MCP_MANIFEST_SUFFIXES

logger = logging.getLogger(__name__)

def is_manifest(key: str) -> bool:
    """Whether a class key names an MCP server's manifest (the task model's rule)."""
    return key.endswith(MCP_MANIFEST_SUFFIXES)


def factory(key: str) -> Callable[[], Environment]:
    """What builds a new (not yet reset) environment for a class key."""
    if is_manifest(key):
        from rods.envs.mcp import MCPEnvironment

        return lambda: MCPEnvironment(key)
    from rods.envs.python import load_class

    klass = load_class(key)
    if not issubclass(klass, Environment):
        raise ValueError(f"{key!r} is not an Environment subclass")
    return klass


def is_protocol_class(key: str) -> bool:
    """Whether a non-BFCL class key is hosted by replay (a manifest, or an `Environment` subclass)."""
    if is_manifest(key):
        return True
    from rods.envs.python import load_class

    return issubclass(load_class(key), Environment)


@cache
def tool_specs_of(key: str) -> tuple[ToolSpec, ...]:
    """The tools of a key's environment, read once per process from a fresh environment."""
    env = factory(key)()
    try:
        env.reset({})
        return tuple(env.tools())
    finally:
        env.close()


def tool_names(key: str) -> tuple[str, ...]:
    return tuple(spec.name for spec in tool_specs_of(key))


class ReplayedEnvironment:
    """One protocol environment as an instance: tools as methods, pickled as a replay recipe."""

    #: `public_state` reads `rods_state()` instead of the attributes (rods.envs.environment).
    rods_snapshot = True

    def __init__(
        self, key: str, config: dict[str, Any], seed: int | None = None, calls: tuple[tuple[str, dict], ...] = ()
    ):
        self._key, self._config, self._seed = key, config, seed
        self._env = factory(key)()
        self._env.reset({key: config}, seed)
        self._calls: list[tuple[str, dict[str, Any]]] = []
        for name, arguments in calls:
            self._call(name, **arguments)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in tool_names(self._key):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._call(name, *args, **kwargs)

    def _call(self, name: str, *args: Any, **arguments: Any) -> str:
        if args:
            raise TypeError(f"{name} takes keyword arguments only")
        self._calls.append((name, arguments))
        return self._env.call(name, arguments)

    @property
    def state_snapshot(self) -> Any:
        """The environment's snapshot: the one public attribute the reward compares."""
        return self._env.snapshot()

    def rods_state(self) -> dict[str, Any]:
        """The public state, as `public_state` reads it."""
        return {"state_snapshot": self._env.snapshot()}

    def __reduce__(self) -> tuple[Any, ...]:
        return ReplayedEnvironment, (self._key, self._config, self._seed, tuple(self._calls))

    def close(self) -> None:
        self._env.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown: the pool's own exit hook cleans up
            self.close()
