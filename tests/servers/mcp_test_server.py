"""A misbehaving-on-request MCP server for the MCP environment tests.

Notes live in `<workspace>/notes.json`; the `workspace` argument is the kind rods
fills in and hides. `nap` hangs, `crash` kills the process, `garble` writes a
line that is not JSON-RPC to stdout and never answers. In memory:
`servers.mcp_test_server:build_server`; as a subprocess: `python <this file> --dir DIR`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations


def build_server(workdir: Path | str) -> MCPServer:
    server = MCPServer("rods-test-notes", log_level="WARNING")
    root = Path(workdir)

    def notes_file(workspace: str) -> Path:
        return Path(workspace) / "notes.json"

    @server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
    def add_note(workspace: str, title: str, text: str) -> str:
        """Save a note under a title."""
        path = notes_file(workspace)
        notes = json.loads(path.read_text()) if path.exists() else {}
        notes[title] = text
        path.write_text(json.dumps(notes, sort_keys=True))
        return f"saved {title}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def read_notes(workspace: str) -> str:
        """All notes as JSON."""
        path = notes_file(workspace)
        return path.read_text() if path.exists() else "{}"

    @server.tool()
    def where() -> str:
        """The server's working directory (no annotations: effect unknown)."""
        return f"{os.getcwd()} {root}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def env_var(name: str) -> str:
        """One environment variable of the server process ('' when unset)."""
        return os.environ.get(name, "")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def nap(seconds: float) -> str:
        """Sleep, then answer."""
        await asyncio.sleep(seconds)
        return "rested"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def crash() -> str:
        """Kill the server process without a word."""
        os._exit(3)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def garble() -> str:
        """Write a line that is not JSON-RPC to stdout, then never answer."""
        os.write(1, b"this is not json {{{\n")
        await asyncio.sleep(3600)
        return "unreachable"

    return server


def broken_server(workdir: Path | str) -> MCPServer:
    """A server that cannot start."""
    raise RuntimeError(f"no database in {workdir}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", default=".")
    build_server(parser.parse_args().dir).run("stdio")
