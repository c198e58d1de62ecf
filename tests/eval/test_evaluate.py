"""`rods eval`: stratified subsets, BFCL's overall, the run directory, the endpoint path."""

import inspect
import json

import pytest

from rods.cli import main as rods_main
from rods.envs.calls import parse_calls
from rods.envs.environment import api_class, method_owners
from rods.eval import stratified_subset, summarize
from rods.rollout import Trajectory, TurnRecord
from rods.tasks import CATEGORIES, REVEAL_MESSAGE, load_split


@pytest.fixture(scope="module")
def test_tasks():
    return load_split("test")


def test_stratified_subset_is_even_seeded_and_ordered(test_tasks):
    subset = stratified_subset(test_tasks, 8)
    assert [t.category for t in subset].count("base") == 2
    assert sorted({t.category for t in subset}) == sorted(CATEGORIES)
    assert all([t.category for t in subset].count(c) == 2 for c in CATEGORIES)
    assert subset == stratified_subset(test_tasks, 8)
    assert subset != stratified_subset(test_tasks, 8, seed=1)
    order = [t.id for t in test_tasks]
    assert [order.index(t.id) for t in subset] == sorted(order.index(t.id) for t in subset)
    assert [t.category for t in stratified_subset(test_tasks, 6)].count("base") == 2  # remainder goes first
    with pytest.raises(ValueError, match="--limit"):
        stratified_subset(test_tasks, 0)


def test_overall_is_the_unweighted_mean_of_categories():
    def traj(category, binary):
        return Trajectory(
            task_id="x",
            category=category,
            messages=[],
            turns=[TurnRecord(end="answer")],
            progress=float(binary),
            binary=binary,
        )

    trajs = [traj("base", 1)] * 3 + [traj("base", 0)] + [traj("miss_func", 0)] * 4
    categories = summarize(trajs)
    assert categories["base"].accuracy == 0.75 and categories["miss_func"].accuracy == 0.0
    overall = sum(c.accuracy for c in categories.values()) / len(categories)
    assert overall == 0.375  # not 3/8 weighted by count... equal here; check a skewed case
    skewed = summarize([traj("base", 1)] * 9 + [traj("miss_param", 0)])
    assert sum(c.accuracy for c in skewed.values()) / len(skewed) == 0.5


def gold_responder(tasks):
    """An endpoint that answers each turn with the ground truth as native tool calls, then text."""
    by_first_message = {t.question[0][0].content: t for t in tasks}

    def keywords(call_text, task):
        (call,) = parse_calls(call_text)
        owner = method_owners(task.involved_classes)[call.name]
        params = list(inspect.signature(getattr(api_class(owner), call.name)).parameters)[1:]
        return {"name": call.name, "arguments": {**dict(zip(params, call.args)), **call.arguments}}

    def respond(body):
        messages = body["messages"]
        task = by_first_message[next(m["content"] for m in messages if m["role"] == "user")]
        turn = sum(1 for m in messages if m["role"] == "assistant" and not m.get("tool_calls"))
        if messages[-1]["role"] == "tool" or not task.ground_truth[turn]:
            return {"content": "Done."}
        return {"content": None, "tool_calls": [keywords(c, task) for c in task.ground_truth[turn]]}

    return respond


def test_rods_eval_on_an_endpoint_scores_gold_at_100_and_bfcl_agrees(test_tasks, scripted_openai_server, tmp_path):
    subset = stratified_subset(test_tasks, 8)
    scripted_openai_server.script([], default=gold_responder(subset))
    out = tmp_path / "run"
    # no --model: the server's first model (GET /v1/models) is used and reported
    code = rods_main(["eval", "--base-url", scripted_openai_server.base_url, "--limit", "8",
                      "--concurrency", "4", "--out", str(out)])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert report["model"] == scripted_openai_server.model
    assert {body["model"] for body in scripted_openai_server.requests} == {scripted_openai_server.model}
    assert report["n_tasks"] == 8 and set(report["categories"]) == set(CATEGORIES)
    assert report["overall_accuracy"] == 1.0 and report["overall_progress"] == 1.0
    assert report["official"]["official_correct"] == 8 and report["official"]["agree"] == 8
    assert len((out / "decoded.jsonl").read_text().splitlines()) == 8
    trajs = [Trajectory.from_json(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    assert [t.task_id for t in trajs] == [t.id for t in subset]
    # requests carried the tools natively; held-out functions only after their reveal
    mf = next(t for t in subset if t.missed_function)
    (reveal, names), = mf.reveal_turns().items()
    for body in scripted_openai_server.requests:
        if body["messages"][1]["content"] != mf.question[0][0].content:
            continue
        offered = {tool["function"]["name"] for tool in body["tools"]}
        revealed = any(m["role"] == "user" and m["content"] == REVEAL_MESSAGE for m in body["messages"])
        assert set(names) <= offered if revealed else not set(names) & offered
    assert scripted_openai_server.max_in_flight <= 4


def test_rods_eval_with_garbage_endpoint_scores_zero_without_crashing(test_tasks, scripted_openai_server, tmp_path):
    replies = [
        {"content": "<tool_call>{not json</tool_call>"},
        {"content": None, "tool_calls": [{"name": "cd", "arguments": "{'folder': broken"}]},
        {"content": None, "tool_calls": [{"name": "__import__", "arguments": {"name": "os"}}]},
        {"content": "I refuse."},
    ]
    counter = iter(range(10**6))
    scripted_openai_server.script([], default=lambda body: replies[next(counter) % len(replies)])
    out = tmp_path / "run"
    assert rods_main(["eval", "--base-url", scripted_openai_server.base_url, "--model", "junk", "--limit", "4",
                      "--categories", "base,miss_param", "--max-steps", "3", "--out", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert set(report["categories"]) == {"base", "miss_param"}
    assert report["overall_accuracy"] == 0.0
    assert report["official"]["agree"] == report["official"]["total"] == 4
    trajs = [Trajectory.from_json(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    assert sum(t.num_parse_errors for t in trajs) > 0
    errors = [m for t in trajs for m in t.messages if m["role"] == "tool" and "Error" in m["content"]]
    assert errors


def test_rods_eval_bad_arguments_are_clear_errors(tmp_path, capsys):
    assert rods_main(["eval", "--model", str(tmp_path / "nope"), "--limit", "2", "--out", str(tmp_path / "o")]) == 1
    assert "no model folder" in capsys.readouterr().err
    assert rods_main(["eval", "--model", "x", "--base-url", "http://127.0.0.1:9/v1", "--categories", "bogus",
                      "--out", str(tmp_path / "o")]) == 1
    assert "unknown ['bogus']" in capsys.readouterr().err
    assert rods_main(["eval", "--limit", "2", "--out", str(tmp_path / "o")]) == 1
    assert "--model is required without --base-url" in capsys.readouterr().err
