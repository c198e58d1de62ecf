"""Several synthesis models at once: variants spread across backbones, each one's acceptance reported."""

import json

import pytest
from synth.conftest import stratified

from rods.cli import main
from rods.llm import make_backend
from rods.llm.base import ChatRequest, Completion
from rods.llm.template import TemplateBackend
from rods.synth.ensemble import Router, backbone_names
from rods.synth.pipeline import Pipeline
from rods.synth.settings import SynthConfig
from rods.tasks.task_files import read_tasks, write_tasks


class VagueTemplate(TemplateBackend):
    """A weak backbone: its queries say none of the values, so the judge rejects every variant it writes."""

    def describe(self) -> str:
        return "vague"

    def _complete(self, request: ChatRequest) -> Completion:
        if request.purpose == "rewrite":
            return Completion(text=json.dumps({"queries": ["Can you sort this out?"] * len(request.context["turns"])}))
        return super()._complete(request)


def test_round_robin_spreads_variants_and_reports_each_backbone(seeds_by_category, api_graph):
    one, two = make_backend("template"), make_backend("template")
    seeds = stratified(seeds_by_category, 3)
    pipeline = Pipeline([one, two], SynthConfig(per_seed=2, workers=2, recast=0.0), graph=api_graph)
    accepted = pipeline(seeds)
    report = pipeline.report()
    names = {"template", "template#2"}
    assert set(report["backbones"]) == names and report["routing"] == "round_robin"
    tried = [row["tried"] for row in report["backbones"].values()]
    assert sum(tried) == report["variants"] == 2 * len(seeds) and abs(tried[0] - tried[1]) <= 1
    assert {t.provenance.backend for t in accepted} == names  # both backbones made accepted tasks
    for name, row in report["backbones"].items():
        made = sum(t.provenance.backend == name for t in accepted)
        assert row["accepted"] == made and row["acceptance_rate"] == made / row["tried"]
        assert row["llm"]["calls_per_accepted"] > 0
    # each backbone answered the stages of its own variants
    assert one.stats.purpose("rewrite").chats > 0 and two.stats.purpose("rewrite").chats > 0
    total = report["llm"]["total"]["chats"]
    assert total == one.stats.total.chats + two.stats.total.chats
    assert len({t.id for t in accepted}) == len(accepted)  # the duplicate check spans the backbones


@pytest.mark.slow  # synthesis over many seeds: `make test` runs it
def test_acceptance_routing_favours_the_backbone_whose_variants_pass(seeds_by_category, api_graph):
    good, weak = make_backend("template"), VagueTemplate()
    seeds = stratified(seeds_by_category, 5)
    config = SynthConfig(per_seed=3, workers=1, routing="acceptance", feedback_repair=False, recast=0.0)
    pipeline = Pipeline([weak, good], config, graph=api_graph)
    accepted = pipeline(seeds)
    rows = pipeline.report()["backbones"]
    assert rows["vague"]["accepted"] == 0 and rows["template"]["accepted"] > 0
    assert rows["template"]["tried"] > 2 * rows["vague"]["tried"] > 0
    assert all(t.provenance.backend == "template" for t in accepted)


def test_router_weights_and_names():
    router = Router(2, "acceptance", seed=1)
    assert router.weights() == [0.5, 0.5]  # untried: (0+1)/(0+2)
    router.tried, router.accepted = [8, 8], [6, 0]
    assert router.weights() == [7 / 10, 1 / 10]
    router = Router(2, "acceptance", seed=1)
    picks = []
    for _ in range(200):  # backbone 0's variants always pass, backbone 1's never
        picks.append(router.pick())
        router.record(picks[-1], picks[-1] == 0)
    assert picks.count(0) > 0.85 * len(picks) and picks.count(1) > 0  # favoured, never shut out
    rr = Router(3)
    assert [rr.pick() for _ in range(6)] == [0, 1, 2, 0, 1, 2]
    assert backbone_names(["openai:a", "openai:a", "template"]) == ["openai:a", "openai:a#2", "template"]

@pytest.mark.slow  # synthesis over many seeds: `make test` runs it

def test_cli_synth_with_two_backbones(tmp_path, seeds_by_category, capsys):
    seeds = tmp_path / "seeds.jsonl"
    write_tasks(seeds, stratified(seeds_by_category, 1))
    out, stats = tmp_path / "out.jsonl", tmp_path / "stats.json"
    assert main(["synth", "--seeds", str(seeds), "--per-seed", "2", "--llm", "template", "--llm", "template",
                 "--out", str(out), "--stats", str(stats)]) == 0
    report = json.loads(stats.read_text())
    assert {name: row["tried"] for name, row in report["backbones"].items()} == {"template": 4, "template#2": 4}
    assert {t.provenance.backend for t in read_tasks(out)} <= {"template", "template#2"}
    assert "backbones" in capsys.readouterr().err
    assert main(["synth", "--seeds", str(seeds), "--out", str(out)]) == 1  # no --llm: never a silent template


@pytest.mark.slow  # synthesis over many seeds: `make test` runs it
def test_training_config_builds_the_ensemble_and_the_engine_records_each_backbone(seeds_by_category):
    from rods.engine import DataEngine, EngineConfig
    from rods.train import config_from_dict
    from rods.train.run import make_synthesizer

    config = config_from_dict({"synthesis": {"backends": [{"backend": "template"}, {"backend": "template"}],
                                             "routing": "acceptance", "options": {"per_seed": 2, "workers": 1}}})
    synthesize = make_synthesizer(config.synthesis)
    assert [m.name for m in synthesize.members] == ["template", "template#2"]
    assert synthesize.config.routing == "acceptance"
    seeds = stratified(seeds_by_category, 5)
    accepted = synthesize(seeds)
    assert sum(r["tried"] for r in synthesize.report()["backbones"].values()) == 2 * len(seeds)
    engine = DataEngine(EngineConfig(max_injection_fraction=1.0), seeds)
    engine.submit(accepted)
    engine.on_epoch_end(1)
    injected = [e for e in engine.events.recent_events if e["event"] == "inject"]
    assert injected and all(e["backend"] in {"template", "template#2"} for e in injected)
