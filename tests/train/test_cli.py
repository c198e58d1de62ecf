"""`rods train`: resolved config printing, errors naming file and key, refusing to clobber a run."""

from pathlib import Path

from rods.cli import main

DEMO = Path(__file__).resolve().parents[2] / "configs" / "demo.yaml"


def test_print_config_applies_overrides(capsys):
    assert main(["train", "--config", str(DEMO), "--set", "grpo.max_steps=3", "--print-config"]) == 0
    out = capsys.readouterr().out
    assert "max_steps: 3" in out and "task_mix: turn_slices" in out


def test_bad_key_is_a_one_line_error(capsys, tmp_path):
    assert main(["train", "--config", str(DEMO), "--set", "grpo.learnin_rate=1", "--print-config"]) == 1
    err = capsys.readouterr().err
    assert "grpo.learnin_rate: unknown key" in err and "demo.yaml" in err


def test_existing_run_is_not_overwritten(tmp_path, capsys):
    run = tmp_path / "run"
    (run / "checkpoints" / "checkpoint-1").mkdir(parents=True)
    assert main(["train", "--config", str(DEMO), "--output-dir", str(run)]) == 1
    assert "already holds a run" in capsys.readouterr().err
    assert main(["train", "--config", str(DEMO), "--output-dir", str(tmp_path / "none"), "--resume"]) == 1
    assert "nothing to resume" in capsys.readouterr().err
