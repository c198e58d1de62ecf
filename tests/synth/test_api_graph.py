"""The API graph: 128 typed functions, enabling edges learned from executions; JSON + PNG export."""

import json

from rods.cli import main
from rods.synth.api_graph import APIGraph, function_docs
from rods.tasks.bfcl import API_CLASSES


def test_nodes_are_the_128_functions_with_typed_params(api_graph):
    assert len(api_graph.nodes) == 128 == len(function_docs(API_CLASSES))
    cd = api_graph.nodes["cd"]
    assert cd.api_class == "GorillaFileSystem" and cd.params == {"folder": "string"} and cd.required == ("folder",)
    assert api_graph.nodes["place_order"].api_class == "TradingBot"
    assert {n.api_class for n in api_graph.nodes.values()} >= {"MathAPI", "TravelAPI", "VehicleControlAPI"}


def test_edges_and_effects_come_from_executions(api_graph):
    assert api_graph.edges[("mkdir", "cd")] >= 1  # mkdir creates the folder cd enters
    assert api_graph.edges[("get_stock_info", "place_order")] >= 1  # a quoted price flows into the order
    assert "cd" in api_graph.successors("mkdir")
    assert api_graph.nodes["touch"].effect == "write" and api_graph.nodes["cat"].effect == "read"
    assert api_graph.nodes["rm"].effect == "write"  # removals change state too


def test_siblings_share_class_effect_and_typed_required_params(api_graph):
    assert "tail" in api_graph.siblings("cat") and "multiply" in api_graph.siblings("add")
    for name in api_graph.nodes:
        for sib in api_graph.siblings(name):
            a, b = api_graph.nodes[name], api_graph.nodes[sib]
            assert a.api_class == b.api_class and a.effect == b.effect == "read"
            assert {p: a.params[p] for p in a.required} == {p: b.params[p] for p in b.required}
    assert api_graph.siblings("touch") == []  # writes are never swapped


def test_a_graph_learned_from_no_tasks_has_no_edges():
    graph = APIGraph.learn([], API_CLASSES)
    assert len(graph.nodes) == 128 and not graph.edges
    assert all(n.effect == ("read" if n.api_class == "MathAPI" else "unknown") for n in graph.nodes.values())
    assert graph.siblings("cat") == [] and "multiply" in graph.siblings("add")


def test_cli_writes_json_and_png(tmp_path):
    out = tmp_path / "graph.json"
    assert main(["synth", "graph", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert len(data["nodes"]) == 128 and data["edges"]
    assert {"source", "target", "count"} <= set(data["edges"][0])
    png = out.with_suffix(".png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_reference_graph_is_learned_once_and_its_tasks_loaded_once(api_graph, monkeypatch):
    """The pipeline asks for an environment's graph at every stage: a cached graph must not load its reference
    tasks again (BFCL's 400 train tasks, deep-copied, were two thirds of synthesis time)."""
    from rods.envs.bfcl.domain import BfclDomain
    from rods.synth.api_graph import reference_graph

    def fail(self):
        raise AssertionError("reference tasks loaded again")

    monkeypatch.setattr(BfclDomain, "reference_tasks", fail)
    assert reference_graph("bfcl") is api_graph


def test_a_function_its_people_always_pass_options_to_is_called_with_some():
    """The clinic's `update_patient(patient_id)` alone changes nothing ("Nothing to change"), nor does
    `find_patient()` find anyone: every human call passes some optional argument, so a variant's call does too."""
    import sys
    from pathlib import Path

    from rods.llm import make_backend
    from rods.synth.api_graph import graph_for
    from rods.synth.pipeline import Pipeline
    from rods.synth.profile import parse_ground_truth
    from rods.synth.settings import SynthConfig
    from rods.tasks.task_files import read_tasks

    folder = Path(__file__).resolve().parents[2] / "examples" / "clinic"
    sys.path.insert(0, str(folder))
    try:
        seeds = read_tasks(folder / "seeds.jsonl")
        graph = graph_for(seeds[0].environment, seeds)
        assert {"update_patient", "find_patient"} <= set(graph.usual_optional)
        assert "list_doctors" not in graph.usual_optional  # called without options by its people too
        accepted = Pipeline(make_backend("template"), SynthConfig(per_seed=2, workers=2, seed=5))(seeds)
        calls = [c for v in accepted for turn in parse_ground_truth(v) for c in turn
                 if c.name in ("update_patient", "find_patient")]
        assert calls and all(len(c.arguments) >= (2 if c.name == "update_patient" else 1) for c in calls), calls
    finally:
        sys.path.remove(str(folder))
