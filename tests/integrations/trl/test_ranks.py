"""`RankGroup`'s two exchanges between two real gloo processes, and the one-process case."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from rods.integrations.trl.ranks import RankGroup
from rods.integrations.trl.rewards import groups

HERE = Path(__file__).parent


def test_one_process_passes_everything_through():
    one = RankGroup()
    assert one.is_owner and not one.distributed
    assert one.gather_rewards([("a", 1.0)]) == [("a", 1.0)]
    assert one.share_epoch(["a"], ["task"]) == (["a"], ["task"]) and one.broadcast(3) == 3


def test_back_to_back_groups_of_one_task_are_cut_at_k():
    assert groups(["a"] * 4 + ["b"] * 2, [1, 0, 0, 0, 1, 1], 2) == [("a", [1, 0]), ("a", [0, 0]), ("b", [1, 1])]


def test_two_gloo_processes_gather_rewards_on_the_owner_and_share_its_epoch(tmp_path, train_tasks):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    repo = HERE.parents[2]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")]),
               OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_addr", "127.0.0.1",
           "--master_port", str(port), str(HERE / "ranks_worker.py"), str(tmp_path)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    owner, other = (json.loads((tmp_path / f"rank-{r}.json").read_text()) for r in (0, 1))
    # The owner has every rank's rows in rank order; the group cut between the ranks is whole again.
    assert [tuple(r) for r in owner["rows"]] == [("a", 1.0), ("a", 0.0), ("b", 0.5), ("b", 1.0), ("c", 0.0),
                                                  ("c", 0.25)]
    assert [tuple(g) for g in owner["groups"]] == [("a", [1.0, 0.0]), ("b", [0.5, 1.0]), ("c", [0.0, 0.25])]
    assert other["rows"] is None and other["groups"] is None
    # Rank 1 passed nothing and got the owner's epoch rows and tasks, identical.
    expected = [t.id for t in train_tasks[:2]] * 2
    assert owner["ids"] == other["ids"] == expected
    assert owner["tasks"] == other["tasks"] and [t["id"] for t in other["tasks"]] == expected[:2]
    assert owner["broadcast"] == other["broadcast"] == {"step": 7}
