"""`rods report`: figures and summary from an engine's logs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rods.cli import main
from rods.engine import DataEngine, EngineConfig
from rods.report import load_run, make_report

from engine_factory import make_seeds, variant  # tests/engine, on the pytest pythonpath

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run_engine(run_dir: Path, steps: int = 40) -> DataEngine:
    cfg = EngineConfig(capacity=15, K=8, min_observations=4, burn_in_rollouts=4, exclusion_window=2)
    eng = DataEngine(cfg, make_seeds(30), run_dir=run_dir)
    rng = random.Random(3)
    n = 0
    for step in range(steps):
        for t in rng.sample(eng.active_tasks(), 12):
            p = (sum(map(ord, t.id)) % 10) / 10
            eng.observe(step, t.id, [float(rng.random() < p) for _ in range(8)])
        cands = []
        for seed in eng.select_seeds(step):
            n += 1
            cands.append(variant(seed, n, step))
        eng.submit(cands)
        if step % 8 == 7:
            eng.on_epoch_end(step)
    return eng


def test_report_draws_every_figure_and_summarises(tmp_path):
    eng = run_engine(tmp_path / "run" / "engine")
    totals = eng.metrics(0)
    retired = eng.retired()
    eng.close()
    paths, summary = make_report(tmp_path / "run", tmp_path / "fig")  # finds RUN_DIR/engine
    assert {p.name for p in paths} == {"zones.png", "pool.png", "synthesized.png", "first_rewards.png",
                                       "informative.png"}
    for p in paths:
        assert p.read_bytes().startswith(PNG_MAGIC) and p.stat().st_size > 5_000
    assert summary["steps"] == 40 and summary["epochs"] == 5
    assert summary["injected"] == totals["total_injected"] > 0
    assert summary["synthesized_accepted"] == totals["total_accepted"]
    assert sum(summary["retired"].values()) == sum(r != "queue_overflow" for r in retired.values())
    logs = load_run(tmp_path / "run")
    assert logs.first_rewards and all(0.0 <= r <= 1.0 for r in logs.first_rewards)


def test_replayed_steps_after_resume_count_once(tmp_path):
    eng = run_engine(tmp_path, steps=10)
    eng.close()
    eng = DataEngine.resume(tmp_path)
    for step in range(5, 10):  # the trainer replays steps after its checkpoint
        eng.select_seeds(step)
    eng.close()
    assert [m["step"] for m in load_run(tmp_path).metrics] == list(range(10))


def test_cli_report(tmp_path, capsys):
    run_engine(tmp_path, steps=16).close()
    assert main(["report", str(tmp_path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["steps"] == 16
    assert (tmp_path / "report" / "zones.png").exists()


def test_cli_report_on_a_directory_without_logs_is_a_clear_error(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 1
    assert "no engine logs" in capsys.readouterr().err
    with pytest.raises(FileNotFoundError):
        load_run(tmp_path)
