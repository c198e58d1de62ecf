"""Augmented miss_func / miss_param variants in BFCL's layout; the ablation switches; the CLI."""

import json

import pytest

from rods.cli import main
from rods.llm import make_backend
from rods.reward import score
from rods.synth.executor import Executor, Failure
from rods.synth.judge import structure_verdict
from rods.synth.pipeline import Pipeline, synthesize
from rods.synth.planner import Planner
from rods.synth.profile import profile_of, trace_task
from rods.synth.settings import SynthConfig
from rods.tasks import Task, read_tasks, write_tasks


def _replays(task):
    return (not trace_task(task).errors
            and score(task, [[list(t)] if t else [] for t in task.ground_truth]).binary == 1)


def test_augmented_variants_use_bfcl_layouts(seeds_by_category, api_graph):
    seeds = seeds_by_category["base"][:12]
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=2, workers=2, augment=1.0, recast=0.0),
                        graph=api_graph)
    accepted = pipeline(seeds)
    kinds = {t.category for t in accepted}
    assert kinds == {"miss_func", "miss_param"}, pipeline.report()["rejections"]
    by_id = {s.id: s for s in seeds}
    for task in accepted:
        seed = by_id[task.provenance.parent_id]
        assert task.provenance.augmented == task.category
        assert structure_verdict(task).passed and _replays(task)
        assert task.num_turns == seed.num_turns + 1
        mine, theirs = profile_of(task), profile_of(seed)
        assert (mine.edges, mine.depth, mine.classes) == (theirs.edges, theirs.depth, theirs.classes)
        if task.category == "miss_func":
            ((k, names),) = task.missed_function.items()
            k = int(k)
            assert task.question[k] == [] and task.ground_truth[k] and task.ground_truth[k - 1] == []
            assert names[0] in {c.split("(")[0] for c in task.ground_truth[k]}
        else:
            k = next(t for t, gt in enumerate(task.ground_truth) if not gt)
            assert task.ground_truth[k + 1] and task.question[k] and task.question[k + 1]
            assert not task.missed_function


@pytest.mark.parametrize("ablation", ["no_rewrite", "no_narrative", "no_feedback_repair"])
def test_ablations_switch_their_stage_off(ablation, seeds_by_category, api_graph):
    seeds = [seeds_by_category[c][i] for c in ("base", "miss_param") for i in range(3)]
    backend = make_backend("template")
    # the coherence rules off: what is counted here is the ablated stage's own calls
    pipeline = Pipeline(backend, SynthConfig.ablation(ablation, workers=2, coherence=False, recast=0.0),
                        graph=api_graph)
    accepted = pipeline(seeds)
    assert accepted and all(_replays(t) for t in accepted)
    if ablation == "no_rewrite":  # each turn written on its own: one call per spoken turn, none for all turns
        assert backend.stats.purpose("rewrite").chats == 0
        spoken = sum(1 for t in accepted for q in t.question if q)
        judged_out = sum(n for reason, n in pipeline.stats.rejections.items() if reason.startswith("judge:"))
        assert pipeline.stats.attempts["rewrite"] == len(accepted) + judged_out
        turn_chats = backend.stats.purpose("rewrite.turn").chats  # a variant judged out had its turns written too
        assert turn_chats == spoken if not judged_out else turn_chats > spoken
        for t in accepted:  # no narrative reaches a query, and no query refers back to another turn
            assert all(t.provenance.narrative.split(".")[0] not in q[0].content for q in t.question if q)
            assert not any("the same" in q[0].content for q in t.question if q)
    if ablation == "no_narrative":
        assert backend.stats.purpose("plan.narrative").chats == 0
        assert all(t.provenance.narrative is None for t in accepted)
    if ablation == "no_feedback_repair":
        assert backend.stats.purpose("config_patch").chats == 0 and not pipeline.stats.patches
    with pytest.raises(ValueError, match="unknown ablation"):
        SynthConfig.ablation("no_such_thing")
    with pytest.raises(ValueError, match="augment"):
        SynthConfig(augment=1.5)
    with pytest.raises(ValueError, match="max_attempts"):
        SynthConfig(max_attempts=0)


def test_synthesize_is_a_plain_callable(seeds_by_category):
    seeds = seeds_by_category["long_context"][:8]  # two of them yield a variant at the first draw
    out = synthesize(seeds)
    assert out, "the template pipeline accepts variants of long-context seeds"
    assert all(isinstance(t, Task) and t.provenance.origin == "synthetic" for t in out)
    assert {t.provenance.parent_id for t in out} <= {s.id for s in seeds} and all(_replays(t) for t in out)


def test_cli_synth_writes_tasks_and_stats(tmp_path, seeds_by_category, capsys):
    seeds = tmp_path / "seeds.jsonl"
    write_tasks(seeds, [seeds_by_category[c][0] for c in ("base", "miss_func", "miss_param", "long_context")])
    out, stats = tmp_path / "out.jsonl", tmp_path / "stats.json"
    code = main(["synth", "--seeds", str(seeds), "--per-seed", "2", "--llm", "template", "--out", str(out),
                 "--stats", str(stats)])
    assert code == 0
    tasks = read_tasks(out)
    report = json.loads(stats.read_text())
    assert len(tasks) == report["accepted"] and report["variants"] == 8
    assert {t.provenance.parent_id for t in tasks} <= {s.id for s in read_tasks(seeds)}
    err = capsys.readouterr().err
    assert "acceptance rate" in err and "rewrite" in err
    assert main(["synth", "--seeds", str(tmp_path / "missing.jsonl"), "--out", str(out)]) == 1
    assert main(["synth", "--seeds", str(seeds), "--llm", "openai", "--out", str(out)]) == 1  # no --base-url


def test_call_counts_may_vary_when_configured(seeds_by_category, api_graph):
    seeds = seeds_by_category["base"][:30]
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=1, workers=2, same_counts=False, recast=0.0),
                        graph=api_graph)
    accepted = pipeline(seeds)
    by_id = {s.id: s for s in seeds}
    fewer = 0
    for task in accepted:
        mine, theirs = profile_of(task), profile_of(by_id[task.provenance.parent_id])
        assert mine.matches(theirs, same_counts=False) and _replays(task)
        assert mine.topology() == theirs.topology() and mine.depth == theirs.depth
        fewer += sum(mine.calls_per_turn) < sum(theirs.calls_per_turn)
    assert fewer >= 1


class FailingExecutor(Executor):
    """Fault injection: every run of a plan fails at its first call (the executor's own failure record)."""

    def run(self, plan):
        execution = super().run(plan)
        execution.failure = Failure(0, plan.calls[0].name, "injected fault")
        return execution


class RecordingPlanner(Planner):
    """The real planner, recording the blacklist each plan was asked to avoid."""

    blacklists: list = []

    def plan(self, seed, *, rng, attempt=1, blacklist=frozenset()):
        self.blacklists.append((attempt, set(blacklist)))
        return super().plan(seed, rng=rng, attempt=attempt, blacklist=blacklist)


@pytest.mark.parametrize("repair", [True, False])
def test_no_feedback_repair_resamples_blindly_with_the_same_budget(repair, seeds_by_category, api_graph):
    seeds = [seeds_by_category["base"][i] for i in range(4)]
    backend = make_backend("template")
    pipeline = Pipeline(backend, SynthConfig(workers=1, feedback_repair=repair, recast=0.0), graph=api_graph)
    pipeline.executor = FailingExecutor(backend, llm_patches=repair)
    pipeline.use_planner("bfcl", RecordingPlanner(backend, api_graph))
    pipeline.planner.blacklists = []
    assert pipeline(seeds) == []
    assert pipeline.stats.attempts["execute"] == 3 * len(seeds)  # the paper's budget either way
    if repair:  # feedback: patches or blacklists steer the next attempt
        assert pipeline.stats.patches or any(b for _, b in pipeline.planner.blacklists)
    else:  # blind: 3 fresh plans per variant, no patch, nothing blacklisted
        assert pipeline.stats.attempts["plan"] == 3 * len(seeds)
        assert sorted(a for a, _ in pipeline.planner.blacklists) == sorted([1, 2, 3] * len(seeds))
        assert all(b == set() for _, b in pipeline.planner.blacklists)
        assert not pipeline.stats.patches and backend.stats.purpose("config_patch").chats == 0
