"""The progress and binary rewards: ground-truth replay, per-turn rules, the incremental scorer."""

import pytest

from rods.envs import ToolEnvironment
from rods.reward import (
    ProgressScorer,
    clear_ground_truth_cache,
    compute_ground_truth,
    ground_truth_for,
    is_empty_response,
    score,
)
from rods.reward.perturb import perturb, replay


def test_ground_truth_of_all_800_tasks_replays_perfectly(bfcl_tasks):
    assert len(bfcl_tasks) == 800
    bad = []
    for task in bfcl_tasks:
        result = score(task, replay(task))
        if result.progress != 1.0 or result.binary != 1:
            bad.append(task.id)
        assert len(result.state_pass) == len(result.exec_pass) == task.num_turns
        # and executed call by call on a fresh environment (no reuse of cached turns)
        scorer = ProgressScorer(task)
        env = ToolEnvironment(task)
        for turn_steps in replay(task):
            scorer.end_turn(
                env, [env.execute(c) for step in turn_steps for c in step], empty=is_empty_response(turn_steps)
            )
        if scorer.result() != result:
            bad.append(f"{task.id} (executed)")
    assert bad == []


def _task(tasks, pred):
    return next(t for t in tasks if pred(t))


def test_progress_is_the_mean_of_turn_rewards(bfcl_tasks):
    task = _task(bfcl_tasks, lambda t: t.num_turns >= 4 and all(t.ground_truth))
    steps = replay(task)
    steps[-1] = [[]]  # the model answers the last turn in text only
    result = score(task, steps)
    assert result.state_pass[:-1] == [True] * (task.num_turns - 1)
    assert result.exec_pass[-1] is False
    assert result.progress == pytest.approx((task.num_turns - 1) / task.num_turns)
    assert result.binary == 0


def test_empty_response_rule_mirrors_bfcl():
    assert is_empty_response([])
    assert is_empty_response([[]])
    assert not is_empty_response([[], []])  # BFCL: not "empty"
    assert not is_empty_response([["ls()"]])


def _state_changing_empty_turn(tasks):
    """A miss_param task, its empty-GT turn t, and a later GT call that changes state at t."""
    for task in tasks:
        if task.category != "miss_param":
            continue
        for t, gt_turn in enumerate(task.ground_truth):
            if gt_turn:
                continue
            for call in [c for g in task.ground_truth[t + 1:] for c in g]:
                env = ToolEnvironment(task)
                for turn in task.ground_truth[: t + 1]:
                    env.execute_all(turn)
                before = env.snapshot()
                env.execute(call)
                if env.snapshot() != before:
                    return task, t, call
    raise AssertionError("no such task")


def test_empty_ground_truth_turn(bfcl_tasks):
    task, t, call = _state_changing_empty_turn(bfcl_tasks)
    result = score(task, replay(task))
    assert result.exec_pass[t] is True and result.state_pass[t] is True
    # acting early on the empty turn: r_exec stays 1, r_state drops to 0
    steps = replay(task)
    steps[t] = [[call]]
    acted = score(task, steps)
    assert acted.exec_pass[t] is True
    assert acted.state_pass[t] is False
    assert acted.progress < 1.0


def test_missing_turns_are_none_and_fail(bfcl_tasks):
    task = _task(bfcl_tasks, lambda t: t.num_turns >= 3)
    result = score(task, replay(task)[:2])
    assert result.state_pass[2:] == [None] * (task.num_turns - 2)
    assert result.binary == 0
    assert result.progress == pytest.approx(2 / task.num_turns)
    with pytest.raises(ValueError, match="turns"):
        score(task, replay(task) + [[]])


def test_shape_errors_name_the_place(bfcl_tasks):
    task = bfcl_tasks[0]
    with pytest.raises(ValueError, match=r"steps\[0\]\[0\]\[0\]"):
        score(task, [[[1]]] + [[]] * (task.num_turns - 1))
    with pytest.raises(ValueError, match=r"steps\[1\]"):
        score(task, [[], "x"])


def test_incremental_scorer_matches_score(bfcl_tasks):
    for task in bfcl_tasks[::40]:
        for kind in ("replay", "dropped", "moved_between_turns", "extra_read_only"):
            steps = perturb(task, kind)
            if steps is None:
                continue
            scorer = ProgressScorer(task)
            env = scorer.new_env()
            for turn_steps in steps:
                results = [env.execute(c) for step in turn_steps for c in step]
                verdict = scorer.end_turn(env, results, empty=is_empty_response(turn_steps))
                assert verdict.turn == scorer.turn - 1
            assert scorer.result() == score(task, steps)
            # an env loaded directly (no template shortcut) scores the same
            direct = ProgressScorer(task)
            env = ToolEnvironment(task)
            for turn_steps in steps:
                results = [env.execute(c) for step in turn_steps for c in step]
                direct.end_turn(env, results, empty=is_empty_response(turn_steps))
            assert direct.result() == scorer.result()
    with pytest.raises(ValueError, match="cannot end turn"):
        scorer.end_turn(env, [])


def test_ground_truth_is_computed_once_per_task(bfcl_tasks):
    clear_ground_truth_cache()
    task = bfcl_tasks[0]  # GorillaFileSystem + TwitterAPI
    gt = ground_truth_for(task)
    assert ground_truth_for(task) is gt
    assert ground_truth_for(task.model_copy(deep=True)) is gt  # same content, another object
    changed = task.model_copy(deep=True)
    changed.ground_truth[0] = changed.ground_truth[0][:-1]
    assert ground_truth_for(changed) is not gt
    fresh = compute_ground_truth(task)
    assert fresh.results == gt.results and fresh.states == gt.states
    # rollouts never touch the cached template
    env = gt.new_env()
    env.execute("mkdir(dir_name='scratch')")
    assert gt.new_env().state() != env.state()
    assert gt.new_env().state() == ToolEnvironment(task).state()


def test_fast_path_needs_parsable_identical_calls(bfcl_tasks):
    """A turn is reused from the ground truth only if both sides parse and match exactly."""
    from rods.envs.bfcl.official import official_verdict

    task = next(t for t in bfcl_tasks if t.id == "multi_turn_long_context_20")
    long_call = task.ground_truth[1][-1]
    assert len(long_call) > 2000  # parsed outside the parse cache
    for broken in ("[x for x in ()]", "ls(", long_call[:-1]):
        steps = replay(task)
        steps[1] = [task.ground_truth[1][:-1] + [broken]]
        result = score(task, steps)
        assert result.binary == 0 == int(official_verdict(task, steps)["valid"])
        assert result.state_pass[1] is False
    # formatting differences still match (same parsed call), argument values do not
    steps = replay(task)
    steps[0] = [[c.replace("=", " = ") for c in task.ground_truth[0]]]
    assert score(task, steps).binary == 1


def test_skipping_unmatchable_results_changes_no_verdict(bfcl_tasks, monkeypatch):
    """Dicts no ground-truth result can equal are not serialized; every verdict stays the same."""
    from rods.envs import format_result
    from rods.reward.ground_truth import UNMATCHED, GroundTruth
    from rods.reward.perturb import KINDS

    tasks = bfcl_tasks[::9]
    cases = [(t, s) for t in tasks for kind in KINDS for seed in range(2) if (s := perturb(t, kind, seed)) is not None]
    fast = [score(t, s) for t, s in cases]
    skipped = sum(ground_truth_for(t).result_formatter()(dict(no_such_key=1)) == UNMATCHED for t in tasks)
    assert skipped > len(tasks) // 2  # the shortcut is in use
    monkeypatch.setattr(GroundTruth, "result_formatter", lambda self: format_result)
    assert [score(t, s) for t, s in cases] == fast
