"""The executor: runs plans from new configs; deterministic Config Patches for common preconditions."""

import random

import pytest

from rods.envs.calls import ToolCall
from rods.llm import make_backend
from rods.synth.executor import Executor, deterministic_patch, run_plan
from rods.synth.plan import PlannedCall
from rods.synth.planner import Planner
from rods.synth.profile import incoming_edges, produced_values, result_value, trace_task
from rods.synth.resolver import Step, asked_again, finds_nothing, is_empty, reads_what_it_made, retold_arguments
from rods.tasks import Task


@pytest.fixture(scope="module")
def planner(api_graph):
    return Planner(make_backend("template"), api_graph)


def _seed(gt, classes, config):
    return Task(id="s", category="base", question=[[{"role": "user", "content": "x"}] for _ in gt],
                ground_truth=gt, involved_classes=classes, initial_config=config)


def _plan(planner, seed, calls, config):
    plan = planner.plan(seed, rng=random.Random(0))
    plan.calls = [PlannedCall(name, args, turn=0) for name, args in calls]
    plan.initial_config = config
    return plan


TRADING = {"TradingBot": {"authenticated": False, "market_status": "Closed",
                          "account_info": {"account_id": 1, "balance": 10.0, "binding_card": 1}}}


def test_login_market_and_funds_patches_make_a_trade_possible(planner):
    seed = _seed([["get_account_info()"]], ["TradingBot"], {"TradingBot": {"authenticated": True}})
    plan = _plan(planner, seed, [("withdraw_funds", {"amount": 500.0})], TRADING)
    executor = Executor(make_backend("template"))
    done = []
    for _ in range(4):
        run = executor.run(plan)
        if run.ok:
            break
        done.append(executor.patch(plan, run))
    assert run.ok, done
    assert [d.split(": ")[1] for d in done] == ["authenticated", "market opened", "funds added"]
    assert plan.initial_config["TradingBot"]["authenticated"] is True
    assert plan.initial_config["TradingBot"]["market_status"] == "Open"
    assert plan.initial_config["TradingBot"]["account_info"]["balance"] > 500


def test_missing_file_is_created_where_the_call_runs(planner):
    fs = {"GorillaFileSystem": {"root": {"kim": {"type": "directory", "contents": {
        "docs": {"type": "directory", "contents": {}}}}}}}
    seed = _seed([["ls()"]], ["GorillaFileSystem"], fs)
    plan = _plan(planner, seed, [("cd", {"folder": "docs"}), ("cat", {"file_name": "plan.txt"})], fs)
    run = run_plan(plan)
    assert not run.ok and run.failure.function == "cat"
    assert deterministic_patch(plan, run) == "GorillaFileSystem: created file plan.txt"
    assert "plan.txt" in plan.initial_config["GorillaFileSystem"]["root"]["kim"]["contents"]["docs"]["contents"]
    assert run_plan(plan).ok


def test_unknown_errors_get_no_deterministic_patch_and_llm_patches_are_checked(planner):
    seed = _seed([["ls()"]], ["GorillaFileSystem"], {})
    plan = _plan(planner, seed, [("cd", {"folder": "nowhere/else"})], {"GorillaFileSystem": {}})
    run = run_plan(plan)
    assert not run.ok
    assert deterministic_patch(plan, run) is None
    assert Executor(make_backend("template")).patch(plan, run) is None  # the template has no patch to offer


def test_resolved_calls_keep_the_planned_data_flow_and_bind_what_results_gave(planner, seeds_by_category):
    """Over many seeds: every resolved call's data-flow sources are exactly the plan's, and a bound
    argument holds the value found at its path in its source's result."""
    seeds = [t for c in ("base", "long_context") for t in seeds_by_category[c][:12]]
    ran = bound = 0
    for i, seed in enumerate(seeds):
        plan = planner.plan(seed, rng=random.Random(i))
        wanted = [c.sources for c in plan.calls]
        run = run_plan(plan)
        if not run.ok:
            assert run.failure.index < len(plan.calls) and run.failure.kind in ("execution", "plan")
            continue
        ran += 1
        trace = trace_task(Task(id="v", category=seed.category, question=seed.question, ground_truth=run.ground_truth,
                                involved_classes=seed.involved_classes, initial_config=plan.initial_config))
        assert not trace.errors and trace.results == run.results
        produced = [produced_values(r, c) for r, c in zip(trace.results, trace.created)]
        for j, call in enumerate(run.calls):
            assert incoming_edges(call, produced[:j]) == set(wanted[j]), (seed.id, j, call)
            assert plan.calls[j].name == call.name and plan.calls[j].arguments == call.arguments
            for key, (src, path) in plan.calls[j].bindings.items():
                name, _, element = key.partition("[")
                value = call.arguments[name][int(element.rstrip("]"))] if element else call.arguments[name]
                found = result_value(run.results[src])
                for step in path:
                    found = found[step]
                assert found == value and src in wanted[j]
                bound += 1
    assert ran >= len(seeds) // 2 and bound >= 3, (ran, bound)


@pytest.mark.parametrize(("result", "empty"), [
    ("", True), ("None", True), ("[]", True), ("{}", True),
    ('{"file_content": ""}', True), ('{"diff_lines": ""}', True), ('{"result": {"text": "", "note": null}}', True),
    ('{"matching_lines": []}', False), ('{"result": {"items": [], "note": null}}', False),
    ('{"file_content": "a"}', False), ('{"count": 0}', False), ('{"ok": false}', False), ('["", "x"]', False),
    ("0", False), ("some text", False),
])
def test_a_result_whose_every_field_is_empty_holds_nothing(result, empty):
    assert is_empty(result) is empty


@pytest.mark.parametrize("result, nothing", [
    ('{"matching_lines": []}', True), ('{"count": 0, "type": "lines"}', True), ("[]", True),
    ('{"file_content": ""}', True), ('{"matching_lines": ["a b"]}', False), ('{"count": 3, "type": "lines"}', False),
    ('{"id": "R1", "a": 1, "b": 2, "bags": 0}', False),  # a record with a zero in it answers its question
    ('{"ok": false}', False),
])
def test_what_finds_nothing(result, nothing):
    assert finds_nothing(result) is nothing


def test_a_read_of_a_thing_just_made_that_finds_nothing_is_pointless():
    touch, cd = ToolCall("touch", {"file_name": "a.log"}), ToolCall("cd", {"folder": "docs"})
    grep = ToolCall("grep", {"file_name": "a.log", "pattern": "x"})
    made = {"a.log": "/fs/root/a.log"}
    assert reads_what_it_made(grep, '{"matching_lines": []}', [(touch, True, made), (cd, True, {"docs": "/p"})])
    assert not reads_what_it_made(grep, '{"matching_lines": ["x y"]}', [(touch, True, made)])  # it found something
    write = ToolCall("echo", {"content": "x y", "file_name": "a.log"})
    assert not reads_what_it_made(grep, '{"matching_lines": []}', [(touch, True, made), (write, True, {})])
    assert not reads_what_it_made(grep, '{"matching_lines": []}', [(cd, True, {})])  # a file the task found
    assert not reads_what_it_made(grep, '{"matching_lines": []}', [(touch, False, made)])  # no change: not made
    # a copy made from it leaves it as empty as it was (the ninth blind read failed `wc` of such a file)
    cp = ToolCall("cp", {"source": "a.log", "destination": "b.log"})
    assert reads_what_it_made(grep, '{"matching_lines": []}', [(touch, True, made), (cp, True, {"b.log": "/p"})])


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

