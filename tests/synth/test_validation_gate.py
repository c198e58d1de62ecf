"""Validation where tasks enter synthesis and training: the gate's call checks (`gate:<kind>`), seeds rejected
once by the pipeline, and training seeds that fail left out with one line each."""

from __future__ import annotations

import logging

import pytest

from rods.envs.seeds import DataSettings, load_seeds
from rods.llm import make_backend
from rods.synth.gate import Gate, Rejected
from rods.synth.pipeline import Pipeline
from rods.synth.profile import profile_of
from rods.tasks import Task, bfcl_task, write_tasks


def with_first_call(task: Task, call: str, suffix: str = "_broken") -> Task:
    truth = [list(turn) for turn in task.ground_truth]
    truth[0][0] = call
    return Task.model_validate({**task.model_dump(), "id": task.id + suffix, "ground_truth": truth})


@pytest.mark.parametrize(("call", "reason"), [
    ("cd(folder=3)", "gate:schema"),  # the seed's first call is cd(folder='document')
    ("cd(folder='document', depth=1)", "gate:schema"),
    ("cd(folder='no_such_folder')", "gate:call_error"),
    ("no_such_function(x=1)", "gate:unknown_function"),
])
def test_the_gate_rejects_a_variant_by_the_same_call_checks(call, reason):
    seed = bfcl_task("multi_turn_base_0")
    gate = Gate()
    with pytest.raises(Rejected) as rejected:
        gate.check(seed, with_first_call(seed, call), profile_of(seed))
    assert rejected.value.reason == reason


def test_the_pipeline_rejects_a_failing_seed_once_and_counts_it(caplog):
    good, bad = bfcl_task("multi_turn_base_0"), with_first_call(bfcl_task("multi_turn_base_1"), "cd(folder=3)")
    pipeline = Pipeline(make_backend("template"))
    with caplog.at_level(logging.WARNING, logger="rods.synth.pipeline"):
        assert pipeline.admit([good, bad], where={bad.id: "seeds.jsonl:2"}) == [good]
        pipeline.synthesize([good, bad])  # the engine hands the same seeds again: not checked, not counted twice
    assert [r.getMessage() for r in caplog.records] == [
        f"seed rejected: seeds.jsonl:2: task {bad.id}: turn 0, call 0 cd(folder=3): "
        "argument 'folder': 3 is not of type 'string'"]
    report = pipeline.report()
    assert report["invalid_seeds"] == 1 and report["rejections"]["seed:schema"] == 1
    assert report["seeds"] == 1  # only the valid seed reached the stages


def test_training_seeds_that_fail_are_left_out_with_one_line_each(tmp_path, caplog):
    path = tmp_path / "seeds.jsonl"
    good = bfcl_task("multi_turn_base_0")
    write_tasks(path, [good, with_first_call(bfcl_task("multi_turn_base_1"), "no_such_function(x=1)")])
    with caplog.at_level(logging.WARNING, logger="rods.envs.seeds"):
        assert [t.id for t in load_seeds(DataSettings(seeds=str(path)))] == [good.id]
    assert [r.getMessage() for r in caplog.records] == [
        f"data.seeds: seed left out: {path}:2: task multi_turn_base_1_broken: turn 0, call 0 "
        "no_such_function(x=1): unknown function 'no_such_function'",
        "data.seeds: 1 of 2 seeds fail validation and are left out"]
    write_tasks(path, [with_first_call(good, "cd(folder=3)")])
    with pytest.raises(ValueError, match=r"no seed tasks left after filtering \(1 failed validation"):
        load_seeds(DataSettings(seeds=str(path)))
