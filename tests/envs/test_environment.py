"""ToolEnvironment: BFCL-formatted results and errors, and no state shared between rollouts."""

import decimal
import json

import mpmath
import pytest

from rods.envs import ERROR_PREFIX, ToolEnvironment, format_result
from rods.envs.environment import api_class


def _task(tasks, task_id):
    return next(t for t in tasks if t.id == task_id)


def test_results_are_formatted_like_bfcl(bfcl_tasks):
    env = ToolEnvironment(bfcl_tasks[0])  # GorillaFileSystem + TwitterAPI
    assert env.execute("pwd()") == json.dumps({"current_working_directory": "/workspace"})
    assert format_result("plain") == "plain"
    assert format_result({"a": 1}) == '{"a": 1}'
    assert format_result({"a": {1, 2}}) == str({"a": {1, 2}})  # not JSON-serialisable -> str
    assert format_result(["x"]) == "['x']"
    assert format_result(None) == "None"
    assert env.execute("[pwd(), ls()]").startswith("[{'current_working_directory'")


def test_errors_read_like_bfcl(bfcl_tasks):
    env = ToolEnvironment(bfcl_tasks[0])
    assert env.execute("foo(a=1)") == f"{ERROR_PREFIX}name 'foo' is not defined"
    assert env.execute("kill()") == f"{ERROR_PREFIX}Function call kill is not allowed."
    assert env.execute("mean(numbers=[1])") == f"{ERROR_PREFIX}name 'mean' is not defined"  # MathAPI not involved
    assert (
        env.execute("cd(bogus='x')")
        == f"{ERROR_PREFIX}GorillaFileSystem.cd() got an unexpected keyword argument 'bogus'"
    )
    assert env.execute("cd(folder='x'").startswith(ERROR_PREFIX)
    assert env.execute(42).startswith(ERROR_PREFIX)  # type: ignore[arg-type]


def test_positional_ground_truth_call(bfcl_tasks):
    env = ToolEnvironment(bfcl_tasks[0])
    assert "No such file" in env.execute("sort('final_report.pdf')")


def test_envs_do_not_share_state(bfcl_tasks):
    task = bfcl_tasks[0]
    a, b = ToolEnvironment(task), ToolEnvironment(task)
    a.execute("cd(folder='document')")
    a.execute("mkdir(dir_name='only_in_a')")
    assert a.state() != b.state()
    assert "only_in_a" not in b.execute("ls()")
    fork = a.fork()
    fork.execute("mkdir(dir_name='only_in_fork')")
    assert "only_in_fork" not in a.execute("ls()")


def test_long_context_travel_cards_are_isolated(bfcl_tasks):
    """Long-context TravelAPI loads module-level cards/bookings; mutations must stay in one env."""
    from bfcl_eval.eval_checker.multi_turn_eval.func_source_code import long_context

    task = next(t for t in bfcl_tasks if t.long_context and "TravelAPI" in t.involved_classes)
    before = json.dumps(long_context.CREDIT_CARD_EXTENSION, sort_keys=True)
    env = ToolEnvironment(task)
    cards = env.instances["TravelAPI"].credit_card_list
    ext_id = next(iter(long_context.CREDIT_CARD_EXTENSION))
    assert cards[ext_id] == long_context.CREDIT_CARD_EXTENSION[ext_id]
    assert cards[ext_id] is not long_context.CREDIT_CARD_EXTENSION[ext_id]
    cards[ext_id]["balance"] = -1  # what a purchase would do
    assert json.dumps(long_context.CREDIT_CARD_EXTENSION, sort_keys=True) == before
    assert ToolEnvironment(task).instances["TravelAPI"].credit_card_list[ext_id]["balance"] != -1


def test_replay_after_a_mutating_rollout_is_identical(bfcl_tasks):
    """Every task: results of a GT replay do not depend on what ran before (incl. random draws)."""
    subset = [t for t in bfcl_tasks if t.long_context][:40] + bfcl_tasks[:40]

    def run(task):
        env = ToolEnvironment(task)
        return [env.execute_all(turn) for turn in task.ground_truth], env.snapshot()

    first = [run(t) for t in subset]
    for t in subset:  # a messy rollout on every task in between
        env = ToolEnvironment(t)
        for turn in reversed(t.ground_truth):
            env.execute_all(turn)
        for name in sorted(env.functions)[:5]:
            env.execute(f"{name}()")
    assert [run(t) for t in subset] == first


def test_random_draws_are_seeded_per_instance(bfcl_tasks):
    task = next(t for t in bfcl_tasks if "VehicleControlAPI" in t.involved_classes)
    a, b = ToolEnvironment(task), ToolEnvironment(task)
    draws_a = [a.execute("get_outside_temperature_from_google()") for _ in range(3)]
    assert [b.execute("get_outside_temperature_from_google()") for _ in range(3)] == draws_a
    assert len(set(draws_a)) == 3
    assert a.fork().execute("get_current_speed()") == a.fork().execute("get_current_speed()")


def test_math_results_do_not_depend_on_global_precision():
    """`repr(mpf)` follows mpmath's global precision: results must not depend on what ran before."""
    env = ToolEnvironment({}, ["MathAPI"])
    call = "logarithm(value=20, base=10, precision=2)"
    before = mpmath.mp.dps
    try:
        seen = set()
        for dps in (15, 3, 40):
            mpmath.mp.dps = dps
            seen.add(env.execute(call))
    finally:
        mpmath.mp.dps = before
    assert len(seen) == 1


def test_math_precision_does_not_leak(bfcl_tasks):
    env = ToolEnvironment({}, ["MathAPI"])
    dps, prec = mpmath.mp.dps, decimal.getcontext().prec
    assert "result" in env.execute("logarithm(value=10.0, base=2.0, precision=50)")
    assert "result" in env.execute("square_root(number=2.0, precision=60)")
    assert (mpmath.mp.dps, decimal.getcontext().prec) == (dps, prec)


def test_functions_and_last_class_wins():
    env = ToolEnvironment({}, ["MathAPI", "GorillaFileSystem"])
    assert {"mean", "cd", "ls"} <= env.functions
    assert not any(name.startswith("_") for name in env.functions)
    with pytest.raises(ValueError):
        api_class("NotAClass")


def test_templates_spawn_lazily_and_independently(bfcl_tasks):
    from rods.envs import EnvTemplate

    task = next(t for t in bfcl_tasks if len(t.involved_classes) == 2 and "GorillaFileSystem" in t.involved_classes)
    template = EnvTemplate.load(task)
    a, b = template.spawn(), template.spawn()
    assert all(a.untouched(c) for c in task.involved_classes)
    a.execute("mkdir(dir_name='fresh')")
    assert not a.untouched("GorillaFileSystem")
    other = next(c for c in task.involved_classes if c != "GorillaFileSystem")
    assert a.untouched(other)
    assert b.state() == ToolEnvironment(task).state() != a.state()
    fork = a.fork()
    fork.execute("mkdir(dir_name='fork_only')")
    assert "fork_only" not in a.execute("ls()") and "fresh" in fork.execute("ls()")
    assert not any(a.untouched(c) for c in a.instances)  # reading instances thaws everything
