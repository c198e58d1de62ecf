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
import itertools
import logging
import os
import threading
import weakref
from collections.abc import Callable
from functools import cache
from typing import Any

from rods.envs.protocol import ERROR_PREFIX, Environment, ToolSpec
from rods.tasks.record import MCP_MANIFEST_SUFFIXES

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


class _Host:
    """One live environment and the state-changing calls it ran since its reset, shared by the copies in that state.

    Its state is named by (configuration, seed, write calls): read-only tools
    (`effect == "read"`) do not change it, so copies that only read share it.
    """

    def __init__(self, key: str, config: dict[str, Any], seed: int | None):
        self.key, self.config, self.seed = key, config, seed
        self.env = factory(key)()
        self.env.reset({key: config}, seed)
        self.writes: tuple[tuple[str, dict[str, Any]], ...] = ()
        #: (writes, snapshot): the last snapshot read, and the state it was read in.
        self.seen: tuple[tuple, Any] | None = None
        self.lock = threading.RLock()
        self.users = 0
        self.token = f"{os.getpid()}:{next(_TOKENS)}"
        with _HOSTS_LOCK:
            _HOSTS[self.token] = self

    def holds(self, key: str, config: dict[str, Any], seed: int | None, writes: tuple) -> bool:
        """Whether this host is in the state these calls lead to."""
        return (self.key, self.config, self.seed, self.writes) == (key, config, seed, writes)

    def release(self) -> None:
        """One user fewer; the last one gives the environment (its server) back."""
        with self.lock:
            self.users -= 1
            last = self.users <= 0
        if last:
            with _HOSTS_LOCK:
                _HOSTS.pop(self.token, None)
            self.env.close()


_HOSTS: weakref.WeakValueDictionary[str, _Host] = weakref.WeakValueDictionary()
_HOSTS_LOCK = threading.Lock()
_TOKENS = itertools.count()


def is_read_only(key: str, name: str) -> bool:
    """Whether a tool declares that it does not change the state (MCP `readOnlyHint`, `@tool("read")`)."""
    return any(spec.name == name and spec.effect == "read" for spec in tool_specs_of(key))


class ReplayedEnvironment:
    """One protocol environment as an instance: tools as methods, pickled as a replay recipe.

    Copies share one live environment while they are in the same state (see
    `_Host`): a copy made in this process (`ToolEnvironment.fork`, a frozen
    template thawed) starts on its original's environment, the first copy that
    changes the state takes it over, and a copy whose state the environment no
    longer holds rebuilds its own by replay when it is next used. Copying is
    then free until a copy writes, which is what synthesis's trial calls need
    (most trials read, or are the only copy that goes on).
    """

    #: `public_state` reads `rods_state()` instead of the attributes (rods.envs.environment).
    rods_snapshot = True

    def __init__(
        self, key: str, config: dict[str, Any], seed: int | None = None, calls: tuple[tuple[str, dict], ...] = ()
    ):
        self._key, self._config, self._seed = key, config, seed
        self._calls: list[tuple[str, dict[str, Any]]] = []
        self._writes: tuple[tuple[str, dict[str, Any]], ...] = ()
        self._host: _Host | None = None
        self._live()  # a server that cannot start, or a bad setup call, fails here
        for name, arguments in calls:
            self._call(name, **arguments)

    @classmethod
    def _thaw(cls, key: str, config: dict[str, Any], seed: int | None, calls: tuple[tuple[str, dict], ...],
              writes: tuple[int, ...], token: str | None) -> ReplayedEnvironment:
        """A copy (unpickled): on the host it was copied from while that holds its state, else rebuilt when used.

        `writes`: the positions in `calls` of the calls that changed the state (or may have).
        """
        self = cls.__new__(cls)
        self._key, self._config, self._seed = key, config, seed
        self._calls = [(name, dict(arguments)) for name, arguments in calls]
        self._writes = tuple(self._calls[i] for i in writes)
        self._host = None
        with _HOSTS_LOCK:
            host = _HOSTS.get(token) if token is not None else None
        if host is not None:
            with host.lock:
                if host.users > 0 and host.holds(key, config, seed, self._writes):
                    host.users += 1
                    self._host = host
        return self

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in tool_names(self._key):
            raise AttributeError(name)
        return lambda *args, **kwargs: self._call(name, *args, **kwargs)

    def _live(self) -> _Host:
        """The host in this copy's state, locked by the caller; rebuilt by replay if no host holds it."""
        host = self._host
        if host is not None and host.holds(self._key, self._config, self._seed, self._writes):
            return host
        if host is not None:
            self._host = None
            host.release()
        host = _Host(self._key, self._config, self._seed)
        host.users = 1
        self._host = host
        with host.lock:
            for name, arguments in self._calls:
                host.env.call(name, dict(arguments))
            host.writes = self._writes
        return host

    def _call(self, name: str, /, *args: Any, **arguments: Any) -> str:  # a tool may take `name` too
        if args:
            raise TypeError(f"{name} takes keyword arguments only")
        while True:
            host = self._live()
            with host.lock:
                if not host.holds(self._key, self._config, self._seed, self._writes):
                    continue  # another copy changed it meanwhile
                self._calls.append((name, arguments))
                result = host.env.call(name, dict(arguments))
                if not is_read_only(self._key, name) and not self._failed_in_place(host, result):
                    host.writes += ((name, arguments),)  # this copy takes the host over
                    self._writes = host.writes
                return result

    def _failed_in_place(self, host: _Host, result: str) -> bool:
        """An error result that left the state as it was (compared with the last snapshot read, if current).

        Such a call is no write: copies in the state before it keep sharing the host (a synthesis trial that
        fails does not cost the next trial a server start).
        """
        if not result.startswith(ERROR_PREFIX) or host.seen is None or host.seen[0] != host.writes:
            return False
        return bool(host.env.snapshot() == host.seen[1])

    def _snapshot(self) -> Any:
        while True:
            host = self._live()
            with host.lock:
                if host.holds(self._key, self._config, self._seed, self._writes):
                    snapshot = host.env.snapshot()
                    host.seen = (host.writes, snapshot)
                    return snapshot

    @property
    def state_snapshot(self) -> Any:
        """The environment's snapshot: the one public attribute the reward compares."""
        return self._snapshot()

    def rods_state(self) -> dict[str, Any]:
        """The public state, as `public_state` reads it."""
        return {"state_snapshot": self._snapshot()}

    def __reduce__(self) -> tuple[Any, ...]:
        token = self._host.token if self._host is not None else None
        writes, at = [], 0
        for i, call in enumerate(self._calls):  # positions of the write calls, a subsequence of the calls
            if at < len(self._writes) and call == self._writes[at]:
                writes.append(i)
                at += 1
        return ReplayedEnvironment._thaw, (self._key, self._config, self._seed, tuple(self._calls), tuple(writes),
                                           token)

    def close(self) -> None:
        host, self._host = getattr(self, "_host", None), None
        if host is not None:
            host.release()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown: the pool's own exit hook cleans up
            self.close()
