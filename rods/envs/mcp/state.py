"""An MCP environment's state as canonical JSON, read the way its manifest says (docs/design.md §2.8).

The server's own view of its state is whatever it stores; rods reads it from
the rollout's working directory (or asks a read-only tool), so two rollouts
that did the same thing read alike:

* `dir`: every file under a path -> the SHA-256 of its content (`ignore`
  globs leave volatile files out);
* `git`: the checked-out branch, each branch's tree and commit messages
  (first-parent history), the index and the working tree's status; never
  commit ids or dates, which depend on the clock;
* `sqlite`: each table's schema and its rows, sorted;
* `tool`: a read-only tool's result (parsed as JSON when it is JSON);
* `python`: `function(workdir)` of the user's own.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
from collections.abc import Callable
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from rods.envs.mcp.manifest import StateSpec, import_object
from rods.envs.protocol import canonical_json

#: Runs a tool and returns its result text (the environment's own call path, hidden arguments filled).
ToolRunner = Callable[[str, dict[str, Any]], str]


def read_state(specs: list[StateSpec], workdir: Path, run_tool: ToolRunner) -> dict[str, Any]:
    """The snapshot: one entry per state spec, under its key."""
    return {spec.key: _read_one(spec, workdir, run_tool) for spec in specs}


def _read_one(spec: StateSpec, workdir: Path, run_tool: ToolRunner) -> Any:
    where = (workdir / spec.path).resolve()
    if spec.kind == "dir":
        return dir_state(where, spec.ignore)
    if spec.kind == "git":
        return git_state(where)
    if spec.kind == "sqlite":
        return sqlite_state(where)
    if spec.kind == "tool":
        assert spec.tool is not None
        text = run_tool(spec.tool, dict(spec.arguments))
        try:
            return json.loads(text)
        except ValueError:
            return text
    assert spec.function is not None
    return json.loads(canonical_json(import_object(spec.function)(workdir)))


def dir_state(root: Path, ignore: list[str] | None = None) -> dict[str, str]:
    """Relative path -> SHA-256 of the content, for every file under `root` not matched by `ignore`."""
    ignore = ignore or []
    state: dict[str, str] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        rel = path.relative_to(root).as_posix()
        if any(fnmatch(rel, pattern) or fnmatch(path.name, pattern) for pattern in ignore):
            continue
        state[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "core.quotepath=off", *args],
        capture_output=True,
        text=True,
        timeout=30,
        env={"PATH": "/usr/bin:/bin:/usr/local/bin", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(repo)},
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} in {repo}: {done.stderr.strip()}")
    return done.stdout


def git_state(repo: Path) -> dict[str, Any]:
    """A repository's content and history without commit ids or dates."""
    head = _git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    if head == "HEAD":  # detached: name it by its tree
        head = "detached:" + _git(repo, "rev-parse", "HEAD^{tree}").strip()
    branches: dict[str, Any] = {}
    for name in _git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads").split():
        messages = _git(repo, "log", "--first-parent", "--format=%B%x00", name).split("\x00")
        branches[name] = {
            "tree": _git(repo, "rev-parse", f"{name}^{{tree}}").strip(),
            "messages": [m.strip() for m in messages if m.strip()],
        }
    index = {}
    for line in _git(repo, "ls-files", "--stage").splitlines():
        meta, path = line.split("\t", 1)
        index[path] = meta.split()[1]
    status = sorted(_git(repo, "status", "--porcelain=v1", "--untracked-files=all").splitlines())
    return {"head": head, "branches": branches, "index": index, "status": status}


def sqlite_state(db: Path) -> dict[str, Any]:
    """Each table's schema and rows (sorted), read without writing the file."""
    if not db.is_file():
        raise FileNotFoundError(f"sqlite state: no database file at {db}")
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = connection.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall()
        state: dict[str, Any] = {}
        for name, sql in tables:
            quoted = '"' + name.replace('"', '""') + '"'
            rows = [list(row) for row in connection.execute(f"SELECT * FROM {quoted}")]
            state[name] = {"schema": sql, "rows": sorted(rows, key=canonical_json)}
        return state
    finally:
        connection.close()
