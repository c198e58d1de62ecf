"""Rewriter and judge: five recorded verdicts; query faults go back to the rewriter once,
ground-truth faults are discarded."""

import json
import random

import pytest

from rods.llm import make_backend
from rods.llm.base import ChatRequest, Completion
from rods.llm.template import TemplateBackend
from rods.synth.executor import run_plan
from rods.synth.judge import Judge, structure_verdict
from rods.synth.pipeline import Pipeline, SynthConfig
from rods.synth.planner import Planner
from rods.synth.rewriter import Rewriter, turn_contexts, with_queries
from rods.tasks import Task


@pytest.fixture(scope="module")
def template():
    return make_backend("template")


def _variant(seed, template, api_graph, rng=0):
    planner = Planner(template, api_graph)
    plan = planner.plan(seed, rng=random.Random(rng))
    run = run_plan(plan)
    assert run.ok, run.failure
    return plan, run


def test_rewrite_writes_every_turn_at_once_anchored_to_the_narrative(seeds_by_category, template, api_graph):
    seed = seeds_by_category["base"][3]
    plan, run = _variant(seed, template, api_graph)
    before = template.stats.purpose("rewrite").chats
    queries = Rewriter(template).rewrite(plan, run)
    assert template.stats.purpose("rewrite").chats == before + 1  # one call for all turns
    assert len(queries) == seed.num_turns and all(queries)
    assert queries[0].startswith(plan.narrative)
    for call in run.calls:  # the values the user must give are in the queries
        for value in call.arguments.values():
            if isinstance(value, str) and len(value) > 3:
                assert any(value in q for q in queries) or any(
                    k in c.bindings for c in plan.calls for k in call.arguments), value


def test_miss_param_and_miss_func_turn_kinds(seeds_by_category, template, api_graph):
    seed = next(t for t in seeds_by_category["miss_param"] if t.ground_truth[1] == [])
    plan, run = _variant(seed, template, api_graph)
    kinds = [t["kind"] for t in turn_contexts(plan, run)]
    assert kinds[1] == "ask_missing" and kinds[2] == "supply_missing"
    turns = turn_contexts(plan, run)
    queries = Rewriter(template).rewrite(plan, run, turns=turns)
    missing = turns[1]["missing"]
    assert str(missing["value"]) not in queries[1] and str(missing["value"]) in queries[2]
    seed = seeds_by_category["miss_func"][0]
    plan, run = _variant(seed, template, api_graph)
    k = int(next(iter(seed.missed_function)))
    turns = turn_contexts(plan, run)
    assert turns[k]["kind"] == "reveal" and turns[k - 1]["calls"]  # the request comes before the reveal
    assert Rewriter(template).rewrite(plan, run, turns=turns)[k] == ""


def test_judge_records_five_verdicts_with_reasons(seeds_by_category, template, api_graph):
    seed = seeds_by_category["base"][5]
    plan, run = _variant(seed, template, api_graph)
    turns = turn_contexts(plan, run)
    task = seed.model_copy(update={"ground_truth": run.ground_truth, "initial_config": plan.initial_config})
    task = Task.model_validate({**task.model_dump(), "question": with_queries(seed, Rewriter(template).rewrite(
        plan, run, turns=turns))})
    judgement = Judge(template).judge(task, run, turns)
    assert set(judgement.verdicts) == {"intent", "values", "progress", "natural", "structure"}
    assert judgement.passed and judgement.fault is None
    assert all(v.reason for v in judgement.verdicts.values())
    # a query that leaves out what the user must say is a query fault
    vague = Task.model_validate({**task.model_dump(), "question": [[{"role": "user", "content": "Do the thing."}]
                                                                    for _ in task.question]})
    bad = Judge(template).judge(vague, run, turns)
    assert bad.fault == "query"
    assert not bad.verdicts["values"].passed or not bad.verdicts["intent"].passed
    # queries that name the functions read like code, not like a user
    code = [[{"role": "user", "content": " ".join(task.ground_truth[t]) or "ok"}] for t in range(task.num_turns)]
    coded = Judge(template).judge(Task.model_validate({**task.model_dump(), "question": code}), run, turns)
    assert not coded.verdicts["natural"].passed and "reads like code" in coded.verdicts["natural"].reason


def test_structure_verdicts_on_bfcl_layouts(seeds_by_category):
    assert structure_verdict(seeds_by_category["miss_func"][0]).passed
    assert structure_verdict(seeds_by_category["miss_param"][0]).passed
    seed = seeds_by_category["miss_func"][0]
    k = next(iter(seed.missed_function))
    early = [list(t) for t in seed.ground_truth]
    early[0] = [f"{seed.missed_function[k][0]}()"] + early[0]
    broken = Task.model_validate({**seed.model_dump(), "ground_truth": early})
    assert not structure_verdict(broken).passed  # a held-out function used before its reveal


class ForgetfulRewriter(TemplateBackend):
    """Writes a vague first draft, then follows the judge's feedback."""

    def _complete(self, request: ChatRequest) -> Completion:
        if request.purpose == "rewrite" and not request.context.get("feedback"):
            n = len(request.context["turns"])
            return Completion(text=json.dumps({"queries": ["Can you sort this out for me please?"] * n}))
        return super()._complete(request)


def test_a_query_fault_goes_back_to_the_rewriter_once(seeds_by_category, api_graph):
    backend = ForgetfulRewriter()
    seeds = seeds_by_category["base"][:6]
    pipeline = Pipeline(backend, SynthConfig(per_seed=1, workers=1), graph=api_graph)
    accepted = pipeline(seeds)
    assert accepted
    rewrites = backend.stats.purpose("rewrite").chats
    judged = backend.stats.purpose("judge").chats
    assert rewrites == judged == 2 * pipeline.stats.attempts["rewrite"]  # one repair round per variant
    # without feedback repair the vague draft is final, and the judge rejects it
    backend = ForgetfulRewriter()
    off = Pipeline(backend, SynthConfig(per_seed=1, workers=1, feedback_repair=False), graph=api_graph)
    assert off(seeds) == []
    assert all(r.startswith("judge:query") or r.startswith("execution") or r.startswith("profile")
               for r in off.stats.rejections)
    assert backend.stats.purpose("rewrite").chats == off.stats.attempts["rewrite"]
