"""An interrupted comparison leaves no job behind (docs/guides/comparing.md's promise for Ctrl-C and SIGTERM)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import pytest

from rods.compare import runner
from rods.compare.arms import RunSpec
from rods.train.config import TrainConfig


def test_an_interrupt_while_a_job_runs_stops_the_job(tmp_path, monkeypatch):
    started: list[subprocess.Popen] = []
    real_popen = subprocess.Popen

    def sleeper(cmd, **kwargs):  # the job process itself, replaced by one that would outlive us
        proc = real_popen([sys.executable, "-c", "import time; time.sleep(600)"], **kwargs)
        started.append(proc)
        return proc

    monkeypatch.setattr(runner.subprocess, "Popen", sleeper)
    monkeypatch.setattr(runner, "write_run_config", lambda run: None)
    run = RunSpec("static", 0, tmp_path / "run", TrainConfig.model_validate({"synthesis": {"enabled": False}}))
    run.run_dir.mkdir()
    # A real SIGINT (it interrupts the wait; the CLI turns SIGTERM into the same KeyboardInterrupt).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Timer(2.0, os.kill, (os.getpid(), signal.SIGINT)).start()
        with pytest.raises(KeyboardInterrupt):
            runner.launch(run, None)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert started and started[0].returncode == -signal.SIGTERM  # stopped by us, not left to run or exit
    assert not runner._live
