"""The no-rewrite ablation over real HTTP: one request per spoken turn, each seeing only its turn."""

import json
import re

from synth.conftest import stratified
from synth.test_pipeline_openai import good_answer

from rods.llm import make_backend
from rods.synth.pipeline import Pipeline
from rods.synth.settings import SynthConfig


def per_turn_answer(body):
    """A cooperative model for one turn on its own: the values and two words of each call's purpose."""
    prompt = body["messages"][-1]["content"]
    if "asks for exactly these calls' outcomes" not in prompt:
        return good_answer(body)
    turn = json.loads(re.search(r"Turn: (\{.*\})\n", prompt).group(1))
    assert "narrative" not in turn and "turns" not in turn  # it sees its own turn only
    if turn["kind"] == "supply_missing":
        return {"json": {"query": f"Oh, and it is {json.dumps(turn['missing']['value'])}."}}
    skip = turn.get("missing", {}).get("param")
    asks = [" ".join(re.findall(r"[a-z]{5,}", c["description"].lower())[:2]) + " "
            + ", ".join(json.dumps(v) for k, v in c["arguments"].items() if k != skip) for c in turn["calls"]]
    return {"json": {"query": "Please: " + " | ".join(asks or ["check on things"])}}


def test_no_rewrite_sends_one_request_per_turn_over_http(scripted_openai_server, seeds_by_category, api_graph):
    server = scripted_openai_server
    server.script([], default=per_turn_answer)
    llm = make_backend("openai", base_url=server.base_url, model="m", structured="json_schema",
                       timeout_s=5, max_retries=0, json_repairs=0, max_concurrency=2)
    seeds = [t for t in stratified(seeds_by_category, 3) if sum(map(len, t.ground_truth)) <= 6][:6]
    pipeline = Pipeline(llm, SynthConfig.ablation("no_rewrite", workers=2), graph=api_graph)
    accepted = pipeline(seeds)
    assert accepted, pipeline.stats.rejections
    assert "rewrite" not in server.purposes  # no joint rewrite at all
    spoken = sum(1 for t in accepted for q in t.question if q)
    per_turn = server.purposes.count("rewrite.turn")
    assert per_turn >= spoken and per_turn == llm.stats.purpose("rewrite.turn").chats
    for task in accepted:
        assert all(q[0].content.startswith(("Please:", "Oh, and")) for q in task.question if q)
