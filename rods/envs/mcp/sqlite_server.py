"""A small MCP server over a real SQLite file: rods' SQLite test bed and its in-memory test server.

PyPI `mcp-server-sqlite` (2025.4.25) does not start on the `mcp` SDK v2 that
rods pins (it calls `Server.list_resources`, gone in v2), so this server offers
the same SQL tools with the SDK's `MCPServer`: `list_tables`, `describe_table`,
`read_query` (read-only), `write_query`, `create_table` (write). Each rollout's
server opens its own copy of the database file.

In memory (fast tests, no subprocess): `server.python: rods.envs.mcp.sqlite_server:build_server`.
As a stdio subprocess: `python -m rods.envs.mcp.sqlite_server --db {workdir}/shop.db`.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

#: The database file inside a rollout's working directory.
DB_FILE = "shop.db"

_READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False)


def _rows(cursor: sqlite3.Cursor) -> str:
    names = [d[0] for d in cursor.description or []]
    return json.dumps([dict(zip(names, row)) for row in cursor.fetchall()])


def _checked(query: str, starts: tuple[str, ...], message: str) -> str:
    if not query.strip().upper().startswith(starts):
        raise ToolError(message)
    return query


def _execute(connection: sqlite3.Connection, query: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
    """Run SQL; SQLite's own message reaches the model (a ToolError), not a server crash."""
    try:
        return connection.execute(query, params)
    except sqlite3.Error as e:
        raise ToolError(f"{type(e).__name__}: {e}") from e


def build_server(workdir: Path | str, db_file: str = DB_FILE) -> MCPServer:
    """A server over `workdir/db_file` (created if missing)."""
    db = Path(workdir) / db_file

    def connect() -> sqlite3.Connection:
        return sqlite3.connect(db)

    server = MCPServer("rods-sqlite", log_level="WARNING")  # its tool errors are results, not log lines

    @server.tool(annotations=_READ)
    def list_tables() -> str:
        """List the tables of the database."""
        with connect() as c:
            names = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
        return json.dumps(names)

    @server.tool(annotations=_READ)
    def describe_table(table_name: str) -> str:
        """Show the columns of a table (name, type, not null, default, primary key)."""
        with connect() as c:
            if not c.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (table_name,)).fetchone():
                raise ToolError(f"no table named {table_name!r}")
            info = "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?)"
            return _rows(_execute(c, info, (table_name,)))

    @server.tool(annotations=_READ)
    def read_query(query: str) -> str:
        """Run a SELECT query and return its rows as JSON objects."""
        _checked(query, ("SELECT", "WITH"), "read_query runs SELECT queries only")
        c = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return _rows(_execute(c, query))
        finally:
            c.close()

    @server.tool(annotations=_WRITE)
    def write_query(query: str) -> str:
        """Run an INSERT, UPDATE or DELETE query; returns the number of rows it changed."""
        _checked(query, ("INSERT", "UPDATE", "DELETE", "REPLACE"), "write_query runs INSERT, UPDATE or DELETE only")
        with connect() as c:
            changed = _execute(c, query).rowcount
        return json.dumps({"affected_rows": changed})

    @server.tool(annotations=_WRITE)
    def create_table(query: str) -> str:
        """Create a table with a CREATE TABLE statement."""
        _checked(query, ("CREATE TABLE",), "create_table runs CREATE TABLE statements only")
        with connect() as c:
            _execute(c, query)
        return "table created"

    return server


def _main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, type=Path, help="the SQLite file to serve")
    args = parser.parse_args(argv)
    build_server(args.db.parent, args.db.name).run("stdio")


if __name__ == "__main__":
    _main()
