"""Turn slices: every turn of a seed task as one-turn tasks (`rods.envs.slices`)."""

import pytest

from rods.envs import ToolEnvironment
from rods.envs.slices import first_turn_slice, task_slices, turn_slice, turn_slices
from rods.reward import score
from rods.reward.ground_truth import compute_ground_truth
from rods.tasks import load_split


@pytest.fixture(scope="module")
def train():
    return load_split("train")


def test_slices_are_valid_one_turn_tasks_whose_gold_scores_one(train):
    slices = turn_slices(train)
    assert len(slices) > 2 * len(train)  # every turn with gold calls, not only the first
    turns = {piece.provenance.slice_turn for piece in slices}
    assert {0, 1, 2, 3} <= turns
    for piece in slices[::23]:
        assert piece.num_turns == 1 and piece.ground_truth[0]
        assert piece.provenance.slice_of in {t.id for t in train}
        result = score(piece, [[list(piece.ground_truth[0])]])
        assert result.progress == 1.0 and result.binary == 1, piece.id


def test_slice_keeps_start_state_narrows_classes_and_long_context(train):
    lc = next(t for t in train if t.category == "long_context" and t.ground_truth[0])
    piece = first_turn_slice(lc)
    assert piece.long_context and piece.category == "long_context" and "long_context" in piece.id
    assert set(piece.involved_classes) <= set(lc.involved_classes)
    for cls in piece.involved_classes:
        assert piece.initial_config.get(cls) == lc.initial_config.get(cls)
    mf = next(t for t in train if t.category == "miss_func" and t.ground_truth[0])
    assert first_turn_slice(mf).category == "base" and not first_turn_slice(mf).missed_function
    empty = next(t for t in train if t.category == "miss_param" and not t.ground_truth[0])
    assert first_turn_slice(empty) is None


def test_slice_filters(train):
    one = turn_slices(train, max_calls=1)
    assert one and all(len(t.ground_truth[0]) == 1 for t in one)
    assert len(turn_slices(train, max_calls=1, limit=5)) == 5


def test_a_slice_at_every_turn_starts_from_the_gold_state_before_it_and_its_gold_scores_one(train):
    """Property over many tasks of every category: slice t replays to RP=1 from the state before turn t."""
    checked = 0
    for task in train[::9]:
        truth = compute_ground_truth(task)
        for piece in task_slices(task):
            t = piece.provenance.slice_turn
            assert piece.id == f"{task.id}@turn{t}" and piece.num_turns == 1
            assert piece.ground_truth[0] == task.ground_truth[t]
            # the start state is the gold state after turns 0..t-1 (the initial state at t=0)
            start = ToolEnvironment(piece).state()
            before = truth.states[t - 1] if t else ToolEnvironment(task).state()
            for cls in piece.involved_classes:
                assert start[cls] == before[cls], (piece.id, cls)
            # the history holds every earlier user message, gold call reply and result, then turn t
            roles = [m.role for m in piece.question[0]]
            assert roles[-1] == "user" and roles.count("assistant") == sum(1 for g in task.ground_truth[:t] if g)
            users = [m.content for m in piece.question[0] if m.role == "user"]
            assert users == [m.content for k in range(t + 1) for m in task.question[k] if m.role == "user"]
            tool_results = [m.content for m in piece.question[0] if m.role == "tool"]
            assert tool_results == [r for k in range(t) for r in truth.results[k]]
            result = score(piece, [[list(piece.ground_truth[0])]])
            assert result.progress == 1.0 and result.binary == 1, piece.id
            checked += 1
    assert checked > 100


def test_turn_slice_rejects_a_turn_the_task_does_not_have(train):
    with pytest.raises(ValueError, match="no turn 99"):
        turn_slice(train[0], 99)


def test_slices_and_episodes_keep_the_expected_errors_of_their_turns():
    from validation_envs import DESK_STATE

    from rods.envs.slices import episode_upto
    from rods.envs.validation import validate_task
    from rods.tasks import Task

    desk = "validation_envs:Desk"
    task = Task.model_validate({
        "id": "desk", "category": "base", "environment": desk, "initial_config": {desk: DESK_STATE},
        "question": [[{"role": "user", "content": "Lend Salt Road to Hana."}],
                     [{"role": "user", "content": "And Tidal Clocks."}]],
        "ground_truth": [["lend_book(book_id='b1', member_id='m-1')"], ["lend_book(book_id='b2', member_id='m-1')"]],
        "expected_errors": {"1": [0]}})  # b2 is out with m-2
    assert validate_task(task) == []
    first, second = turn_slice(task, 0), turn_slice(task, 1)
    assert first.expected_errors == {} and second.expected_errors == {"0": [0]}
    assert validate_task(first) == [] and validate_task(second) == []
    assert episode_upto(task, 0).expected_errors == {}  # turn 1 is not in it
    assert episode_upto(task, 1).expected_errors == {"1": [0]}
