"""Kill a process running a persistent engine with SIGKILL at random moments, then resume.

Whatever the process reported as accepted or decided before it died must be in
the store after the restart, and no task may appear twice.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from rods.engine import DataEngine

WORKER = Path(__file__).with_name("kill_worker.py")
KILLS = 20


def test_sigkill_loses_nothing_accepted(tmp_path):
    run_dir = tmp_path / "run"
    rng = random.Random(1234)
    accepted: set[str] = set()
    injected: set[str] = set()
    retired: dict[str, str] = {}
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    killed_after_ready = 0
    for _ in range(KILLS):
        proc = subprocess.Popen([sys.executable, str(WORKER), str(run_dir)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
        if rng.random() < 0.2:  # sometimes kill during start-up or resume
            time.sleep(rng.uniform(0.0, 0.6))
            first = ""
        else:  # mostly while it works: after READY, at a random moment
            first = proc.stdout.readline()
            assert first.startswith("READY"), proc.stderr.read()
            time.sleep(rng.uniform(0.0, 0.4))
        os.kill(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        assert proc.returncode == -signal.SIGKILL, err
        text = first + out
        lines = text[: text.rfind("\n") + 1].splitlines()  # whole lines: a kill may cut the last one short
        killed_after_ready += any(line.startswith("READY") for line in lines)
        for line in lines:
            if line.startswith("ACCEPTED"):
                accepted.update(line.split()[1:])
            elif line.startswith("EPOCH "):
                rep = json.loads(line[len("EPOCH "):])
                injected.update(rep["injected"])
                retired.update(rep["retired"])
                retired.update({tid: "expired" for tid in rep["expired"]})
        # resume here too: the state must load after every kill
        try:
            eng = DataEngine.resume(run_dir)
        except FileNotFoundError:
            assert not accepted and not killed_after_ready, "state vanished after it was written"
            continue
        status = {tid: eng.status(tid) for tid in accepted}
        lost = [tid for tid, s in status.items() if s is None]
        assert not lost, f"accepted candidates lost after SIGKILL: {lost[:5]}"
        for tid in injected:
            assert eng.status(tid) in ("active", "retired"), f"injection of {tid} lost"
        for tid, reason in retired.items():
            assert eng.retired().get(tid) == reason, f"retirement of {tid} lost"
        active = eng.active_ids()
        assert len(active) == len(set(active))
        assert len(eng.active_tasks()) - eng.metrics(0)["active_synthetic"] == 24  # every seed still there
        eng.close()
    assert killed_after_ready >= KILLS // 2, "most kills should land while the engine is working"
    assert accepted and injected and retired, "the run should have accepted, injected and retired tasks"
    with sqlite3.connect(run_dir / "engine.sqlite") as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM tasks")]
        fps = [r[0] for r in conn.execute("SELECT fingerprint FROM tasks")]
    assert len(ids) == len(set(ids)) and len(fps) == len(set(fps)), "a task was duplicated"
