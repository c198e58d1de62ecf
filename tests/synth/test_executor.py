"""The executor: runs plans from new configs; deterministic Config Patches for common preconditions."""

import random

import pytest

from rods.llm import make_backend
from rods.synth.executor import Executor, deterministic_patch, run_plan
from rods.synth.planner import PlannedCall, Planner
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


def test_bound_arguments_are_filled_from_new_results(planner, seeds_by_category):
    seed = next(t for t in seeds_by_category["base"] if any("booking_id" in c for turn in t.ground_truth for c in turn)
                and any(c.startswith("book_flight") for turn in t.ground_truth for c in turn))
    plan = planner.plan(seed, rng=random.Random(3))
    bound = [(j, c) for j, c in enumerate(plan.calls) if "booking_id" in c.bindings]
    assert bound
    run = run_plan(plan)
    assert run.ok, run.failure
    j, _ = bound[0]
    src, path = plan.calls[j].bindings["booking_id"]
    import json
    assert run.calls[j].arguments["booking_id"] == json.loads(run.results[src])[path[0]]
