"""The novelty figures (rods.synth.novelty): skill overlap and when a seed's band can be reached at all."""

from rods.synth.novelty import band_reachable, novelty, skill_overlap
from rods.tasks import Task

BAND = (0.3, 0.7)
DESK = "validation_envs:Desk"


def task(calls: list[str], id: str = "t", parent: str | None = None) -> Task:
    return Task.model_validate({"id": id, "category": "base", "environment": DESK, "initial_config": {DESK: {}},
                                "involved_classes": [DESK], "ground_truth": [calls],
                                "question": [[{"role": "user", "content": "Do it."}]],
                                "provenance": {"origin": "synthetic" if parent else "seed", "parent_id": parent}})


def test_a_one_call_seed_cannot_reach_the_band_a_longer_one_can():
    one = task(["cancel(id='A')"])
    assert not band_reachable(one, task(["book(id='B')"]), BAND)  # 0.0 or 1.0, nothing between
    assert band_reachable(one, task(["book(id='B')", "cancel(id='B')"]), BAND)  # {cancel, book}: 0.5
    two = task(["read(id='A')", "cancel(id='A')"])
    assert band_reachable(two, task(["read(id='B')", "book(id='B')"]), BAND)  # 1 of 3: 0.33
    assert not band_reachable(two, task(["x()", "y()"]), (0.6, 0.7))  # 1/3, 1/2, 1: none inside


def test_in_band_figures_leave_out_variants_whose_band_is_unreachable():
    seed_one = task(["cancel(id='A')"], id="one")
    seed_two = task(["read(id='A')", "cancel(id='A')"], id="two")
    variants = [task(["book(id='B')"], "v1", "one"),  # 0.0, unreachable
                task(["read(id='B')", "book(id='B')"], "v2", "two"),  # 1/3: in band
                task(["list()", "book(id='B')"], "v3", "two")]  # 0.0: reachable, out of band
    assert skill_overlap(seed_two, variants[1]) == 1 / 3
    figures = novelty([seed_one, seed_two], variants)
    assert figures["skill_overlap"] == 1 / 9
    assert figures["skill_overlap_reachable"] == 1 / 6
    assert figures["skill_in_band"] == 0.5
