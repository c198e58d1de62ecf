"""Warm servers for one manifest, one per rollout, none left behind (docs/design.md §2.8).

Starting a server (a process, its imports, the MCP handshake, `list_tools`)
takes about 0.4 s for `mcp-server-git`, longer than most tool calls. The pool
keeps `warm` servers started ahead, each on its own fresh copy of the
manifest's template, so `acquire` usually hands one over at once and starts a
replacement in the background. A server is used by one rollout only and
stopped with it: its directory holds that rollout's state and is deleted.

Every pool stops its servers at `shutdown`, at interpreter exit (`atexit`), and
its stdio servers die with the pool's loop thread whatever happens to the
trainer (see `rods.envs.mcp.client`).
"""

from __future__ import annotations

import atexit
import itertools
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import weakref
from collections import deque
from pathlib import Path

from rods.envs.mcp.client import LoopThread, ServerConnection
from rods.envs.mcp.manifest import MANIFEST_DIR, PYTHON, Manifest, fill_workdir

logger = logging.getLogger(__name__)

_POOLS: weakref.WeakSet[ServerPool] = weakref.WeakSet()


class ServerPool:
    """Started servers of one manifest, handed out one per rollout."""

    def __init__(self, manifest: Manifest, warm: int = 2) -> None:
        if warm < 0:
            raise ValueError(f"ServerPool: warm must be >= 0, got {warm}")
        self.manifest = manifest
        self.warm = warm
        self._root = Path(tempfile.mkdtemp(prefix=f"rods-mcp-{manifest.name}-"))
        self._ids = itertools.count()
        self._lock = threading.Lock()
        self._ready: deque[ServerConnection] = deque()
        self._live: set[ServerConnection] = set()
        self._closed = False
        _POOLS.add(self)
        self._template = self._build_template()
        self._loop = LoopThread(manifest.name)
        self._refill()

    def _build_template(self) -> Path:
        """The state every rollout starts from: the manifest's template copied, then its `prepare` commands run."""
        template = self._root / "template"
        source = self.manifest.template_dir()
        if source is not None:
            shutil.copytree(source, template, symlinks=True)
        else:
            template.mkdir()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(template)}
        env |= fill_workdir(self.manifest.server.env, template)
        for command in self.manifest.prepare:
            argv = [
                a.replace(MANIFEST_DIR, str(self.manifest.base_dir)).replace(PYTHON, sys.executable) for a in command
            ]
            done = subprocess.run(argv, cwd=template, env=env, capture_output=True, text=True, timeout=120)
            if done.returncode != 0:
                shutil.rmtree(self._root, ignore_errors=True)
                raise ValueError(
                    f"MCP manifest {self.manifest.name!r}: prepare command {command} failed "
                    f"(exit {done.returncode}): {done.stderr.strip()[-2000:]}"
                )
        return template

    def _start(self) -> ServerConnection:
        """A new server on a new copy of the template (its start-up runs on the loop thread)."""
        slot = self._root / str(next(self._ids))
        workdir = slot / "work"
        shutil.copytree(self._template, workdir, symlinks=True)
        connection = ServerConnection(self.manifest, workdir, self._loop)
        self._live.add(connection)
        return connection

    def _refill(self) -> None:
        with self._lock:
            while not self._closed and len(self._ready) < self.warm:
                self._ready.append(self._start())

    def acquire(self) -> ServerConnection:
        """A started server no rollout has used, on its own fresh working directory."""
        with self._lock:
            if self._closed:
                raise RuntimeError(f"MCP pool {self.manifest.name!r} is shut down")
            connection = self._ready.popleft() if self._ready else self._start()
        self._refill()
        return connection

    def grow(self, warm: int) -> None:
        """Keep at least `warm` servers started ahead from now on (e.g. K, the rollouts of a task)."""
        if warm > self.warm:
            self.warm = warm
            self._refill()

    def prime(self) -> None:
        """Wait until every warm server has started (e.g. before the first training step)."""
        with self._lock:
            ready = list(self._ready)
        for connection in ready:
            connection.tools()

    def release(self, connection: ServerConnection, wait: bool = True) -> None:
        """Stop a rollout's server and delete its working directory (`wait=False`: do not wait for the stop)."""
        if wait:
            connection.close()
        else:
            connection.stop()
        with self._lock:
            self._live.discard(connection)
        shutil.rmtree(connection.workdir.parent, ignore_errors=True)

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def live(self) -> int:
        """Servers started and not yet released (warm ones included)."""
        return len(self._live)

    def shutdown(self) -> None:
        """Stop every server of this pool, warm or in use, and delete their directories."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            connections = list(self._live)
            self._ready.clear()
        for connection in connections:  # all asked to stop first: their grace periods overlap
            connection.stop()
        for connection in connections:
            self.release(connection)
        self._loop.stop()
        shutil.rmtree(self._root, ignore_errors=True)

    def __enter__(self) -> ServerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


@atexit.register
def shutdown_all() -> None:
    """Stop the servers of every pool still open (called at interpreter exit)."""
    for pool in list(_POOLS):
        pool.shutdown()
