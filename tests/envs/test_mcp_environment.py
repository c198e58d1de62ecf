"""MCP environments in memory: tools and hints, hidden arguments, isolation, fork by replay, timeouts, state.

Every server here is built in this process and reached through the SDK's
in-memory transport (no subprocess); tests/envs/test_mcp_processes.py runs real
server processes.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from hypothesis import given, settings, strategies as st

from rods.envs.mcp import MCPEnvironment, ServerError, ServerPool, load_manifest
from rods.envs.mcp.state import dir_state, git_state, sqlite_state
from rods.envs.protocol import ERROR_PREFIX, canonical_json

NOTES_MANIFEST = """
name: notes
server: {python: "servers.mcp_test_server:build_server"}
hidden_arguments: {workspace: "{workdir}"}
state:
  - {kind: dir, ignore: ["*.tmp"]}
  - {kind: tool, name: notes, tool: read_notes}
call_timeout_s: 30
"""


@pytest.fixture(scope="module")
def notes_pool(tmp_path_factory):
    path = tmp_path_factory.mktemp("notes") / "manifest.yaml"
    path.write_text(NOTES_MANIFEST)
    with ServerPool(load_manifest(path), warm=2) as pool:
        yield pool


@pytest.fixture
def notes(notes_pool):
    env = MCPEnvironment("notes.yaml", pool=notes_pool)
    env.reset({})
    yield env
    env.close()


def test_tools_come_with_effects_from_annotations_and_without_hidden_arguments(notes):
    tools = {t.name: t for t in notes.tools()}
    assert tools["add_note"].effect == "write"
    assert tools["read_notes"].effect == "read"
    assert tools["where"].effect == "unknown"  # no annotations at all
    assert tools["add_note"].group == "notes"
    for spec in tools.values():
        assert "workspace" not in spec.parameters["properties"]
        assert "workspace" not in spec.required
    assert set(tools["add_note"].required) == {"title", "text"}


def test_hidden_argument_is_filled_in_and_the_models_value_ignored(notes, tmp_path):
    assert notes.call("add_note", {"title": "a", "text": "x", "workspace": str(tmp_path)}) == "saved a"
    assert not (tmp_path / "notes.json").exists()
    assert json.loads(notes.call("read_notes", {})) == {"a": "x"}


def test_errors_are_results_never_exceptions(notes):
    assert notes.call("no_such_tool", {}) == f"{ERROR_PREFIX}name 'no_such_tool' is not defined"
    missing = notes.call("add_note", {"title": "only a title"})
    assert missing.startswith(ERROR_PREFIX) and "text" in missing
    assert notes.call("nap", {"seconds": "not a number"}).startswith(ERROR_PREFIX)


def test_snapshot_reads_dir_and_tool_state_and_ignores_volatile_files(notes):
    before = notes.snapshot()
    assert before == {"dir": {}, "notes": {}}
    (notes._live_connection().workdir / "cache.tmp").write_text("volatile")
    assert notes.snapshot() == before
    notes.call("add_note", {"title": "t", "text": "x"})
    after = notes.snapshot()
    assert after["notes"] == {"t": "x"} and list(after["dir"]) == ["notes.json"]


def test_reset_starts_from_the_template_and_runs_setup_calls(notes):
    notes.call("add_note", {"title": "old", "text": "1"})
    notes.reset({"notes.yaml": {"calls": [{"name": "add_note", "arguments": {"title": "s", "text": "2"}}]}})
    assert notes.snapshot()["notes"] == {"s": "2"}
    assert notes.calls == []  # setup calls are the configuration, not the rollout's calls
    with pytest.raises(ValueError, match="unknown initial_config keys"):
        notes.reset({"notes.yaml": {"files": {}}})
    with pytest.raises(ValueError, match="setup call 0"):
        notes.reset({"notes.yaml": {"calls": [{"name": "add_note", "arguments": {}}]}})
    with pytest.raises(ValueError, match="setup call 0 needs a 'name'"):
        notes.reset({"notes.yaml": {"calls": [{"arguments": {}}]}})


def test_fork_replays_the_calls_into_an_independent_environment(notes):
    notes.call("add_note", {"title": "a", "text": "1"})
    notes.call("add_note", {"title": "b", "text": "2"})
    twin = notes.fork()
    try:
        assert twin.snapshot() == notes.snapshot()
        assert twin._live_connection().workdir != notes._live_connection().workdir
        twin.call("add_note", {"title": "c", "text": "3"})
        assert "c" not in notes.snapshot()["notes"]
        assert twin.calls == [*notes.calls, ("add_note", {"title": "c", "text": "3"})]
    finally:
        twin.close()


def test_k16_concurrent_rollouts_leave_16_independent_states(notes_pool):
    envs = [MCPEnvironment("notes.yaml", pool=notes_pool) for _ in range(16)]

    def rollout(i: int) -> dict:
        env = envs[i]
        env.reset({})
        for j in range(3):
            assert env.call("add_note", {"title": f"r{i}-{j}", "text": str(i)}) == f"saved r{i}-{j}"
        return env.snapshot()["notes"]

    try:
        with ThreadPoolExecutor(16) as workers:
            states = list(workers.map(rollout, range(16)))
        for i, state in enumerate(states):
            assert state == {f"r{i}-{j}": str(i) for j in range(3)}
        assert len({e._live_connection().workdir for e in envs}) == 16
    finally:
        for env in envs:
            env.close()


def test_a_hung_call_ends_with_an_error_and_only_that_rollout_stops(notes_pool):
    impatient = notes_pool.manifest.model_copy(update={"call_timeout_s": 5.0})  # a loaded machine needs > 1 s
    with ServerPool(impatient, warm=1) as pool:
        _hung_call(pool)


def _hung_call(pool: ServerPool) -> None:
    hung, healthy = MCPEnvironment("n", pool=pool), MCPEnvironment("n", pool=pool)
    try:
        hung.reset({})
        healthy.reset({})
        result = hung.call("nap", {"seconds": 30})
        assert result.startswith(ERROR_PREFIX) and "timed out" in result
        assert hung.call("read_notes", {}).startswith(ERROR_PREFIX)  # its state is unknown now
        assert healthy.call("nap", {"seconds": 0.01}) == "rested"
        hung.reset({})  # a reset brings a fresh server
        assert hung.call("read_notes", {}) == "{}"
    finally:
        hung.close()
        healthy.close()


def test_pool_hands_out_fresh_servers_and_keeps_its_warm_count(notes_pool):
    live_before = notes_pool.live
    env = MCPEnvironment("n", pool=notes_pool)
    env.reset({})
    assert notes_pool.live == live_before + 1  # the one handed out, plus a replacement kept warm
    workdir = env._live_connection().workdir
    env.close()
    assert not workdir.exists()
    assert notes_pool.live == live_before


def test_an_environment_dropped_without_close_gives_its_server_back(notes_pool):
    import gc

    live_before = notes_pool.live
    env = MCPEnvironment("n", pool=notes_pool)
    env.reset({})
    workdir = env._live_connection().workdir
    assert notes_pool.live == live_before + 1
    del env
    gc.collect()
    assert notes_pool.live == live_before
    assert not workdir.exists()


def test_shared_pool_is_one_per_manifest_and_grows_on_request(tmp_path):
    from rods.envs.mcp import shared_pool

    path = tmp_path / "shared.yaml"
    path.write_text(NOTES_MANIFEST)
    pool = shared_pool(path)
    try:
        assert shared_pool(tmp_path / "." / "shared.yaml") is pool and pool.warm == 2
        shared_pool(path, warm=5)
        assert pool.warm == 5 and pool.live == 5
        shared_pool(path, warm=1)  # never shrinks under running rollouts
        assert pool.warm == 5
        env = MCPEnvironment(str(path))
        assert env.pool is pool
        env.close()
    finally:
        pool.shutdown()
    assert shared_pool(path) is not pool  # a shut-down pool is replaced
    shared_pool(path).shutdown()


def test_shut_down_pool_refuses_and_removes_its_directories(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(NOTES_MANIFEST)
    pool = ServerPool(load_manifest(path), warm=1)
    env = MCPEnvironment("m", pool=pool)
    env.reset({})
    root = env._live_connection().workdir.parents[1]
    pool.shutdown()
    assert not root.exists() and pool.live == 0
    with pytest.raises(RuntimeError, match="shut down"):
        pool.acquire()


def test_a_server_that_cannot_start_fails_reset_naming_why(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text(NOTES_MANIFEST.replace("build_server", "broken_server"))
    with ServerPool(load_manifest(path), warm=1) as pool:
        env = MCPEnvironment("broken", pool=pool)
        with pytest.raises(ServerError, match="'notes' failed to start.*no database in"):
            env.reset({})
        assert pool.live == 1  # the failed one released; a warm one (failing too) waits


# -- state readers ------------------------------------------------------------------------------------------


@settings(max_examples=25)
@given(st.lists(st.tuples(st.integers(-50, 50), st.text(max_size=5)), max_size=12), st.randoms())
def test_sqlite_state_does_not_depend_on_insertion_order(rows, random):
    import tempfile

    states = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(2):
            order = list(rows)
            random.shuffle(order)
            db = Path(tmp) / f"{k}.db"
            with sqlite3.connect(db) as c:
                c.execute("CREATE TABLE t (n INTEGER, s TEXT)")
                c.executemany("INSERT INTO t VALUES (?, ?)", order)
            c.close()
            states.append(sqlite_state(db))
    assert states[0] == states[1]
    assert states[0]["t"]["rows"] == sorted((list(r) for r in rows), key=canonical_json)


def test_dir_state_hashes_content_and_sees_every_change(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.txt").write_text("1")
    (tmp_path / "y.log").write_text("2")
    state = dir_state(tmp_path, ["*.log"])
    assert list(state) == ["a/x.txt"]
    (tmp_path / "a" / "x.txt").write_text("2")
    assert dir_state(tmp_path, ["*.log"]) != state


def _repo(path: Path, date: str) -> Path:
    env = {
        "GIT_AUTHOR_NAME": "a",
        "GIT_AUTHOR_EMAIL": "a@b",
        "GIT_COMMITTER_NAME": "a",
        "GIT_COMMITTER_EMAIL": "a@b",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "PATH": "/usr/bin:/bin",
        "HOME": str(path),
    }
    path.mkdir()
    for args in (["init", "-q", "-b", "main"], ["add", "f"], ["commit", "-qm", "first"], ["branch", "side"]):
        if args[0] == "add":
            (path / "f").write_text("content")
        subprocess.run(["git", *args], cwd=path, env=env, check=True)
    return path


def test_git_state_leaves_out_commit_ids_and_dates(tmp_path):
    one = git_state(_repo(tmp_path / "one", "1700000000 +0000"))
    two = git_state(_repo(tmp_path / "two", "1800000000 +0000"))
    assert one == two  # different dates, so different commit ids, same state
    assert one["head"] == "main" and set(one["branches"]) == {"main", "side"}
    assert one["branches"]["main"]["messages"] == ["first"]
    (tmp_path / "two" / "f").write_text("changed")
    assert git_state(tmp_path / "two")["status"] == [" M f"]


# -- results as text ------------------------------------------------------------------------------------------


def test_result_text_joins_text_marks_other_content_and_prefixes_errors():
    from mcp.types import CallToolResult, ImageContent, TextContent

    from rods.envs.mcp.environment import result_text

    two = CallToolResult(content=[TextContent(type="text", text="a"), TextContent(type="text", text="b")])
    assert result_text(two) == "a\nb"
    image = ImageContent(type="image", data="AAAA", mime_type="image/png")
    assert result_text(CallToolResult(content=[image])) == "[image content omitted]"
    structured = CallToolResult(content=[], structured_content={"b": 1, "a": [2]})
    assert result_text(structured) == '{"a":[2],"b":1}'
    failed = CallToolResult(content=[TextContent(type="text", text="no such file")], is_error=True)
    assert result_text(failed) == ERROR_PREFIX + "no such file"
