"""The resolver: a depth-first search for one concrete call per planned position, and the reads it passes over."""

import random

import pytest

from rods.envs.calls import ToolCall
from rods.llm import make_backend
from rods.synth.arguments import ArgumentProposer
from rods.synth.plan import PlannedCall
from rods.synth.planner import Planner
from rods.synth.resolver import (
    FAILURES_IN_A_ROW,
    Step,
    _Search,
    asked_again,
    resolve,
    retold_arguments,
    start,
)
from rods.tasks import Task

#: A folder holding one file with text in it.
FS = {"GorillaFileSystem": {"root": {"kim": {"type": "directory", "contents": {
    "docs": {"type": "directory", "contents": {"notes.txt": {"type": "file", "content": "pack the tent"}}}}}}}}


@pytest.fixture(scope="module")
def planner(api_graph):
    return Planner(make_backend("template"), api_graph)


def _plan(planner, calls):
    """A plan of `calls` ((PlannedCall keyword arguments), ...) on FS, every position to resolve."""
    seed = Task(id="s", category="base", question=[[{"role": "user", "content": "x"}]], ground_truth=[["ls()"]],
                involved_classes=["GorillaFileSystem"], initial_config=FS)
    plan = planner.plan(seed, rng=random.Random(0))
    plan.calls = [PlannedCall(turn=0, **c) for c in calls]
    plan.initial_config = FS
    return plan


def test_a_write_that_takes_away_what_a_later_call_needs_is_not_a_candidate(planner):
    """mkdir a folder, a write, then cd into the folder: removing or renaming it leaves the cd nothing."""
    plan = _plan(planner, [dict(name="cd", arguments={"folder": "docs"}),
                           dict(name="mkdir", sources=(), changed=True, original="mkdir"),
                           dict(name="rmdir", sources=(1,), alternatives=["mv"], changed=True, original="mv"),
                           dict(name="cd", sources=(1,), changed=False, original="cd")])
    plan.calls[0].sources = None  # cd docs, as given
    search = _Search(plan, ArgumentProposer(plan.remapper, random.Random(0), ["GorillaFileSystem"], FS), 100)
    cd = search._run(ToolCall("cd", {"folder": "docs"}), start(plan))
    made = search._run(ToolCall("mkdir", {"dir_name": "trip"}), cd)
    steps = [cd, made]
    removed = search._run(ToolCall("rmdir", {"dir_name": "trip"}), made)
    renamed = search._run(ToolCall("mv", {"source": "trip", "destination": "old_trip"}), made)
    filled = search._run(ToolCall("mv", {"source": "notes.txt", "destination": "trip"}), made)
    assert removed.changed and renamed.changed and filled.changed
    assert search.loses_a_source(2, removed, steps) and search.loses_a_source(2, renamed, steps)
    assert not search.loses_a_source(2, filled, steps)
    # a source whose result has words besides what it made: a rename, then the renamed file removed
    renamed_file = search._run(ToolCall("mv", {"source": "notes.txt", "destination": "plan.txt"}), cd)
    gone = search._run(ToolCall("rm", {"file_name": "plan.txt"}), renamed_file)
    kept = search._run(ToolCall("cp", {"source": "plan.txt", "destination": "trip"}), renamed_file)
    assert "moved" in renamed_file.result and search.loses_a_source(2, gone, [cd, renamed_file])
    assert not search.loses_a_source(2, kept, [cd, renamed_file])
    # the search itself: the write at 2 leaves the folder there for the cd
    resolution = resolve(plan)
    assert resolution.dead_end is None, resolution.dead_end
    calls = [s.call for s in resolution.steps]
    assert calls[2].name == "mv" and calls[2].arguments["destination"] == calls[1].arguments["dir_name"], calls
    assert calls[3] == ToolCall("cd", {"folder": calls[1].arguments["dir_name"]})


def test_a_function_whose_draws_keep_failing_is_given_up(planner):
    """cat in a folder with no file: each draw fails alike; after FAILURES_IN_A_ROW the search moves on."""
    plan = _plan(planner, [dict(name="cat", sources=(), changed=False, original="cat")])
    resolution = resolve(plan)
    assert resolution.dead_end is not None and resolution.dead_end.kind == "execution"
    assert resolution.trials == FAILURES_IN_A_ROW, resolution.trials


def test_the_same_read_with_nothing_changed_since_is_asked_again():
    cat, ls = ToolCall("cat", {"file_name": "a.log"}), ToolCall("ls", {})
    touch = ToolCall("touch", {"file_name": "b.log"})

    def step(call, changed):
        return Step(call, "{}", None, {}, {}, changed=changed)

    assert asked_again(cat, [step(cat, False), step(ls, False)])
    assert not asked_again(cat, [step(cat, False), step(touch, True)])  # the state changed since
    assert not asked_again(cat, [step(ToolCall("cat", {"file_name": "b.log"}), False)])


def test_a_text_that_retells_a_search_that_found_nothing_is_turned_away():
    def step(call, result, changed):
        return Step(call, result, None, {}, {}, changed=changed)

    found = step(ToolCall("grep", {"file_name": "a.txt", "pattern": "plan"}),
                 '{"matching_lines": ["Quarterly plan for Lisbon"]}', False)
    nothing = step(ToolCall("grep", {"file_name": "a.txt", "pattern": "plan"}), '{"matching_lines": []}', False)
    archived = step(ToolCall("archive", {"folder": "reports"}), "None", True)
    post = {"content": "Made-up words"}
    assert retold_arguments({"content": 0}, post, {}, [found]) == {"content": "Update: Quarterly plan for Lisbon"}
    assert retold_arguments({"content": 0}, post, {}, [nothing]) is None  # "post that text": there is none
    assert retold_arguments({"content": 0}, post, {}, [archived]) == {"content": "About reports"}  # a write's note
    assert retold_arguments({"content": 0}, post, {"content": 0}, [nothing]) == post  # fed, not retold



def test_a_read_that_finds_nothing_is_passed_over_unless_the_seeds_found_nothing_too(planner):
    """find in an empty folder answers nothing a person asked for; where the seed's read found nothing too
    (looking for a file that is not there), a variant's may."""
    empty = {"GorillaFileSystem": {"root": {"kim": {"type": "directory", "contents": {
        "empty": {"type": "directory", "contents": {}}}}}}}
    for may in (False, True):
        plan = _plan(planner, [dict(name="cd", arguments={"folder": "empty"}),
                               dict(name="find", sources=(), changed=False, original="find", may_find_nothing=may)])
        plan.calls[0].sources = None
        plan.initial_config = empty
        resolution = resolve(plan)
        if may:
            assert resolution.dead_end is None and resolution.steps[1].call.name == "find"
        else:
            assert resolution.dead_end is not None and resolution.dead_end.kind == "plan", resolution.dead_end
