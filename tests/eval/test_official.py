"""Our verdicts against BFCL's official multi-turn checker, on rollouts of the agent loop."""

import json

import pytest

from rods.envs.bfcl.official import safe_decoded, safe_official_verdict
from rods.eval import rescore_file, write_decoded
from rods.rollout import Episode, EpisodeOptions


@pytest.fixture(scope="module")
def test_tasks():
    from rods.tasks import load_split

    return load_split("test")


def variants(task):
    """Turn-by-turn call lists: gold and perturbations that pass or fail in different ways."""
    gt = task.ground_truth
    yield "gold", [list(t) for t in gt]
    yield "drop_last", [t[:-1] if t else t for t in gt]
    yield "shifted", [list(gt[i + 1]) if i + 1 < len(gt) else [] for i in range(len(gt))]
    yield "early", [sum(gt[i : i + 2], []) for i in range(len(gt))]
    yield "noisy", [t + ["ls()", "mean(numbers=[1, 2])", "print(x=1)"] if t else ["pwd()"] for t in gt]


def play(task, turns, **kw):
    """Each turn: its calls in one pythonic reply (if any), then a text answer."""
    episode = Episode(task, EpisodeOptions(tool_format="pythonic", **kw))
    while not episode.done:
        calls = turns[episode.turn]
        if calls:
            episode.advance("[" + ", ".join(calls) + "]")
        if not episode.done:
            episode.advance("ok")
    return episode.trajectory()


def test_official_checker_agrees_with_rods_on_perturbed_rollouts(test_tasks, tmp_path):
    tasks = test_tasks[::8]  # 50 tasks, 12-13 per category
    trajs = [play(task, turns) for task in tasks for _, turns in variants(task)]
    path = tmp_path / "decoded.jsonl"
    assert write_decoded(path, trajs) == len(trajs)
    agreement = rescore_file(path, tasks)
    assert agreement.total == len(trajs) == 250
    assert agreement.disagreements == []
    # the corpus is not one-sided: both verdicts occur in numbers
    assert 50 <= agreement.official_correct <= 200
    line = json.loads(path.read_text().splitlines()[0])
    assert line["id"] == tasks[0].id and line["multi_turn_model_result_list_decoded"] == trajs[0].decoded


def test_force_quit_fails_in_both_scorers(test_tasks):
    task = next(t for t in test_tasks if t.num_turns > 2)
    traj = play(task, [["ls()"]] * task.num_turns, max_steps_per_turn=1, on_step_cap="force_quit")
    assert traj.force_quit and traj.binary == 0
    verdict = safe_official_verdict(task, traj.decoded)
    assert verdict["valid"] is False and verdict["error_type"] == "multi_turn:force_terminated"


def test_builtins_never_reach_bfcl_eval(test_tasks, tmp_path):
    task = next(t for t in test_tasks if "GorillaFileSystem" in t.involved_classes)
    target = tmp_path / "pwned.txt"
    evil = f"open({str(target)!r}, 'w')"
    decoded = [[[evil, "pwd()"]]] + [[] for _ in task.ground_truth[1:]]
    safe = safe_decoded(task, decoded)
    assert safe[0][0] == ["rods_unknown_function()", "pwd()"]
    verdict = safe_official_verdict(task, decoded)
    assert verdict["valid"] is False
    assert not target.exists()
