"""`rods eval` on tau2-bench's domains: one row per domain next to BFCL's categories, BFCL's checker on BFCL only."""

import json
from pathlib import Path

from rods.cli import main as rods_main
from rods.envs.calls import parse_calls
from rods.eval import stratified_subset
from rods.tasks import load_split, read_tasks, write_tasks

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def gold_caller(tasks):
    """An endpoint that answers each turn with its gold calls (keyword arguments only), then text."""
    by_first_message = {t.question[0][0].content: t for t in tasks}

    def respond(body):
        messages = body["messages"]
        task = by_first_message[next(m["content"] for m in messages if m["role"] == "user")]
        turn = sum(1 for m in messages if m["role"] == "assistant" and not m.get("tool_calls"))
        if messages[-1]["role"] == "tool" or not task.ground_truth[turn]:
            return {"content": "Done."}
        calls = [call for text in task.ground_truth[turn] for call in parse_calls(text)]
        return {"content": None, "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in calls]}

    return respond


def mixed_tasks():
    airline = read_tasks(EXAMPLES / "tau2_airline" / "test.jsonl")[:3]
    retail = read_tasks(EXAMPLES / "tau2_retail" / "test.jsonl")[:3]
    keywords_only = [
        t for t in load_split("test")
        if t.category == "base" and not any(c.args for turn in t.ground_truth for x in turn for c in parse_calls(x))
    ]
    return airline + retail + stratified_subset(keywords_only, 2)


def test_rods_eval_reports_tau2_domains_as_rows_and_runs_bfcls_checker_on_bfcl_only(
    scripted_openai_server, tmp_path
):
    tasks = mixed_tasks()
    task_file = tmp_path / "tasks.jsonl"
    write_tasks(task_file, tasks)
    scripted_openai_server.script([], default=gold_caller(tasks))
    out = tmp_path / "run"
    code = rods_main(["eval", "--base-url", scripted_openai_server.base_url, "--model", "gold", "--tasks",
                      str(task_file), "--concurrency", "2", "--out", str(out)])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert {"Tau2AirlineEnv", "Tau2RetailEnv"} <= set(report["categories"])
    assert report["categories"]["Tau2AirlineEnv"]["n"] == 3 and report["categories"]["Tau2RetailEnv"]["n"] == 3
    assert report["overall_accuracy"] == 1.0 and report["overall_progress"] == 1.0
    bfcl_count = sum(t.environment == "bfcl" for t in tasks)
    assert report["official"]["total"] == bfcl_count and report["official"]["agree"] == bfcl_count


def test_rods_eval_on_tau2_alone_scores_a_silent_policy_zero(scripted_openai_server, tmp_path):
    scripted_openai_server.script([], default=lambda body: {"content": "I cannot help with that."})
    out = tmp_path / "run"
    code = rods_main(["eval", "--base-url", scripted_openai_server.base_url, "--model", "silent", "--tasks",
                      str(EXAMPLES / "tau2_retail" / "test.jsonl"), "--limit", "3", "--out", str(out)])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert set(report["categories"]) == {"Tau2RetailEnv"}
    assert report["overall_accuracy"] == 0.0
    assert "official" not in report or not report["official"]
