"""The planner: the seed's skeleton with new content; failure memory; untrusted function choices."""

import random

from rods.llm.base import ChatRequest, Completion
from rods.llm.template import TemplateBackend
from rods.synth.planner import Planner, PlannerConfig, materialize_config


def _seed_with(seeds_by_category, name):
    return next(t for t in seeds_by_category["base"] if any(c.startswith(f"{name}(") for turn in t.ground_truth
                                                            for c in turn))


def test_plan_keeps_the_skeleton_and_changes_the_content(seeds_by_category, api_graph):
    seed = seeds_by_category["base"][7]
    planner = Planner(TemplateBackend(), api_graph)
    plan = planner.plan(seed, rng=random.Random(5))
    info = planner.analyze(seed)
    assert [c.turn for c in plan.calls] == info.trace.turn_of
    for planned, original in zip(plan.calls, info.trace.calls):
        assert planned.name == original.name or planned.name in api_graph.siblings(original.name)
    assert set(plan.initial_config) == set(materialize_config(seed))
    assert plan.initial_config != materialize_config(seed)
    assert plan.narrative
    again = Planner(TemplateBackend(), api_graph).plan(seed, rng=random.Random(5))
    assert [(c.name, c.arguments) for c in again.calls] == [(c.name, c.arguments) for c in plan.calls]


def test_failed_functions_are_remembered_and_avoided(seeds_by_category, api_graph):
    seed = _seed_with(seeds_by_category, "cat")
    planner = Planner(TemplateBackend(), api_graph, PlannerConfig(substitute_prob=0.0))
    assert "cat" in [c.name for c in planner.plan(seed, rng=random.Random(0)).calls]
    planner.remember_failure(seed, "cat")
    planner.remember_failure(seed, "cat")
    for i in range(5):
        plan = planner.plan(seed, rng=random.Random(i))
        assert "cat" not in [c.name for c in plan.calls]
        assert any(c.original == "cat" and c.name in api_graph.siblings("cat") for c in plan.calls)


class Hallucinating(TemplateBackend):
    def _complete(self, request: ChatRequest) -> Completion:
        if request.purpose == "plan.calls":
            return Completion(text='{"functions": {"0": "launch_rocket", "1": "cat", "99": "ls"}}')
        return super()._complete(request)


def test_function_choices_naming_unknown_functions_are_ignored_and_counted(seeds_by_category, api_graph):
    seed = _seed_with(seeds_by_category, "cat")
    planner = Planner(Hallucinating(), api_graph, PlannerConfig(substitute_prob=1.0))
    plan = planner.plan(seed, rng=random.Random(0))
    names = {c.name for c in plan.calls}
    assert "launch_rocket" not in names
    assert planner.invalid_choices >= 1
    for planned, original in zip(plan.calls, planner.analyze(seed).trace.calls):
        assert planned.name == original.name or planned.name in api_graph.siblings(original.name)
