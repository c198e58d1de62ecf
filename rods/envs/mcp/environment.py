"""`MCPEnvironment`: an MCP server as a rods environment, one server per rollout (docs/design.md §2.8).

Tools come from the server's `list_tools`: their input schemas (without the
hidden arguments rods fills in, such as `repo_path`) and their annotations
(`readOnlyHint` -> "read"; annotated otherwise -> "write"; none -> "unknown").
`reset` takes a fresh server from the manifest's pool (a fresh copy of the
template) and runs the task's setup calls, if its configuration has any::

    initial_config = {"examples/mcp_git/manifest.yaml": {"calls": [{"name": ..., "arguments": {...}}]}}

A server process cannot be pickled, so a rollout is forked by replay: `fork()`
returns a new environment reset with the same configuration on which every
call made so far has run again, in order.
"""

from __future__ import annotations

import json
import logging
import threading
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcp.types import CallToolResult, TextContent, Tool

from rods.envs.mcp.client import ServerConnection, ServerError
from rods.envs.mcp.manifest import Manifest, fill_workdir, load_manifest
from rods.envs.mcp.pool import ServerPool
from rods.envs.mcp.state import read_state
from rods.envs.protocol import ERROR_PREFIX, Effect, Environment, ToolSpec, canonical_json

logger = logging.getLogger(__name__)

_SHARED_POOLS: dict[Path, ServerPool] = {}
_SHARED_POOLS_LOCK = threading.Lock()


#: Warm servers of a shared pool unless someone asks for more (`shared_pool(path, warm=K)`).
DEFAULT_WARM = 2


def shared_pool(manifest_path: str | Path, warm: int | None = None) -> ServerPool:
    """The process-wide pool of a manifest file (one per resolved path), created on first use.

    `warm`: keep at least this many servers started ahead (a trainer passes K, its rollouts per task).
    """
    key = Path(manifest_path).resolve()
    with _SHARED_POOLS_LOCK:  # rollouts of one step may open their environments from several threads
        pool = _SHARED_POOLS.get(key)
        if pool is None or pool.closed:
            pool = _SHARED_POOLS[key] = ServerPool(load_manifest(key), warm=DEFAULT_WARM if warm is None else warm)
        elif warm is not None:
            pool.grow(warm)
        return pool


def tool_effect(tool: Tool) -> Effect:
    """A tool's effect from its MCP annotations."""
    if tool.annotations is None:
        return "unknown"
    if tool.annotations.read_only_hint:
        return "read"
    return "write"


def tool_spec(tool: Tool, manifest: Manifest) -> ToolSpec:
    """The tool as the model sees it: the hidden arguments are not in its schema."""
    hidden = set(manifest.hidden_arguments)
    schema = dict(tool.input_schema)
    properties = {k: v for k, v in (schema.get("properties") or {}).items() if k not in hidden}
    schema["properties"] = properties
    schema["required"] = [r for r in schema.get("required", []) if r not in hidden]
    return ToolSpec(
        name=tool.name,
        description=tool.description or tool.title or tool.name,
        parameters=schema,
        effect=tool_effect(tool),
        group=manifest.name,
    )


def result_text(result: CallToolResult) -> str:
    """A tool result as text: its text parts, else its structured content; errors get `ERROR_PREFIX`."""
    parts = [part.text for part in result.content if isinstance(part, TextContent)]
    other = [part.type for part in result.content if not isinstance(part, TextContent)]
    text = "\n".join(parts)
    if not parts and result.structured_content is not None:
        text = canonical_json(result.structured_content)
    if other:
        text = (text + "\n" if text else "") + f"[{', '.join(other)} content omitted]"
    return ERROR_PREFIX + text if result.is_error else text


class MCPEnvironment(Environment):
    """One rollout's MCP server and working directory (see the module docstring)."""

    def __init__(self, manifest: str | Path, pool: ServerPool | None = None) -> None:
        """`manifest`: the manifest's path as tasks name it; `pool`: defaults to the path's shared pool."""
        self.pool = pool if pool is not None else shared_pool(manifest)
        self.manifest = self.pool.manifest
        #: The key of this environment in a task's `initial_config` (the manifest path as the task names it).
        self.key = str(manifest)
        self._connection: ServerConnection | None = None
        self._finalizer: weakref.finalize[Any, Any] = weakref.finalize(self, lambda: None)
        self._specs: dict[str, Tool] | None = None
        self._config: dict[str, Any] = {}
        self._seed: int | None = None
        #: Every call since `reset`, in order (what `fork` replays).
        self.calls: list[tuple[str, dict[str, Any]]] = []

    # -- the protocol ---------------------------------------------------------------------------------
    def tools(self) -> list[ToolSpec]:
        return [tool_spec(t, self.manifest) for t in self._tools().values()]

    def reset(self, initial_config: Mapping[str, Any], seed: int | None = None) -> None:
        """A fresh server on a fresh copy of the template, then the configuration's setup calls.

        Waits for the server to start (at once from a warm pool); raises `ServerError` if it
        cannot, with the end of its stderr: a server that never starts is a broken manifest,
        not a rollout's mistake.
        """
        config = dict(initial_config.get(self.key, {}) or {})
        unknown = set(config) - {"calls"}
        if unknown:
            raise ValueError(f"MCP environment {self.key!r}: unknown initial_config keys {sorted(unknown)}")
        self._release()
        self._config, self._seed = config, seed
        self._connection = self.pool.acquire()
        # An environment dropped without `close` still gives its server back (when collected).
        self._finalizer = weakref.finalize(self, self.pool.release, self._connection, False)
        try:
            self._connection.tools()  # a server that cannot start fails here, naming why
        except ServerError:
            self._release()
            raise
        self.calls = []
        for i, setup in enumerate(config.get("calls", [])):
            if not isinstance(setup, Mapping) or not isinstance(setup.get("name"), str):
                raise ValueError(f"MCP environment {self.key!r}: setup call {i} needs a 'name' (and 'arguments')")
            result = self._run(setup["name"], dict(setup.get("arguments", {})))
            if result.startswith(ERROR_PREFIX):
                raise ValueError(f"MCP environment {self.key!r}: setup call {i} ({setup['name']}) failed: {result}")

    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        if name not in self._tools():
            return f"{ERROR_PREFIX}name '{name}' is not defined"
        self.calls.append((name, dict(arguments)))
        return self._run(name, dict(arguments))

    def snapshot(self) -> Any:
        connection = self._live_connection()
        state = read_state(self.manifest.state, connection.workdir, self._run)
        return json.loads(canonical_json(state))

    def close(self) -> None:
        self._release()

    # -- forking by replay ------------------------------------------------------------------------------
    def fork(self) -> MCPEnvironment:
        """A new environment in this one's state: reset with the same configuration, every call replayed."""
        twin = MCPEnvironment(self.key, pool=self.pool)
        twin._specs = self._specs
        twin.reset({self.key: self._config}, self._seed)
        for name, arguments in self.calls:
            twin.call(name, arguments)
        return twin

    # -- internals --------------------------------------------------------------------------------------
    def _live_connection(self) -> ServerConnection:
        if self._connection is None:
            self.reset({}, None)
        assert self._connection is not None
        return self._connection

    def _tools(self) -> dict[str, Tool]:
        if self._specs is None:
            self._specs = {t.name: t for t in self._live_connection().tools()}
        return self._specs

    def _run(self, name: str, arguments: dict[str, Any]) -> str:
        """Run a tool with the hidden arguments filled in (the model's values for them are overridden)."""
        connection = self._live_connection()
        tool = self._tools().get(name)
        if tool is None:
            return f"{ERROR_PREFIX}name '{name}' is not defined"
        properties = tool.input_schema.get("properties") or {}
        for argument, value in self.manifest.hidden_arguments.items():
            if argument in properties:
                arguments[argument] = fill_workdir(value, connection.workdir)
        result = connection.call_tool(name, arguments, self.manifest.call_timeout_s)
        if isinstance(result, str):
            logger.info("MCP %s.%s failed: %s", self.manifest.name, name, result)
            return f"{ERROR_PREFIX}{result}"
        return result_text(result)

    def _release(self) -> None:
        if self._connection is not None:
            self._finalizer.detach()
            self.pool.release(self._connection)
            self._connection = None
