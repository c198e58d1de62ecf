"""Turn slices: first turns of seed tasks as one-turn tasks (`rods.envs.slices`)."""

import pytest

from rods.envs.slices import first_turn_slice, turn_slices
from rods.reward import score
from rods.tasks import load_split


@pytest.fixture(scope="module")
def train():
    return load_split("train")


def test_slices_are_valid_one_turn_tasks_whose_gold_scores_one(train):
    slices = turn_slices(train)
    assert 250 < len(slices) < len(train)  # miss_param first turns with empty gold give none
    for piece in slices[::7]:
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
