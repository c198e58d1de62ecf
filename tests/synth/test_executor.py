"""The executor: runs plans from new configs; deterministic Config Patches for common preconditions."""

import random

import pytest

from rods.llm import make_backend
from rods.synth.executor import Executor, deterministic_patch, run_plan
from rods.synth.plan import PlannedCall
from rods.synth.planner import Planner
from rods.synth.profile import incoming_edges, produced_values, result_value, trace_task
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
