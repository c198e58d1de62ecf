"""tau2-bench's own protocol (`rods eval --suite tau2`): tau2's orchestrator, user simulator and evaluator.

The cross-check: a scripted agent (a rods Policy replaying a task's gold
actions, as Hermes text) and a scripted user (a rods LLM backend saying the
scenario's request, then the stop token) reproduce a known PASS and a known
FAIL per domain; the reward rods reports equals what tau2's evaluator gives
when called directly on the written conversations; a tampered reward or a
corrupted final database makes the check fail.
"""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace

import pytest

from rods.cli import main as rods_main
from rods.eval import tau2_conversation as tc, tau2_llm
from rods.llm.base import Completion, LLMBackend
from rods.llm.hermes import tool_call_block

STOP = "Thank you, that is all. ###STOP###"


class GoldAgent:
    """A policy that calls the task's gold actions one per reply, then says `final` (tools in the prompt)."""

    native_tools = False

    def __init__(self, actions, final: str):
        self.actions, self.final = list(actions), final
        self.prompts: list[list[dict]] = []

    def generate(self, batch):
        replies = []
        for messages, _tools in batch:
            self.prompts.append(messages)
            done = sum(m["role"] == "tool" for m in messages)
            action = self.actions[done] if done < len(self.actions) else None
            replies.append(tool_call_block(action.name, action.arguments) if action else self.final)
        return replies


class ScriptedUser(LLMBackend):
    """A user simulator that states its request first, then stops."""

    name = "scripted-user"

    def __init__(self, opening: str):
        super().__init__()
        self.opening = opening
        self.requests: list[list[dict]] = []

    def _complete(self, request):
        self.requests.append(request.messages)
        said = sum(m["role"] == "assistant" for m in request.messages)  # the user's own turns, roles flipped
        return Completion(text=self.opening if said == 0 else STOP)


def task(domain: str, task_id: str):
    return tc.select_tasks(domain, "all", [task_id])[0]


def gold(domain: str, task_id: str, *, writes: bool = True, tell: bool = True) -> GoldAgent:
    """The task's gold agent; `writes=False` leaves out its database writes, `tell=False` what it must say."""
    from rods.envs.tau2.environment import TOOL_EFFECTS, Tau2AirlineEnv, Tau2RetailEnv

    toolkit = (Tau2AirlineEnv if domain == "airline" else Tau2RetailEnv)._toolkit
    criteria = task(domain, task_id).evaluation_criteria
    actions = [a for a in criteria.actions if writes or TOOL_EFFECTS[getattr(toolkit, a.name).__tool_type__] != "write"]
    return GoldAgent(actions, "All done. " + (" ".join(criteria.communicate_info) if tell else ""))


def play(tmp_path, domain: str, task_id: str, agent, *, trials: int = 1):
    t = task(domain, task_id)
    user = ScriptedUser(t.user_scenario.instructions.reason_for_call)
    report = tc.evaluate_conversations({domain: [t]}, tau2_llm.PolicyAgent(agent), tau2_llm.BackendUser(user),
                                       trials=trials, model="gold", user_model="scripted", out_dir=tmp_path)
    return report, tc.read_conversations(tmp_path / "conversations.jsonl"), user


def tau2_reward(record) -> float:
    """tau2's evaluator called directly on a written conversation."""
    from tau2.data_model.simulation import SimulationRun
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    return evaluate_simulation(simulation=SimulationRun.model_validate(record["simulation"]),
                               task=task(record["domain"], record["task_id"]),
                               evaluation_type=EvaluationType.ALL, solo_mode=False, domain=record["domain"]).reward


# -- the stand-in for tau2's LLM calls ----------------------------------------------------------


def test_the_installed_tau2_has_the_interface_the_stand_in_mirrors():
    assert tau2_llm.interface_problems(tau2_llm.tau2_root()) == []
    tc.tau2()
    import tau2.agent.llm_agent
    import tau2.orchestrator.orchestrator
    import tau2.user.user_simulator

    assert tau2.agent.llm_agent.generate is tau2_llm.generate
    assert tau2.user.user_simulator.generate is tau2_llm.generate
    assert tau2.orchestrator.orchestrator.get_cost is tau2_llm.get_cost


def test_a_changed_tau2_interface_is_named(tmp_path):
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "llm_utils.py").write_text(
        "def generate(model, messages, tools=None, **kwargs): ...\ndef get_cost(messages): ...\n"
    )
    (tmp_path / "agent.py").write_text("from tau2.utils.llm_utils import generate, stream_generate\n")
    problems = tau2_llm.interface_problems(tmp_path)
    assert any("stream_generate" in p and "agent.py" in p for p in problems)
    assert any(p.startswith("generate(model, messages, tools, **kwargs) in tau2") for p in problems)
    assert any("get_token_usage is no longer" in p for p in problems)


def test_generate_refuses_a_model_no_backend_answers():
    tc.tau2()
    with pytest.raises(LookupError, match="no rods backend"):
        tau2_llm.generate("nobody", [])


def test_policy_agent_messages_native_and_in_the_prompt():
    from tau2.data_model.message import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage

    tc.tau2()
    history = [SystemMessage(role="system", content="<policy>"), UserMessage(role="user", content="hi"),
               AssistantMessage(role="assistant", tool_calls=[ToolCall(id="c1", name="f", arguments={"a": 1})]),
               ToolMessage(id="c1", role="tool", content="ok")]
    native = tau2_llm.chat_messages(history, tools_in_prompt=False)
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}
    assert native[2]["tool_calls"] == [call]
    assert native[3] == {"role": "tool", "name": "f", "content": "ok", "tool_call_id": "c1"}
    prompt = tau2_llm.chat_messages(history, tools_in_prompt=True)
    assert prompt[2] == {"role": "assistant", "content": tool_call_block("f", {"a": 1})}
    assert "tool_call_id" not in prompt[3]
    openai = tau2_llm.to_openai(history)
    assert openai[2]["tool_calls"][0]["function"]["arguments"] == '{"a": 1}' and "name" not in openai[3]


def test_policy_agent_replies_become_tau2_messages():
    tc.tau2()

    class Fixed:
        native_tools = False

        def __init__(self, text):
            self.text = text

        def generate(self, batch):
            return [self.text] * len(batch)

    call = tau2_llm.PolicyAgent(Fixed('Looking. <tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'))([], [])
    assert call.content == "Looking." and call.tool_calls[0].name == "f" and call.tool_calls[0].arguments == {"a": 1}
    broken = tau2_llm.PolicyAgent(Fixed("<tool_call>{not json</tool_call>"))
    message = broken([], [])
    assert message.tool_calls is None and message.content == "<tool_call>{not json</tool_call>"
    assert broken.parse_errors == 1
    with pytest.raises(tau2_llm.EmptyReply):
        tau2_llm.PolicyAgent(Fixed("  "))([], [])


# -- the cross-check: known PASS and FAIL per domain, against tau2's evaluator ---------------------

CASES = [
    # domain, task, the agent, reward, final database as gold's
    ("airline", "11", dict(), 1.0, True),
    ("airline", "11", dict(writes=False), 0.0, False),
    ("retail", "40", dict(), 1.0, True),
    ("retail", "40", dict(tell=False), 0.0, True),
]


@pytest.mark.parametrize(("domain", "task_id", "how", "reward", "db_match"), CASES)
def test_scripted_conversations_reproduce_tau2s_verdicts(tmp_path, domain, task_id, how, reward, db_match):
    report, records, user = play(tmp_path, domain, task_id, gold(domain, task_id, **how))
    [record] = records
    assert record["termination_reason"] == "user_stop" and record["reward"] == reward
    assert tau2_reward(record) == reward  # tau2's evaluator, called directly on what was written
    assert report.recheck == {"agree": 1, "total": 1, "disagreements": []}
    assert tc.cross_check(records) == 1
    score = report.domains[domain]
    assert score.pass_hat_k == {"pass^1": reward} and score.avg_reward == reward
    assert score.scored == 1 and score.db_match == float(db_match)
    # tau2's own prompts: the user simulator's guidelines and scenario
    assert "###STOP###" in user.requests[0][0]["content"] and "<scenario>" in user.requests[0][0]["content"]


def test_the_agent_gets_tau2s_system_prompt_with_the_domain_policy_and_tools(tmp_path):
    agent = gold("retail", "40")
    play(tmp_path, "retail", "40", agent)
    system = agent.prompts[0][0]
    assert system["role"] == "system"
    assert "You are a customer service agent" in system["content"] and "<policy>" in system["content"]
    assert "# Retail agent policy" in system["content"]
    assert '"name": "modify_pending_order_payment"' in system["content"]
    assert [m["role"] for m in agent.prompts[0][1:]] == ["assistant", "user"]  # tau2's greeting, then the user


def test_a_tampered_reward_fails_the_cross_check(tmp_path, monkeypatch):
    real = tc._evaluate

    def flipped(simulation, task, domain):
        info = real(simulation, task, domain)
        return info.model_copy(update={"reward": 1.0 - info.reward})

    monkeypatch.setattr(tc, "_evaluate", flipped)
    report, records, _ = play(tmp_path, "airline", "11", gold("airline", "11"))
    assert records[0]["reward"] == 0.0 and report.recheck["agree"] == 0
    assert "tau2's evaluator gives 1.0" in report.recheck["disagreements"][0]
    with pytest.raises(tc.Tau2Disagreement):
        tc.cross_check(records)


def test_a_corrupted_final_database_fails_the_cross_check(tmp_path):
    _, records, _ = play(tmp_path, "retail", "40", gold("retail", "40"))
    assert tc.cross_check(records) == 1
    corrupted = copy.deepcopy(records[0])
    messages = corrupted["simulation"]["messages"]
    write = next(i for i, m in enumerate(messages)
                 if m.get("tool_calls") and m["tool_calls"][0]["name"] == "modify_pending_order_payment")
    del messages[write : write + 2]  # the write and its result: the final database is no longer gold's
    with pytest.raises(tc.Tau2Disagreement, match="recorded reward 1.0, tau2's evaluator gives 0.0"):
        tc.cross_check([corrupted])


def test_an_empty_reply_ends_the_conversation_as_an_agent_error(tmp_path):
    report, [record], _ = play(tmp_path, "airline", "11", GoldAgent([], ""))
    assert record["termination_reason"] == "agent_error" and record["reward"] == 0.0
    score = report.domains["airline"]
    assert score.terminations == {"agent_error": 1} and score.scored == 0 and score.db_match is None
    assert tc.cross_check([record]) == 1


def test_pass_hat_k_is_tau2s():
    def conversation(task_id, reward):
        info = SimpleNamespace(reward=reward, reward_basis=["DB"], db_check=None, communicate_checks=[],
                               action_checks=[])
        simulation = SimpleNamespace(reward_info=info, termination_reason="user_stop", messages=[])
        return tc.Conversation("airline", SimpleNamespace(id=task_id), 0, simulation)

    rewards = {"a": [1, 1, 1], "b": [1, 0, 1], "c": [0, 0, 0]}
    score = tc.score([conversation(t, r) for t, rs in rewards.items() for r in rs], trials=3)
    assert score.pass_hat_k == pytest.approx({"pass^1": (1 + 2 / 3) / 3, "pass^2": (1 + 1 / 3) / 3, "pass^3": 1 / 3})
    assert score.avg_reward == pytest.approx(5 / 9)


def test_task_selection():
    assert [t.id for t in tc.select_tasks("airline", "test", limit=3)] == ["2", "6", "8"]  # tau2's test split
    assert [t.id for t in tc.select_tasks("airline", "test", ["11", "2"])] == ["11", "2"]  # 11: a train task
    with pytest.raises(ValueError, match="no task"):
        tc.select_tasks("airline", "test", ["999"])
    with pytest.raises(ValueError, match="unknown tau2 domain"):
        tc.select_tasks("telecom")


def test_trial_seeds_are_drawn_as_tau2_draws_them():
    import random

    random.seed(300)
    assert tc.trial_seeds(300, 3) == [random.randint(0, 1000000) for _ in range(3)]


# -- the command line ---------------------------------------------------------------------------------


def test_rods_eval_suite_tau2_over_endpoints(scripted_openai_server, tmp_path):
    """Agent and user on one scripted endpoint (told apart by rods' purpose header), two trials."""
    t = task("retail", "40")
    actions, info = t.evaluation_criteria.actions, t.evaluation_criteria.communicate_info

    def agent(body):
        done = sum(m["role"] == "tool" for m in body["messages"])
        if done < len(actions):
            return {"content": None, "tool_calls": [{"name": actions[done].name, "arguments": actions[done].arguments}]}
        return {"content": "Done: " + " ".join(info)}

    def user(body):
        said = sum(m["role"] == "assistant" for m in body["messages"])
        return {"content": t.user_scenario.instructions.reason_for_call if said == 0 else STOP}

    scripted_openai_server.route({"rollout": agent, "tau2-user": user})
    out = tmp_path / "run"
    code = rods_main(["eval", "--suite", "tau2", "--domain", "retail", "--task-ids", "40",
                      "--base-url", scripted_openai_server.base_url, "--model", "gold",
                      "--user-base-url", scripted_openai_server.base_url, "--trials", "2", "--out", str(out)])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert report["domains"]["retail"]["pass_hat_k"] == {"pass^1": 1.0, "pass^2": 1.0}
    assert report["user_model"] == f"scripted-model @ {scripted_openai_server.base_url}" and report["trials"] == 2
    assert report["recheck"]["agree"] == 2
    assert len((out / "conversations.jsonl").read_text().splitlines()) == 2
    assert any(r.get("tools") for r in scripted_openai_server.requests)  # the endpoint agent gets tau2's tools


@pytest.mark.slow
def test_rods_eval_suite_tau2_embedded_agent_and_llama_cpp_user(llama_server, tmp_path):
    """The embedded agent talks to a user simulator served by llama.cpp (the embedded GGUF): 1 task, 2 trials.

    Two steps a conversation (the user's request, the agent's answer), then tau2 cuts it (max_steps):
    one exchange over the wire each way, short replies, on 2 cores.
    """
    from servers.fixtures import MODEL_ALIAS

    out = tmp_path / "run"
    code = rods_main(["eval", "--suite", "tau2", "--domain", "airline", "--limit", "1", "--trials", "2",
                      "--model", "embedded", "--threads", "1", "--tool-docs", "signatures", "--max-new-tokens", "24",
                      "--user-base-url", llama_server, "--user-model", MODEL_ALIAS, "--user-max-tokens", "24",
                      "--user-temperature", "0.7", "--max-turns", "2", "--out", str(out)])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    airline = report["domains"]["airline"]
    assert set(airline["pass_hat_k"]) == {"pass^1", "pass^2"} and airline["n_conversations"] == 2
    assert report["user_model"] == f"{MODEL_ALIAS} @ {llama_server}"
    records = tc.read_conversations(out / "conversations.jsonl")
    assert [r["trial"] for r in records] == [0, 1] and report["recheck"]["agree"] == 2
    assert all(r["user_model"] == report["user_model"] for r in records)
    assert [m["role"] for m in records[0]["simulation"]["messages"]][:2] == ["assistant", "user"]  # tau2's greeting
    assert all(r["termination_reason"] in ("max_steps", "user_stop") for r in records)
    assert records[0]["simulation"]["messages"][1]["usage"]["completion_tokens"] > 0  # the user spoke, from llama.cpp
