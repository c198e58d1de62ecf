"""The complexity profile Φ: parsed with ast from the ground truth, data flow from executions."""

import pytest

from rods.synth.profile import (
    ComplexityProfile,
    data_flow_edges,
    dependency_depth,
    parse_ground_truth,
    profile_of,
    trace_task,
)
from rods.tasks import Task


def _task(gt, config=None, classes=("GorillaFileSystem",), category="base", question=None, missed=None):
    question = question or [[{"role": "user", "content": "do it"}] for _ in gt]
    return Task(id="t", category=category, question=question, ground_truth=gt, involved_classes=list(classes),
                initial_config=config or {}, missed_function=missed or {})


FS = {"GorillaFileSystem": {"root": {"alex": {"type": "directory", "contents": {
    "docs": {"type": "directory", "contents": {"a.txt": {"type": "file", "content": "alpha beta"}}}}}}}}


def test_created_state_makes_an_edge_and_depth_counts_the_chain():
    # mkdir creates 'newdir', cd uses it (state edge); touch creates a file that echo then writes (state edge).
    task = _task([["mkdir(dir_name='newdir')", "cd(folder='newdir')"],
                  ["touch(file_name='n.txt')", "echo(content='hi there', file_name='n.txt')"]], FS)
    p = profile_of(task)
    assert p.calls_per_turn == (2, 2)
    assert (0, 1) in p.edges and (2, 3) in p.edges
    assert p.depth == 2
    assert p.functions == ("mkdir", "cd", "touch", "echo")


def test_result_values_make_edges_but_trivial_values_do_not():
    task = _task([["ls()"], ["cd(folder='docs')"], ["wc(file_name='a.txt', mode='l')"]], FS)
    p = profile_of(task)
    assert (0, 1) in p.edges  # 'docs' appears in ls()'s result
    assert p.depth == 2
    math = _task([["add(a=2, b=3)"], ["multiply(a=5, b=5)"]], classes=("MathAPI",))
    assert profile_of(math).edges == ()  # 5 is a small integer: no edge
    math = _task([["add(a=20.5, b=3)"], ["multiply(a=23.5, b=2)"]], classes=("MathAPI",))
    assert profile_of(math).edges == ((0, 1),)


def test_dependency_depth():
    assert dependency_depth(0, []) == 0
    assert dependency_depth(3, []) == 1
    assert dependency_depth(4, [(0, 1), (1, 3), (0, 2)]) == 3


def test_ground_truth_is_parsed_never_evaluated():
    task = _task([["__import__('os').system('echo pwned')"]], FS)
    with pytest.raises(ValueError, match="turn 0"):
        parse_ground_truth(task)


def test_every_train_task_has_a_profile_that_matches_itself(train_tasks):
    categories = set()
    for task in train_tasks:
        trace = trace_task(task)
        assert not trace.errors, task.id
        p = profile_of(task, trace)
        assert p.matches(profile_of(task, trace))
        assert sum(p.calls_per_turn) == len(trace.calls) == sum(len(t) for t in task.ground_truth)
        assert 1 <= p.depth <= len(trace.calls)
        assert p.num_turns == task.num_turns
        if task.category == "miss_func":
            assert p.held_out and all(n >= 1 for _, n in p.held_out)
        categories.add(p.category)
    assert categories == {"base", "miss_func", "miss_param", "long_context"}


def test_mismatches_name_the_structural_fields(train_tasks):
    a = profile_of(train_tasks[0])
    b = ComplexityProfile(**{**a.to_dict(), "depth": a.depth + 1, "edges": ((0, 5),),
                             "functions": ("other",), "classes": tuple(a.classes)})
    assert a.mismatches(b) == ["depth", "edges"]
    assert a.mismatches(b, same_counts=False) == ["depth"]
    # topology ignores calls without edges: dropping one keeps the match when counts may vary
    d = ComplexityProfile(**{**a.to_dict(), "edges": tuple((i + 1, j + 1) for i, j in a.edges),
                             "calls_per_turn": (9,) * a.num_turns})
    assert d.topology() == a.topology() and a.matches(d, same_counts=False) and not a.matches(d)
    # function names are informational: a sibling substitution still matches
    c = ComplexityProfile(**{**a.to_dict(), "functions": ("x",) * len(a.functions)})
    assert a.matches(c)


def test_data_flow_uses_executions_not_the_path_field(train_tasks):
    task = next(t for t in train_tasks if t.path)
    trace = trace_task(task)
    assert [c.name for c in trace.calls] == [c.name for turn in parse_ground_truth(task) for c in turn]
    assert all(0 <= i < j < len(trace.calls) for i, j in data_flow_edges(trace))
