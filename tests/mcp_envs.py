"""The SQLite example's server reached in memory, in a folder of its own: MCP tests without subprocesses."""

import shutil
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "mcp_sqlite"

MANIFEST = """
name: sqlite
server: {python: "rods.envs.mcp.sqlite_server:build_server"}
prepare: [["{python}", "{manifest_dir}/make_db.py"]]
state: [{kind: sqlite, path: shop.db}]
call_timeout_s: 30
"""


def in_memory_sqlite(where: Path) -> str:
    """Write the manifest and the example's database script into `where`; returns the manifest's path (the key)."""
    where.mkdir(parents=True, exist_ok=True)
    for name in ("make_db.py", "shop.sql"):
        shutil.copy(EXAMPLE / name, where / name)
    (where / "manifest.yaml").write_text(MANIFEST)
    return str(where / "manifest.yaml")
