"""The reward on MCP servers: a manifest-named task runs through `ToolEnvironment` by replay (slow: server processes).

What `rods tasks validate` does for the MCP examples: every seed's ground truth
scores RP = 1 on fresh servers, and a trajectory that writes something else
fails the state check of the turns after it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from rods.envs.mcp import shutdown_all
from rods.reward import clear_ground_truth_cache, score
from rods.tasks import read_tasks

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # tasks name their manifest relative to the repository root
    clear_ground_truth_cache()
    yield
    clear_ground_truth_cache()
    shutdown_all()


def test_sqlite_seeds_score_one_and_a_wrong_write_fails():
    tasks = read_tasks(ROOT / "examples/mcp_sqlite/seeds.jsonl")
    for task in tasks[:3]:
        gold = [[[call] for call in turn] for turn in task.ground_truth]
        assert score(task, gold).progress == 1.0, task.id
    task = tasks[0]  # turn 1 restocks the lamp with 15 units
    wrong = [[[c] for c in task.ground_truth[0]],
             [["write_query(query=\"UPDATE products SET stock = 14 WHERE name = 'lamp'\")"]]]
    result = score(task, wrong)
    assert result.state_pass == [True, False] and result.progress == 0.5
    assert os.getcwd() == str(ROOT)
