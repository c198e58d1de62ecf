"""`rods envs check ENV [--seeds FILE]`: one line per finding, a summary, the exit code, one-line input errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from rods.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_broken_environment_exits_non_zero_naming_the_check(capsys):
    assert main(["envs", "check", "broken_envs:LuckyDraw"]) == 1
    out, err = capsys.readouterr()
    assert any(line.startswith("FAIL reset") and "a non-deterministic reset" in line for line in out.splitlines())
    assert "broken_envs:LuckyDraw: FAILED:" in err and "1 failed" in err


def test_the_library_example_passes_and_lists_its_tools(capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES / "byo_env"))
    assert main(["envs", "check", "library:Library", "--seeds", str(EXAMPLES / "byo_env" / "seeds.jsonl")]) == 0
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].startswith("PASS tools") and "4 tools (2 read, 2 write, 0 undeclared)" in lines[0]
    assert lines[1].split() == ["book_details", "read", "requires:", "book_id"]
    assert all(line.split()[0] in ("PASS", "WARN", "FAIL") for line in lines if not line.startswith(" "))
    assert "library:Library: passed: 10 passed, 0 warnings, 0 failed (8 gold calls of 4 seeds" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["nonsense"], "is neither 'bfcl' nor an import path"),
        (["no_such_module:Env"], "cannot import module 'no_such_module'"),
        (["missing/manifest.yaml"], "missing/manifest.yaml"),
        (["broken_envs:Library", "--seeds", "nowhere.jsonl"], "nowhere.jsonl"),
        (["broken_envs:Library", "--seeds", "."], "--seeds .: is a directory, not a task file"),
        (["broken_envs:Library", "--seeds", str(EXAMPLES / "byo_env" / "seeds.jsonl")],
         "is a task of 'library:Library', not of 'broken_envs:Library'"),
        (["broken_envs:Library", "--calls-per-tool", "0"], "--calls-per-tool must be at least 1"),
    ],
)
def test_bad_input_is_one_line(argv, message, capsys):
    assert main(["envs", "check", *argv]) == 1
    out, err = capsys.readouterr()
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("rods envs: error: ")
