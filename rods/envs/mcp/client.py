"""The one adapter over the official `mcp` SDK (v2): start a server, list its tools, call them (docs/design.md §2.8).

The SDK is async; rods' environments are sync (`Environment.call`). Each pool
owns one event-loop thread (`LoopThread`); every server session of the pool
lives there as one long-running task that holds the SDK's `Client` open, and
the sync side hands it coroutines with `run_coroutine_threadsafe`, waiting at
most the call timeout. One loop per pool rather than one per server: a loop is
a thread, and sixteen rollouts need sixteen servers, not sixteen threads; the
sessions only wait on pipes, so one loop serves them all.

What can go wrong with an untrusted server ends the call, not the trainer:

* a call past its timeout is cancelled and its server stopped (the state of a
  half-run call is unknown, so the environment's later calls fail too);
* a server that dies (killed, crashed) fails the pending call at once: the
  SDK closes the session when the pipe closes;
* output that is not JSON-RPC never answers the request: the timeout ends it.

Stdio servers start through a small guard that asks Linux to SIGKILL them when
the thread that started them dies (`PR_SET_PDEATHSIG`), so even `kill -9` of
the trainer leaves no server behind; the SDK starts each in its own session
(process group), so a signal to the trainer's group does not reach them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import sys
import threading
from collections.abc import Coroutine
from concurrent.futures import Future, TimeoutError as FutureTimeout
from pathlib import Path
from typing import IO, Any, TypeVar

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult, Tool

from rods.envs.mcp.manifest import PYTHON, Manifest, fill_workdir, import_object

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Runs before the server's own command: die with the starting thread, then become the server.
_GUARD = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)\n"  # PR_SET_PDEATHSIG
    "if os.getppid() != int(sys.argv[1]): os._exit(1)\n"  # the parent died before prctl
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


class ServerError(RuntimeError):
    """A server could not start or list its tools."""


def _stderr_tail(path: Path, lines: int = 15) -> str:
    """The last lines the server wrote to stderr, to say why it did not start."""
    try:
        tail = path.read_text(errors="replace").strip().splitlines()[-lines:]
    except OSError:
        return ""
    return ("; its stderr ended with:\n" + "\n".join(tail)) if tail else ""


class LoopThread:
    """An asyncio loop on a daemon thread, for the sessions of one pool."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=f"rods-mcp-{name}", daemon=True)
        self._thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self.loop.close()


class ServerConnection:
    """One started server (its own process and working directory) and its open session."""

    def __init__(self, manifest: Manifest, workdir: Path, loop: LoopThread) -> None:
        self.manifest = manifest
        self.workdir = workdir
        self._loop = loop
        self._client: Client | None = None
        self._stop: asyncio.Event | None = None
        self._ready: Future[list[Tool]] = Future()
        self._closed = False
        #: Why calls fail from now on (a timeout, a dead server); None while healthy.
        self.broken: str | None = None
        self._serving = loop.submit(self._serve())

    async def _serve(self) -> None:
        """Hold the session open until `close`; report readiness (or the start-up error) through `_ready`."""
        self._stop = asyncio.Event()
        errlog: IO[str] | None = None
        try:
            if self.manifest.server.python is not None:
                factory = import_object(self.manifest.server.python)
                target: Any = factory(self.workdir)
            else:
                errlog = open(self.workdir.parent / "server.stderr", "w")  # noqa: SIM115 - closed below
                target = stdio_client(self._stdio_parameters(), errlog=errlog)
            async with Client(target, cache=None) as client:
                self._client = client
                listed = await client.list_tools()
                self._ready.set_result(list(listed.tools))
                await self._stop.wait()
        except BaseException as e:  # noqa: BLE001 - a server's failure is reported, never raised here
            if not self._ready.done():
                message = f"MCP server {self.manifest.name!r} failed to start: {e!r}"
                if errlog is not None:
                    errlog.flush()
                    message += _stderr_tail(Path(errlog.name))
                self._ready.set_exception(ServerError(message))
            elif not self._closed:
                self.broken = f"the server stopped: {e!r}"
            if isinstance(e, asyncio.CancelledError):
                raise
        finally:
            self._client = None
            if errlog is not None:
                errlog.close()

    def _stdio_parameters(self) -> StdioServerParameters:
        spec = self.manifest.server
        assert spec.command is not None
        # HOME is the rollout's own slot (beside its working directory): no user configuration
        # (~/.gitconfig and the like) reaches the server, and nothing it writes there is state.
        env = {"HOME": str(self.workdir.parent), **fill_workdir(spec.env, self.workdir)}
        command = spec.command
        beside = Path(sys.executable).parent / command  # a server installed in this venv, not on PATH
        if shutil.which(command) is None and beside.is_file():
            command = str(beside)
        if command == PYTHON:  # this interpreter, importing what the trainer imports
            command = sys.executable
            if "PYTHONPATH" in os.environ:
                env.setdefault("PYTHONPATH", os.environ["PYTHONPATH"])
        args = [str(os.getpid()), command, *fill_workdir(spec.args, self.workdir)]
        return StdioServerParameters(
            command=sys.executable, args=["-I", "-c", _GUARD, *args], env=env, cwd=self.workdir
        )

    def tools(self) -> list[Tool]:
        """The server's tools, waiting for start-up (at most the manifest's start timeout)."""
        try:
            return self._ready.result(timeout=self.manifest.start_timeout_s)
        except FutureTimeout:
            self.close()
            raise ServerError(
                f"MCP server {self.manifest.name!r} did not start within {self.manifest.start_timeout_s} s"
            ) from None

    def call_tool(self, name: str, arguments: dict[str, Any], timeout: float) -> CallToolResult | str:
        """The tool's result, or why there is none (a str): timeout, dead server, protocol error."""
        try:
            self.tools()  # a warm server may still be starting
        except ServerError as e:
            return str(e)
        if self.broken is not None:
            return self.broken
        client = self._client
        if client is None:
            return "the server is not running"
        pending = self._loop.submit(client.call_tool(name, arguments))
        try:
            return pending.result(timeout=timeout)
        except FutureTimeout:
            pending.cancel()
            self.broken = f"the server did not answer within {timeout} s and was stopped"
            logger.warning("MCP server %r: %s (tool %s)", self.manifest.name, self.broken, name)
            self.close()
            return f"tool {name!r} timed out after {timeout} s; the server was stopped"
        except Exception as e:  # noqa: BLE001 - whatever the SDK raises becomes the call's error
            if self._serving.done() and self.broken is None:
                self.broken = f"the server stopped: {e!r}"
            return f"{type(e).__name__}: {e}"

    def stop(self) -> None:
        """Ask the session to end (without waiting): the SDK closes stdin, waits a little, kills the process tree."""
        if self._closed:
            return
        self._closed = True
        if self._loop.loop.is_closed():
            return
        stop = self._stop
        if stop is not None:
            self._loop.loop.call_soon_threadsafe(stop.set)
        else:
            self._serving.cancel()

    def join(self, timeout: float = 10.0) -> None:
        """Wait until the session and its server have ended."""
        with contextlib.suppress(BaseException):
            self._serving.result(timeout=timeout)
        if not self._serving.done():
            self._serving.cancel()

    def close(self, timeout: float = 10.0) -> None:
        """Stop the server and wait for it."""
        self.stop()
        self.join(timeout)
