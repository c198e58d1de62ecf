"""The MCP domain's hooks (`rods.envs.domain.Domain`): an MCP server named by its manifest, hosted by replay."""

from __future__ import annotations

from typing import Any

from rods.envs.python.domain import ProtocolDomain
from rods.tasks.record import MCP_MANIFEST_SUFFIXES


class McpDomain(ProtocolDomain):
    """An MCP server (`rods.envs.mcp.MCPEnvironment`): tools from `list_tools`, errors from `isError`."""

    name = "mcp"

    def owns(self, key: str) -> bool:
        return key.endswith(MCP_MANIFEST_SUFFIXES)

    def build_vocabulary(self, key: str) -> frozenset[str]:
        from rods.envs.python.vocabulary import class_vocabulary

        return class_vocabulary(self.load_class(key), self.tool_docs(key))

    def report_group(self, task: Any) -> str:
        name = self.manifest_name(task.environment)
        return name if task.category == "base" else f"{name} {task.category}"

    @staticmethod
    def manifest_name(key: str) -> str:
        from rods.envs.mcp.manifest import load_manifest

        try:
            return load_manifest(key).name
        except Exception:  # an unreadable manifest is reported where it is loaded
            return key


DOMAIN = McpDomain()
