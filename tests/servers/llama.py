"""llama.cpp's OpenAI-compatible server serving the embedded GGUF, for tests.

Starts ``python -m llama_cpp.server`` as a subprocess on a free 127.0.0.1
port, waits until ``/v1/models`` answers, and stops it (terminate, then kill)
at the end. The server's output goes to a log file whose tail is shown when
start-up fails.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

#: The name the server gives the model (``--model_alias``).
MODEL_ALIAS = "smollm2-135m"
#: SmolLM2 speaks ChatML; this llama-cpp-python chat handler also constrains
#: tool calls with a grammar (forced ``tool_choice`` gives JSON arguments).
CHAT_FORMAT = "chatml-function-calling"


def llama_cpp_available() -> bool:
    """True when llama-cpp-python with its server extra is installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("llama_cpp", "uvicorn", "fastapi"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """In the child: ask Linux to SIGTERM it when the test process dies (no orphans)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    """Send `sig` to the server's process group (the server and its workers)."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


#: Thread-count variables tests/conftest.py sets in each pytest-xdist worker (one thread a worker).
WORKER_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def threads_per_worker() -> int | None:
    """The cores each pytest-xdist worker has when the workers share the machine, or None outside xdist.

    A worker's math threads, and the threads of a server it starts, stay within this: more
    oversubscribe the cores, and llama.cpp's threads, which wait for each other by spinning,
    then crawl (a `rods eval` against it took 119 s beside a busy worker, 31 s alone).
    """
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    return max(1, (os.cpu_count() or 1) // workers) if workers > 1 else None


class LlamaServer:
    """One llama.cpp server process; ``base_url`` is ready once :meth:`start` returns.

    :class:`servers.vllm.VllmServer` reuses the start/stop loop with its own
    :meth:`command`, :meth:`environment` and ``label``.
    """

    label = "llama.cpp server"
    log_prefix = "llama-server-"

    def __init__(self, model: Path, *, n_ctx: int = 4096, n_threads: int | None = None,
                 chat_format: str | None = CHAT_FORMAT, startup_timeout_s: float = 120.0):
        self.model = Path(model)
        self.chat_format = chat_format
        self.n_ctx = n_ctx
        self.n_threads = n_threads or threads_per_worker() or 2
        self.startup_timeout_s = startup_timeout_s
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self._log = tempfile.NamedTemporaryFile(prefix=self.log_prefix, suffix=".log", delete=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def command(self) -> list[str]:
        return [
            sys.executable, "-m", "llama_cpp.server",
            "--model", str(self.model),
            "--model_alias", MODEL_ALIAS,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.n_threads),
            "--verbose", "False",
        ] + (["--chat_format", self.chat_format] if self.chat_format else [])

    def environment(self) -> dict[str, str]:
        """The test process's environment, less the thread limits tests/conftest.py sets for its workers:
        a server chooses its own threads."""
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        for name in WORKER_THREAD_VARS:
            env.pop(name, None)
        return env

    def start(self) -> LlamaServer:
        # Its own process group, so stop() also ends the workers a server may spawn.
        self.proc = subprocess.Popen(self.command(), stdout=self._log, stderr=subprocess.STDOUT,
                                     env=self.environment(), preexec_fn=_die_with_parent, start_new_session=True)
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.label} exited with code {self.proc.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as resp:
                    if resp.status == 200 and json.load(resp).get("data"):
                        return self
            except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError):
                pass
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"{self.label} not ready after {self.startup_timeout_s}s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.proc is not None:
            _signal_group(self.proc, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                pass
            _signal_group(self.proc, signal.SIGKILL)  # whatever of the group is left (no orphans)
            self.proc.wait(timeout=10)
        self.proc = None

    def log_tail(self, chars: int = 3000) -> str:
        self._log.flush()
        return Path(self._log.name).read_text(errors="replace")[-chars:]

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
