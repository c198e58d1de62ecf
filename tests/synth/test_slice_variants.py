"""Variants of turn slices (docs/design.md §4.10): a slice of a variant of the episode the slice was cut from.

Properties over mid-episode slices of every category (template backend): each accepted variant is
one turn of a new episode, with that episode's own history (new queries, calls and results) in
front of it, it starts from that episode's gold state, replays with RP = 1, keeps the seed slice's
profile and its turn, and can be synthesized from again.
"""

import pytest
from synth.conftest import stratified

from rods.envs import ToolEnvironment
from rods.envs.slices import episode_upto, slice_source, task_slices, turn_slice
from rods.llm import make_backend
from rods.reward import score
from rods.reward.ground_truth import compute_ground_truth
from rods.synth.pipeline import Pipeline
from rods.synth.profile import profile_of
from rods.synth.settings import SynthConfig


def _roles(task):
    return [m.role for m in task.question[0]]


def _history(task):
    """The history part of a slice's one turn: every message before its last user message."""
    return [(m.role, m.content) for m in task.question[0][:-1]]


@pytest.fixture(scope="module")
def run(seeds_by_category, api_graph):
    sources = stratified(seeds_by_category, 4, offset=10)[:12]  # base, miss_func, miss_param (no 10k-token LC)
    seeds = [piece for task in sources for piece in task_slices(task) if piece.provenance.slice_turn >= 1]
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=1, workers=2, seed=3, recast=0.0),
                        graph=api_graph)
    return seeds, pipeline(seeds), pipeline


def test_most_mid_episode_slices_get_a_variant(run):
    seeds, accepted, pipeline = run
    assert len(seeds) >= 20
    # 13 of 22 (0.59): a write repeated as it was (a second ticket like the first, title and all) is turned away
    assert len(accepted) >= 0.55 * len(seeds), pipeline.report()["rejections"]
    stats = pipeline.stats
    assert stats.accepted + sum(stats.rejections.values()) == stats.variants == len(seeds)
    assert stats.passed["slice"] == len(accepted)  # every accepted variant went through the slice stage


def test_a_variant_is_a_slice_of_a_new_episode_with_its_own_history(run):
    seeds, accepted, _ = run
    by_id = {s.id: s for s in seeds}
    for variant in accepted:
        seed = by_id[variant.provenance.parent_id]
        turn = seed.provenance.slice_turn
        assert variant.num_turns == 1 and variant.provenance.slice_turn == turn
        assert variant.provenance.origin == "synthetic" and variant.provenance.generation == 1
        # the same conversation shape as the seed's: as many user turns, gold replies and results
        assert _roles(variant) == _roles(seed), variant.id
        # ... but a new conversation: new history and a new last request
        assert _history(variant) != _history(seed)
        assert variant.question[0][-1].content != seed.question[0][-1].content
        # it is turn t of the episode it carries, and that episode is a variant of the seed's episode
        episode = slice_source(variant)
        assert episode.num_turns == turn + 1 and episode.provenance.parent_id == slice_source(seed).id
        again = turn_slice(episode, turn, slice_id=variant.id)
        assert again.question == variant.question and again.ground_truth == variant.ground_truth
        assert again.initial_config == variant.initial_config
        # it starts from its own episode's gold state before turn t, and its gold scores 1
        before = compute_ground_truth(episode).states[turn - 1]
        start = ToolEnvironment(variant).state()
        for cls in variant.involved_classes:
            assert start[cls] == before[cls], (variant.id, cls)
        result = score(variant, [[list(variant.ground_truth[0])]])
        assert result.progress == 1.0 and result.binary == 1, variant.id
        assert profile_of(variant).matches(profile_of(seed)), variant.id


def test_a_variant_of_a_slice_variant_is_one_generation_further(run, api_graph):
    _, accepted, _ = run
    parents = accepted[:4]
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=1, seed=11, recast=0.0), graph=api_graph)
    children = pipeline(parents)
    assert children, pipeline.report()["rejections"]
    by_id = {p.id: p for p in parents}
    for child in children:
        parent = by_id[child.provenance.parent_id]
        assert child.provenance.generation == 2
        assert child.provenance.slice_turn == parent.provenance.slice_turn
        assert child.id.split("__syn")[0] == parent.id.split("__syn")[0]  # ids do not grow
        assert _history(child) != _history(parent) and _roles(child) == _roles(parent)
        assert "slice_source" not in slice_source(child).provenance.model_dump()  # sources never nest


def test_episode_upto_keeps_the_turns_and_drops_structure_it_no_longer_has(seeds_by_category):
    mf = next(t for t in seeds_by_category["miss_func"] if t.missed_function)
    reveal = min(int(k) for k in mf.missed_function)
    before = episode_upto(mf, reveal - 1)
    assert before.category == "base" and not before.missed_function and before.num_turns == reveal
    after = episode_upto(mf, mf.num_turns - 1)
    assert after.category == "miss_func" and after.missed_function == mf.missed_function
    def first_empty(task):  # the under-specified turn: a question with no gold call
        return next((k for k in range(task.num_turns) if task.question[k] and not task.ground_truth[k]), None)

    mp = next(t for t in seeds_by_category["miss_param"] if (first_empty(t) or 0) >= 1)
    empty = first_empty(mp)
    assert episode_upto(mp, empty - 1).category == "base"
    assert episode_upto(mp, empty).category == "miss_param"
    whole = episode_upto(mp, mp.num_turns - 1)
    assert whole.question == mp.question and whole.ground_truth == mp.ground_truth
    with pytest.raises(ValueError, match="no turn"):
        episode_upto(mp, mp.num_turns)


def test_the_engine_keeps_a_slice_variant_synthesizable_across_a_restart(tmp_path, seeds_by_category, api_graph):
    """Engine -> worker -> pipeline -> injection -> engine.sqlite -> resume -> the next generation."""
    from rods.engine import DataEngine, EngineConfig, PoolSynthesisWorker

    seeds = [piece for task in seeds_by_category["base"][:6] for piece in task_slices(task)
             if piece.provenance.slice_turn >= 1]
    config = EngineConfig(K=4, min_observations=4, burn_in_rollouts=4, max_seeds_per_step=1,
                          quotas={"basic": 1, "miss_func": 0, "miss_param": 0}, exclusion_window=1,
                          capacity=8, max_injection_fraction=1.0)
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=1, seed=5, recast=0.0), graph=api_graph)
    parent = None
    with DataEngine(config, seeds, run_dir=tmp_path) as engine:
        for seed in seeds:  # one boundary slice (the only one selectable), the others hard
            engine.observe(1, seed.id, [0.0, 1.0, 1.0, 0.0] if seed is seeds[1] else [0.0] * 4)
        worker = PoolSynthesisWorker(pipeline, batch_size=1)
        engine.attach_worker(worker)
        assert [t.id for t in engine.select_seeds(1)] == [seeds[1].id]
        worker.close(wait=True)
        report = engine.on_epoch_end(1)
        assert len(report.injected) == 1, pipeline.report()["rejections"]
        parent = report.injected[0]
    with DataEngine.resume(tmp_path) as engine:  # what the store kept is the task, episode included
        restored = engine.task(parent)
        assert restored.provenance.parent_id == seeds[1].id
        assert _roles(restored) == _roles(seeds[1]) and _history(restored) != _history(seeds[1])
        assert slice_source(restored).num_turns == seeds[1].provenance.slice_turn + 1
        children = Pipeline(make_backend("template"), SynthConfig(per_seed=2, seed=6, recast=0.0),
                            graph=api_graph)([restored])
    assert children and all(c.provenance.parent_id == parent and c.provenance.generation == 2 for c in children)
