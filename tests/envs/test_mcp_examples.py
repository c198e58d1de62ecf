"""Every seed of the MCP examples, validated by execution.

A seed's gold calls must all run without error on a fresh environment, two
fresh replays must end in the same state (so a rollout that makes the same
calls scores RP = 1), and the end state must show what the task asked for.
The SQLite seeds run in memory; the slow tests replay every git seed on
mcp-server-git processes and one SQLite seed in 16 concurrent SQLite server
processes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from rods.envs.calls import parse_calls
from rods.envs.mcp import MCPEnvironment, ServerPool, ServerSpec, load_manifest
from rods.envs.protocol import ERROR_PREFIX
from rods.tasks import Task, read_tasks
from rods.tasks.model import environment_kind

ROOT = Path(__file__).resolve().parents[2]
GIT = "examples/mcp_git/manifest.yaml"
SQLITE = "examples/mcp_sqlite/manifest.yaml"


def seeds(example: str) -> list[dict[str, Any]]:
    lines = (ROOT / "examples" / example / "seeds.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def replay(env: MCPEnvironment, task: dict[str, Any]) -> Any:
    """Run a seed's gold calls on a fresh environment; every call must succeed; the end state."""
    env.reset(task["initial_config"])
    for turn, calls in enumerate(task["ground_truth"]):
        for text in calls:
            for call in parse_calls(text):
                result = env.call(call.name, call.arguments)
                assert not result.startswith(ERROR_PREFIX), f"{task['id']} turn {turn}: {text} -> {result}"
    return env.snapshot()


def _rows(state: Any, table: str) -> list[list[Any]]:
    return state["sqlite"][table]["rows"]


#: What each seed's end state must show (beyond replaying cleanly and alike).
EXPECTED: dict[str, Callable[[Any, Any], bool]] = {
    "mcp_sqlite_0": lambda s, _: [4, "lamp", 24.9, 15] in _rows(s, "products"),
    "mcp_sqlite_1": lambda s, _: (
        [4, "Katherine Johnson", "Hampton"] in _rows(s, "customers") and [4, 4, 1, 3, "open"] in _rows(s, "orders")
    ),
    "mcp_sqlite_2": lambda s, _: all(row[4] == "shipped" for row in _rows(s, "orders")),
    "mcp_sqlite_3": lambda s, _: [3, "stapler", 13.5, 5] in _rows(s, "products"),
    "mcp_sqlite_4": lambda s, _: _rows(s, "reviews") == [[1, 2, 5]],
    "mcp_sqlite_5": lambda s, _: [row[0] for row in _rows(s, "orders")] == [1, 2],
    "mcp_git_0": lambda s, _: s["git"]["branches"]["main"]["messages"][0] == "Add the returns policy",
    "mcp_git_1": lambda s, start: (
        s["git"]["head"] == "docstrings"
        and s["git"]["branches"]["docstrings"]["messages"][0] == "Document total"
        and s["git"]["branches"]["main"] == start["git"]["branches"]["main"]
    ),
    "mcp_git_2": lambda s, _: s["git"]["status"] == [" M src/stock.py", "?? notes.tmp", "A  docs/returns.txt"],
    "mcp_git_3": lambda s, _: s["git"]["head"] == "release-1.0",
    "mcp_git_4": lambda s, _: s["git"]["branches"]["stats"] == s["git"]["branches"]["experiment"],
    "mcp_git_5": lambda s, _: (
        s["git"]["branches"]["main"]["messages"][0] == "Docs and docstring" and s["git"]["status"] == ["?? notes.tmp"]
    ),
}


def check_every_seed(key: str, pool: ServerPool, tasks: list[dict[str, Any]]) -> None:
    start_env = MCPEnvironment(key, pool=pool)
    start_env.reset({})
    start = start_env.snapshot()
    start_env.close()
    for task in tasks:
        assert task["environment"] == key and task["involved_classes"] == [key]
        first, second = MCPEnvironment(key, pool=pool), MCPEnvironment(key, pool=pool)
        try:
            end = replay(first, task)
            assert replay(second, task) == end, f"{task['id']}: two replays end in different states"
            assert EXPECTED[task["id"]](end, start), f"{task['id']}: end state does not show the task done"
            writes = {c.name for t in task["ground_truth"] for x in t for c in parse_calls(x)}
            effects = {t.name: t.effect for t in first.tools()}
            if any(effects[name] == "write" for name in writes):
                assert end != start, f"{task['id']}: writing calls left the state as it was"
        finally:
            first.close()
            second.close()


def test_every_seed_has_a_check_and_is_a_valid_task():
    ids = [t["id"] for example in ("mcp_git", "mcp_sqlite") for t in seeds(example)]
    assert sorted(ids) == sorted(EXPECTED)
    for example in ("mcp_git", "mcp_sqlite"):
        tasks = read_tasks(ROOT / "examples" / example / "seeds.jsonl")
        assert {environment_kind(t.environment) for t in tasks} == {"mcp"}
        assert [t.model_dump(exclude_defaults=True) for t in tasks] == [
            Task.model_validate(raw).model_dump(exclude_defaults=True) for raw in seeds(example)
        ]


def test_sqlite_seeds_replay_in_memory():
    manifest = load_manifest(ROOT / SQLITE)
    in_memory = manifest.model_copy(update={"server": ServerSpec(python="rods.envs.mcp.sqlite_server:build_server")})
    with ServerPool(in_memory, warm=2) as pool:
        check_every_seed(SQLITE, pool, seeds("mcp_sqlite"))


@pytest.mark.slow
def test_git_seeds_replay_on_mcp_server_git():
    with ServerPool(load_manifest(ROOT / GIT), warm=2) as pool:
        check_every_seed(GIT, pool, seeds("mcp_git"))


@pytest.mark.slow
def test_k16_concurrent_rollouts_of_one_task_on_server_processes():
    """16 rollouts of one seed at once, each adding its own row: 16 processes, 16 states."""
    from concurrent.futures import ThreadPoolExecutor

    task = next(t for t in seeds("mcp_sqlite") if t["id"] == "mcp_sqlite_1")
    with ServerPool(load_manifest(ROOT / SQLITE), warm=0) as pool:  # 16 servers started side by side
        envs = [MCPEnvironment(SQLITE, pool=pool) for _ in range(16)]

        def rollout(i: int) -> Any:
            replay(envs[i], task)
            query = f"INSERT INTO customers (id, name, city) VALUES ({10 + i}, 'rollout {i}', 'here')"
            assert envs[i].call("write_query", {"query": query}) == '{"affected_rows": 1}'
            return envs[i].snapshot()

        try:
            with ThreadPoolExecutor(16) as workers:
                states = list(workers.map(rollout, range(16)))
        finally:
            for env in envs:
                env.close()
    for i, state in enumerate(states):
        customers = _rows(state, "customers")
        assert [10 + i, f"rollout {i}", "here"] in customers
        assert len(customers) == 5  # the template's 3, the task's 1, its own 1: nobody else's
        assert EXPECTED["mcp_sqlite_1"](state, None)
