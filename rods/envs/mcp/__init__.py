"""MCP servers as environments: one server process and one state copy per rollout (docs/design.md §2.8).

`manifest` (YAML: how to start the server, what rods fills in, how to read the
state) -> `client` (the one adapter over the `mcp` SDK; sync calls on an event-
loop thread, timeouts) -> `pool` (warm servers, none left behind) -> `state`
(the snapshot kinds) -> `environment` (`MCPEnvironment`, the protocol).
Needs the `mcp` extra (`pip install 'rods[mcp]'`).
"""

try:
    import mcp  # noqa: F401 - checked first, to name the missing extra
except ImportError as e:  # pragma: no cover - the extra is installed wherever the tests run
    raise ImportError("rods.envs.mcp needs the MCP SDK: pip install 'rods[mcp]' (mcp>=2.3,<3)") from e

from rods.envs.mcp.client import ServerError
from rods.envs.mcp.environment import MCPEnvironment, shared_pool, tool_effect, tool_spec
from rods.envs.mcp.manifest import Manifest, ServerSpec, StateSpec, load_manifest
from rods.envs.mcp.pool import ServerPool, shutdown_all

__all__ = [
    "MCPEnvironment",
    "Manifest",
    "ServerError",
    "ServerPool",
    "ServerSpec",
    "StateSpec",
    "load_manifest",
    "shared_pool",
    "shutdown_all",
    "tool_effect",
    "tool_spec",
]
