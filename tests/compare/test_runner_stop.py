"""An interrupted comparison leaves no job behind (the README's promise for Ctrl-C and SIGTERM)."""

from __future__ import annotations

import _thread
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
        proc = real_popen([sys.executable, "-c", "import time; time.sleep(120)"], **kwargs)
        started.append(proc)
        return proc

    monkeypatch.setattr(runner.subprocess, "Popen", sleeper)
    monkeypatch.setattr(runner, "write_run_config", lambda run: None)
    run = RunSpec("static", 0, tmp_path / "run", TrainConfig.model_validate({"synthesis": {"enabled": False}}))
    run.run_dir.mkdir()
    threading.Timer(1.0, _thread.interrupt_main).start()  # what the CLI's SIGTERM handler raises
    with pytest.raises(KeyboardInterrupt):
        runner.launch(run, None)
    assert started and started[0].poll() is not None  # terminated, not orphaned
    assert not runner._live
