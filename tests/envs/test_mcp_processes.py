"""MCP servers as real processes: a crashed, killed, hung or garbling server ends only its rollout's call,
and no server outlives its run (pool shutdown, interpreter exit, `kill -9` of the trainer)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from rods.envs.mcp import MCPEnvironment, ServerError, ServerPool, load_manifest
from rods.envs.protocol import ERROR_PREFIX

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "servers" / "mcp_test_server.py"
MANIFEST = f"""
name: notes
server:
  command: "{{python}}"
  args: ["{SERVER}", --dir, "{{workdir}}"]
  env: {{GIVEN: "by the manifest"}}
hidden_arguments: {{workspace: "{{workdir}}"}}
state: [{{kind: dir}}]
call_timeout_s: 20
"""


def server_pids(root: Path) -> list[int]:
    """Live processes whose working directory lies under `root` (this run's servers)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if cwd.startswith(str(root)) and state != "Z":
            pids.append(int(entry.name))
    return pids


def wait_until_gone(root: Path, limit_s: float = 30.0) -> list[int]:
    """The servers under `root` still alive after waiting (at most `limit_s`) for them to go."""
    deadline = time.monotonic() + limit_s
    while (left := server_pids(root)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.fixture
def manifest_path(tmp_path):
    path = tmp_path / "notes.yaml"
    path.write_text(MANIFEST)
    return path


def _pool_root(env: MCPEnvironment) -> Path:
    return env._live_connection().workdir.parents[1]


def test_servers_run_in_their_own_directory_and_environment(manifest_path, monkeypatch):
    monkeypatch.setenv("RODS_TEST_SECRET", "trainer only")
    with ServerPool(load_manifest(manifest_path), warm=0) as pool:
        env = MCPEnvironment("notes", pool=pool)
        env.reset({})
        cwd, _ = env.call("where", {}).split(" ", 1)
        assert Path(cwd) == env._live_connection().workdir
        assert env.call("env_var", {"name": "RODS_TEST_SECRET"}) == ""
        assert env.call("env_var", {"name": "GIVEN"}) == "by the manifest"
        assert env.call("env_var", {"name": "HOME"}) == str(env._live_connection().workdir.parent)
        env.close()


def test_a_server_that_exits_at_start_fails_reset_with_its_stderr(tmp_path):
    path = tmp_path / "exits.yaml"
    code = "import sys; sys.stderr.write('boom: no config file\\n'); sys.exit(2)"
    path.write_text(f'name: exits\nserver: {{command: "{{python}}", args: [-c, "{code}"]}}\nstate: [{{kind: dir}}]\n')
    with ServerPool(load_manifest(path), warm=0) as pool:
        with pytest.raises(ServerError, match="(?s)'exits' failed to start.*boom: no config file"):
            MCPEnvironment("exits", pool=pool).reset({})
        assert pool.live == 0


def test_crashed_killed_hung_and_garbling_servers_end_only_their_own_call(manifest_path):
    manifest = load_manifest(manifest_path).model_copy(update={"call_timeout_s": 5.0})
    with ServerPool(manifest, warm=0) as pool:
        envs = [MCPEnvironment("notes", pool=pool) for _ in range(6)]
        for env in envs:
            env.reset({})
            assert env.call("read_notes", {}) == "{}"  # started
        root = _pool_root(envs[0])
        killed_pid = next(
            p for p in server_pids(root) if os.readlink(f"/proc/{p}/cwd") == str(envs[1]._live_connection().workdir)
        )
        os.kill(killed_pid, signal.SIGKILL)

        def rollout(i: int) -> str:
            env = envs[i]
            if i == 0:
                return env.call("crash", {})
            if i == 1:
                return env.call("add_note", {"title": "t", "text": "after the kill"})
            if i == 2:
                return env.call("nap", {"seconds": 120})
            if i == 3:
                return env.call("garble", {})
            return env.call("add_note", {"title": f"n{i}", "text": "fine"})

        with ThreadPoolExecutor(6) as workers:
            results = list(workers.map(rollout, range(6)))
        for i in range(4):
            assert results[i].startswith(ERROR_PREFIX), (i, results[i])
        assert "timed out" in results[2]
        assert "timed out" not in results[0] and "timed out" not in results[1]  # seen at once, not by timeout
        assert results[4:] == ["saved n4", "saved n5"]
        for i in (4, 5):
            assert envs[i].snapshot()["dir"].keys() == {"notes.json"}
        for i in range(4):  # the broken rollouts keep failing cleanly until reset
            assert envs[i].call("read_notes", {}).startswith(ERROR_PREFIX)
        envs[0].reset({})
        assert envs[0].call("read_notes", {}) == "{}"
    assert wait_until_gone(root) == []


def test_no_server_outlives_pool_shutdown(manifest_path):
    pool = ServerPool(load_manifest(manifest_path), warm=2)
    envs = [MCPEnvironment("notes", pool=pool) for _ in range(2)]
    for env in envs:
        env.reset({})
        env.call("read_notes", {})
    for connection in list(pool._ready):
        connection.tools()  # the warm ones have started too
    root = _pool_root(envs[0])
    assert len(server_pids(root)) == 2 + 2  # in use + warm
    pool.shutdown()
    assert server_pids(root) == []
    assert not root.exists()


_CHILD = """
import json, sys, time
from rods.envs.mcp import MCPEnvironment, ServerError, ServerPool, load_manifest
pool = ServerPool(load_manifest(sys.argv[1]), warm=1)
env = MCPEnvironment("notes", pool=pool)
env.reset({{}})
env.call("add_note", {{"title": "a", "text": "b"}})
pool.prime()
print(json.dumps(str(env._live_connection().workdir.parents[1])), flush=True)
{ending}
"""


def _run_child(manifest_path: Path, ending: str) -> tuple[subprocess.Popen[str], Path]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    code = textwrap.dedent(_CHILD.format(ending=ending))
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(manifest_path)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert child.stdout is not None
    root = Path(json.loads(child.stdout.readline()))
    return child, root


def test_kill_9_of_the_trainer_takes_its_servers_along(manifest_path):
    child, root = _run_child(manifest_path, "time.sleep(600)")
    try:
        assert len(server_pids(root)) == 2  # one in use, one warm
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        assert wait_until_gone(root) == []
    finally:
        child.kill()
        subprocess.run(["rm", "-rf", str(root)], check=False)


def test_interpreter_exit_stops_servers_without_shutdown(manifest_path):
    child, root = _run_child(manifest_path, "sys.exit(0)  # no pool.shutdown(): atexit does it")
    assert child.wait(timeout=60) == 0
    assert server_pids(root) == []
    assert not root.exists()
