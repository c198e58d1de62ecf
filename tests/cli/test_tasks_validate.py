"""`rods tasks validate` and the CLI's bad input: exit codes, one line per failure, --keep-going --out,
a directory or a missing file in one line, the JSON column; `rods synth` rejecting a broken seed once."""

from __future__ import annotations

import json

import pytest

from rods.cli import main
from rods.tasks import Task, bfcl_task, read_tasks, write_tasks

GOOD_IDS = ("multi_turn_base_0", "multi_turn_base_1", "multi_turn_miss_func_2")


def broken(task_id: str, call: str = "no_such_function(x=1)") -> Task:
    """A BFCL task whose first gold call is replaced by `call`."""
    task = bfcl_task(task_id)
    truth = [list(turn) for turn in task.ground_truth]
    truth[0][0] = call
    return Task.model_validate({**task.model_dump(), "id": task.id + "_broken", "ground_truth": truth})


@pytest.fixture
def mixed(tmp_path):
    """good, broken (missing function), good, broken (wrong type), good: lines 1-5."""
    path = tmp_path / "mixed.jsonl"
    good = [bfcl_task(i) for i in GOOD_IDS]
    write_tasks(path, [good[0], broken("multi_turn_base_3"), good[1], broken("multi_turn_base_0", "cd(folder=3)"),
                       good[2]])
    return path


def test_valid_file_passes_with_exit_0(tmp_path, capsys):
    path = tmp_path / "good.jsonl"
    write_tasks(path, [bfcl_task(i) for i in GOOD_IDS])
    assert main(["tasks", "validate", str(path)]) == 0
    assert "3/3 tasks pass" in capsys.readouterr().err


def test_a_broken_gold_call_fails_with_one_line_and_stops_there(mixed, capsys):
    assert main(["tasks", "validate", str(mixed)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (f"{mixed}:2: task multi_turn_base_3_broken: turn 0, call 0 no_such_function(x=1): "
                      "unknown function 'no_such_function'")
    assert all("multi_turn_base_0_broken" not in line for line in err)  # stopped at the first failing task
    assert err[-1] == f"stopped at the first failing task ({mixed}:2); --keep-going checks every task"


def test_keep_going_checks_every_task_and_out_writes_those_that_pass(mixed, tmp_path, capsys):
    good = tmp_path / "good.jsonl"
    assert main(["tasks", "validate", str(mixed), "--keep-going", "--out", str(good)]) == 1  # some failed
    err = capsys.readouterr().err
    assert f"{mixed}:2: task multi_turn_base_3_broken: turn 0, call 0 " in err
    assert (f"{mixed}:4: task multi_turn_base_0_broken: turn 0, call 0 cd(folder=3): "
            "argument 'folder': 3 is not of type 'string'") in err
    assert "3/5 tasks pass" in err and f"wrote the 3 passing tasks to {good}" in err
    assert [t.id for t in read_tasks(good)] == list(GOOD_IDS)
    assert main(["tasks", "validate", str(good)]) == 0


def test_out_without_keep_going_is_refused(mixed, tmp_path, capsys):
    assert main(["tasks", "validate", str(mixed), "--out", str(tmp_path / "g.jsonl")]) == 1
    assert "--out needs --keep-going" in capsys.readouterr().err
    assert not (tmp_path / "g.jsonl").exists()


def test_bad_lines_are_failures_that_keep_going_reads_past(tmp_path, capsys):
    path = tmp_path / "lines.jsonl"
    good = json.dumps(bfcl_task(GOOD_IDS[0]).model_dump(mode="json"))
    path.write_text(good + "\n" + '{"id": "x"\n' + good + "\n" + json.dumps({"id": "y", "category": "nope"}) + "\n")
    assert main(["tasks", "validate", str(path), "--keep-going"]) == 1
    err = capsys.readouterr().err
    assert f"{path}:2: invalid JSON (Expecting ',' delimiter at column 11)" in err
    assert f"{path}:3: task {GOOD_IDS[0]}: duplicate task id (first at line 1)" in err
    assert f"{path}:4: field 'category'" in err
    assert "1/4 tasks pass" in err


def test_the_reward_check_stays(tmp_path, capsys, monkeypatch):
    import rods.reward
    from rods.reward.progress import RewardResult

    path = tmp_path / "one.jsonl"
    write_tasks(path, [bfcl_task(GOOD_IDS[0])])
    turns = bfcl_task(GOOD_IDS[0]).num_turns
    low = RewardResult([True] + [False] * (turns - 1), [True] * turns, 1 / turns, 0)
    monkeypatch.setattr(rods.reward, "score", lambda task, steps: low)
    assert main(["tasks", "validate", str(path)]) == 1
    assert (f"{path}:1: task {GOOD_IDS[0]}: turn 1: the state check fails, the execution check passes; "
            f"the ground truth scores RP = {1 / turns:.2f} against itself") in capsys.readouterr().err


@pytest.mark.parametrize("argv", [
    ["tasks", "validate", "{dir}"], ["tasks", "slice", "{dir}", "--out", "{dir}/x.jsonl"],
    ["tasks", "validate", "{dir}/missing.jsonl"], ["tasks", "export", "--out", "{dir}"],
    ["reward", "--trajectories", "{dir}", "--out", "{dir}/o.jsonl"],
    ["synth", "--seeds", "{dir}", "--llm", "template", "--out", "{dir}/v.jsonl"],
    ["synth", "--seeds", "train", "--llm", "template", "--out", "{dir}"],
    ["train", "--config", "{dir}"],
])
def test_a_directory_or_missing_file_is_one_line(argv, tmp_path, capsys):
    argv = [a.replace("{dir}", str(tmp_path)) for a in argv]
    assert main(argv) == 1
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"rods {argv[0]}: error: {tmp_path}"), err
    assert "is a directory" in lines[0] or "no such file" in lines[0]


def test_synth_rejects_a_broken_seed_once_counts_it_and_exits_1(tmp_path, capsys, caplog):
    seeds, out, stats = tmp_path / "seeds.jsonl", tmp_path / "variants.jsonl", tmp_path / "stats.json"
    write_tasks(seeds, [bfcl_task(GOOD_IDS[0]), broken("multi_turn_base_3")])
    argv = ["synth", "--seeds", str(seeds), "--llm", "template", "--per-seed", "3", "--out", str(out),
            "--stats", str(stats)]
    assert main(argv) == 1
    said = capsys.readouterr().err + caplog.text
    assert "Traceback" not in said and "KeyError" not in said
    rejected = [r.getMessage() for r in caplog.records if "seed rejected" in r.getMessage()]
    assert rejected == [f"seed rejected: {seeds}:2: task multi_turn_base_3_broken: turn 0, call 0 "
                        "no_such_function(x=1): unknown function 'no_such_function'"]  # once, not per attempt
    report = json.loads(stats.read_text())
    assert report["invalid_seeds"] == 1 and report["rejections"]["seed:unknown_function"] == 1
    assert report["seeds"] == 1 and report["variants"] == 3  # the good seed was synthesized
    assert {t.provenance.parent_id for t in read_tasks(out)} <= {GOOD_IDS[0]}


@pytest.mark.parametrize("path", ["examples/byo_env/seeds.jsonl", "configs/compare/seeds.jsonl"])
def test_shipped_seed_files_pass(path, monkeypatch, capsys):
    """The guide's and the comparison's seeds (the tau2 and MCP seeds: tests/envs; all of them: bench/validate.py)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    monkeypatch.syspath_prepend(str(root / "examples" / "byo_env"))  # as the guide's export does
    assert main(["tasks", "validate", str(root / path)]) == 0, capsys.readouterr().err
