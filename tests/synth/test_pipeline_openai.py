"""The pipeline over real HTTP: a scripted OpenAI endpoint that misbehaves, and
llama.cpp's server with the embedded SmolLM2 (slow)."""

import json
import re

import pytest
from synth.conftest import stratified

from rods.llm import make_backend
from rods.llm.schema import MAX_REASON_CHARS
from rods.reward import score
from rods.synth.judge import JudgeVerdicts
from rods.synth.pipeline import Pipeline
from rods.synth.planner import Narrative
from rods.synth.profile import profile_of, trace_task
from rods.synth.rewriter import MAX_QUERY_CHARS, queries_model, query_chars
from rods.synth.settings import SynthConfig

from servers.fixtures import MODEL_ALIAS

SMALL_SEED = "multi_turn_base_50"


def good_answer(body):
    """A cooperative model: answers each stage from what its prompt says."""
    prompt = body["messages"][-1]["content"]
    if "Write one narrative" in prompt:
        return {"json": {"narrative": "I run a small studio and want today's chores done in one go."}}
    if "Write the user's message for every turn" in prompt:
        n = int(re.search(r"(\d+) in all", prompt).group(1))
        turns = json.loads(re.search(r"Turns: (\[.*\])\n", prompt).group(1))
        queries = []
        for t in turns:
            if t["kind"] == "reveal":
                queries.append("")
                continue
            if t["kind"] == "supply_missing":
                queries.append(f"Oh, and the value is {json.dumps(t['missing']['value'])}.")
                continue
            skip = t.get("missing", {}).get("param")
            # values and two words of what the call is for; never a parameter name or the docstring
            # ("with" before the values: a description word such as "content" right before one reads as recited)
            asks = [" ".join(re.findall(r"[a-z]{5,}", c["description"].lower())[:2]) + " with "
                    + ", ".join(json.dumps(v) for k, v in c["arguments"].items() if k != skip) for c in t["calls"]]
            queries.append("Please help me with this: " + " | ".join(asks or ["check on things"]))
        assert len(queries) == n
        return {"json": {"queries": queries}}
    if "judge" in prompt:
        return {"json": {"verdicts": {"natural": {"pass": True, "reason": "fine"},
                                      "intent": {"pass": True, "reason": "fine"}}}}
    if "failed with" in prompt:  # config patch: names a key that does not exist
        return {"json": {"patch": {"no_such_key": 1}, "reason": "guess"}}
    if "Write the call sequence" in prompt:  # a function no step allows: an invalid proposal
        steps = json.loads(re.search(r"each from its step's list: (\{.*\})\n", prompt).group(1))
        return {"json": {"sequence": {j: "no_such_function" for j in steps}}}
    return {"status": 500}


def test_scripted_failures_are_counted_and_the_pipeline_keeps_going(scripted_openai_server, seeds_by_category,
                                                                    api_graph):
    server = scripted_openai_server
    server.script([], default=good_answer)
    server.route({
        "plan.narrative": [
            {"content": "Sure! Here is a narrative: {narrative: oops"},  # malformed JSON
            {"status": 503},  # server error
            {"sleep": 1.5, "json": {"narrative": "too late to matter, the client gave up"}},  # timeout
        ],
        "rewrite": [{"content": "not json at all"}],
    })
    llm = make_backend("openai", base_url=server.base_url, model="m", structured="json_schema",
                       timeout_s=0.8, max_retries=0, json_repairs=0, max_concurrency=2)
    # four variants take the scripted failures; the others have to get through as verified as ever
    seeds = [t for t in stratified(seeds_by_category, 4) if sum(map(len, t.ground_truth)) <= 6][:10]
    pipeline = Pipeline(llm, SynthConfig(per_seed=1, workers=2, recast=0.0), graph=api_graph)  # the LLM stages
    accepted = pipeline(seeds)
    stats = pipeline.stats
    assert stats.variants == len(seeds)
    assert stats.accepted + sum(stats.rejections.values()) == stats.variants  # every failure is counted
    r = stats.rejections
    assert r["llm_error:plan.narrative:invalid_json"] == 1
    assert r["llm_error:plan.narrative:server"] == 1
    assert r["llm_error:plan.narrative:timeout"] == 1
    assert r["llm_error:rewrite:invalid_json"] == 1
    assert pipeline.planner.invalid_proposals >= 1  # the invalid proposals were counted; the first candidate ran
    assert pipeline.report()["invalid_answers"]["plan.sequence"] == pipeline.planner.invalid_proposals
    llm_stats = llm.stats.snapshot()["by_purpose"]
    assert llm_stats["plan.narrative"]["failures"] == 3
    assert accepted, r
    for task in accepted:  # what got through is as verified as ever
        assert not trace_task(task).errors
        assert score(task, [[list(t)] if t else [] for t in task.ground_truth]).binary == 1
        assert task.provenance.backend == "openai:m"
        assert {c.split("(")[0] for t in task.ground_truth for c in t} <= set(api_graph.nodes)
    by_id = {s.id: s for s in seeds}
    assert all(profile_of(t).matches(profile_of(by_id[t.provenance.parent_id])) for t in accepted)
    # every stage's JSON schema on the wire is its reply model's, named after it, and closed where it can be
    sent = {}
    for purpose, body in zip(server.purposes, server.requests):
        sent.setdefault(purpose, []).append((body["response_format"]["json_schema"], body))
    for purpose, model in {"plan.narrative": Narrative, "judge": JudgeVerdicts}.items():
        assert all(f == {"name": model.__name__, "schema": model.model_json_schema()} for f, _ in sent[purpose])
    for f, body in sent["plan.sequence"]:  # per step, only its allowed functions and their parameters
        prompt = body["messages"][-1]["content"]
        allowed = json.loads(re.search(r"each from its step's list: (\{.*\})\n", prompt).group(1))
        offered = json.loads(re.search(r"as examples \(index: functions\): (\{.*\})", prompt).group(1))
        props = f["schema"]["properties"]
        sequence = props["sequence"]
        assert f["name"] == "SequenceProposal" and sequence["additionalProperties"] is False
        assert sequence["required"] == list(allowed) == [str(j) for j in range(len(allowed))]
        for j, step in allowed.items():
            assert sequence["properties"][j]["enum"] == step["functions"]
            assert {seq[int(j)] for seq in offered.values()} <= set(step["functions"])  # every example is allowed
        steps = props["arguments"]
        assert steps["additionalProperties"] is False and set(steps["properties"]) == set(allowed)
        for j, step in steps["properties"].items():
            assert step["additionalProperties"] is False
            assert set(step["properties"]) == {p for n in allowed[j]["functions"] for p in api_graph.nodes[n].params}
        assert props["reason"]["maxLength"] == MAX_REASON_CHARS
    for f, _ in sent.get("config_patch", []):  # only the failing class's own state keys
        patch = f["schema"]["properties"]["patch"]
        assert f["name"] == "ConfigPatch" and patch["additionalProperties"] is False
        assert patch["properties"] and "no_such_key" not in patch["properties"]
    judge = sent["judge"][0][0]["schema"]["properties"]["verdicts"]
    assert judge["required"] == ["natural", "intent"] and judge["additionalProperties"] is False
    assert sent["plan.narrative"] and sent["plan.sequence"] and sent["judge"] and sent["rewrite"]
    assert sent["judge"][0][0]["schema"]["$defs"]["CriterionVerdict"]["required"] == ["pass"]  # the alias, not `passed`
    assert sent["plan.narrative"][0][0]["schema"]["properties"]["narrative"]["minLength"] == 10
    for body in (b for p, b in zip(server.purposes, server.requests) if p == "rewrite"):
        schema = body["response_format"]["json_schema"]["schema"]
        n = int(re.search(r"(\d+) in all", body["messages"][-1]["content"]).group(1))
        assert schema == queries_model(n).model_json_schema()
        assert schema["properties"]["queries"]["minItems"] == schema["properties"]["queries"]["maxItems"] == n
        assert schema["properties"]["queries"]["items"]["maxLength"] == query_chars(n) <= MAX_QUERY_CHARS
        assert body["max_tokens"] >= n * query_chars(n)  # every query at its bound fits, even a token per character


@pytest.mark.slow
def test_pipeline_end_to_end_over_llama_cpp(llama_server, seeds_by_category, api_graph):
    llm = make_backend("openai", base_url=llama_server, model=MODEL_ALIAS, temperature=0.0, max_tokens=64,
                       timeout_s=120, max_retries=1, json_repairs=0)
    seeds = [t for t in seeds_by_category["base"] if t.id == SMALL_SEED]  # one turn, two calls: keeps it short
    # one shot (no repair rounds): at most narrative + sequence proposal + rewrite + judge, 4 short completions
    pipeline = Pipeline(llm, SynthConfig(per_seed=1, workers=1, feedback_repair=False, recast=0.0),
                        graph=api_graph)
    accepted = pipeline(seeds)
    stats = pipeline.stats
    assert stats.accepted + sum(stats.rejections.values()) == stats.variants == 1
    assert llm.stats.total.chats <= 4
    # a proposal that breaks the graph's constraints is counted, and the sampler's first candidate runs
    assert pipeline.report()["invalid_answers"]["plan.sequence"] == pipeline.planner.invalid_proposals
    # suggested values the value model refuses are dropped and counted; what gets through stays in the model
    assert pipeline.report()["invalid_answers"]["plan.arguments.out_of_domain"] == \
        pipeline.planner.out_of_domain_arguments
    calls = llm.stats.total
    assert calls.chats >= 1 and calls.prompt_tokens > 0 and calls.completion_tokens > 0
    for task in accepted:
        assert not trace_task(task).errors and task.provenance.backend.startswith("openai:")
        assert api_graph.values.violations(task) == []


@pytest.mark.slow
def test_rods_synth_against_vllm_counts_every_model_fault(vllm_server, seeds_by_category, tmp_path):
    """`rods synth --llm openai` against vLLM (grammar-constrained JSON), no --model: the server's first model.

    Whatever the weak model writes, every variant ends accepted or as a counted rejection
    with a reason, none as an internal error; the schemas leave no room for the shape
    faults seen before (wrong query counts, JSON cut off mid-string).
    """
    from rods.cli import main as rods_main
    from rods.tasks import read_tasks, write_tasks

    from servers.fixtures import VLLM_MODEL_NAME

    seeds_file, out, stats_file = tmp_path / "seeds.jsonl", tmp_path / "out.jsonl", tmp_path / "stats.json"
    write_tasks(seeds_file, [t for t in seeds_by_category["base"] if t.id == SMALL_SEED])
    code = rods_main(["synth", "--seeds", str(seeds_file), "--llm", "openai", "--base-url", vllm_server,
                      "--per-seed", "1", "--workers", "1", "--recast", "0",  # a recast asks no model
                      "--out", str(out), "--stats", str(stats_file)])
    assert code == 0
    report = json.loads(stats_file.read_text())
    rejections = report["rejections"]
    assert report["variants"] == 1 and report["accepted"] + sum(rejections.values()) == 1
    assert not [r for r in rejections if r.startswith("internal_error")], rejections
    # Constrained: always valid JSON; a model that loops to max_tokens fails as ":truncated".
    assert not [r for r in rejections if r.endswith(":invalid_json")], rejections
    total = report["llm"]["total"]
    # The grammar keeps every reply valid JSON unless it is cut off at max_tokens (a model that loops).
    assert total["invalid_json"] == total["truncated"] and total["chats"] >= 2, total
    for task in read_tasks(out):
        assert not trace_task(task).errors and task.provenance.backend == f"openai:{VLLM_MODEL_NAME}"
