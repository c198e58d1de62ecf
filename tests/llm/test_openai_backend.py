"""The openai backend over real HTTP against the scripted chat-completions server.

Covers what the base class promises every backend: retries with backoff on
timeouts/5xx/broken bodies, JSON repair, the concurrency limit, and accounting.
"""

import asyncio
import json
import threading

import pytest
from pydantic import BaseModel

from rods.llm import LLMConfig, LLMError, base as base_module, make_backend
from rods.llm.openai_backend import OpenAIBackend

from servers.openai_scripted import answer_in_groups_of

USER = [{"role": "user", "content": "plan a task"}]
class PlanReply(BaseModel):
    calls: list[str]


PLAN = PlanReply  # the reply model; PLAN_SCHEMA is what servers receive
PLAN_SCHEMA = PlanReply.model_json_schema()


def backend(server, **kw):
    opts = {"timeout_s": 2.0, "max_retries": 2, "backoff_s": 0.05, "json_repairs": 2, **kw}
    return make_backend("openai", base_url=server.base_url, model="m", **opts)


def test_valid_json_reply_is_parsed_and_accounted(scripted_openai_server):
    server = scripted_openai_server.script([
        {"json": {"calls": ["cd(folder='a')"]}, "usage": {"prompt_tokens": 30, "completion_tokens": 7}},
    ])
    llm = backend(server)
    reply = llm.chat(USER, json_schema=PLAN, purpose="plan", temperature=0.2, max_tokens=64, seed=3)
    assert reply.data == {"calls": ["cd(folder='a')"]}
    assert (reply.prompt_tokens, reply.completion_tokens, reply.attempts, reply.repairs) == (30, 7, 1, 0)
    sent = server.requests[0]
    assert sent["model"] == "m" and sent["messages"] == USER
    assert sent["temperature"] == 0.2 and sent["max_tokens"] == 64 and sent["seed"] == 3
    assert sent["response_format"] == {"type": "json_schema",
                                       "json_schema": {"name": "PlanReply", "schema": PLAN_SCHEMA}}
    stats = llm.stats.purpose("plan")
    assert (stats.chats, stats.requests, stats.failures, stats.prompt_tokens, stats.completion_tokens) == (
        1,
        1,
        0,
        30,
        7,
    )
    assert llm.stats.purpose("other").chats == 0


def test_malformed_json_is_sent_back_for_repair(scripted_openai_server):
    server = scripted_openai_server.script([
        {"content": "Here is the plan: {calls: [cd]"},
        {"json": {"calls": "not a list"}},
        {"content": '```json\n{"calls": []}\n```'},
    ])
    llm = backend(server)
    reply = llm.chat(USER, json_schema=PLAN, purpose="plan")
    assert reply.data == {"calls": []}
    assert reply.repairs == 2 and reply.attempts == 3
    # Each repair round carries the bad reply and the error back to the model.
    second, third = server.requests[1]["messages"], server.requests[2]["messages"]
    assert second[:1] == USER and second[1] == {"role": "assistant", "content": "Here is the plan: {calls: [cd]"}
    assert "not valid JSON" in second[2]["content"]
    assert "calls: Input should be a valid list" in third[-1]["content"]
    stats = llm.stats.purpose("plan")
    assert (stats.requests, stats.repairs, stats.invalid_json, stats.failures) == (3, 2, 2, 0)


def test_a_reply_cut_off_at_max_tokens_is_counted_as_truncated(scripted_openai_server):
    server = scripted_openai_server.script([
        {"content": '{"calls": ["cd", "cd", "cd', "finish_reason": "length"},
        {"content": "{calls: }"},
        {"json": {"calls": []}},
    ])
    llm = backend(server)
    assert llm.chat(USER, json_schema=PLAN, purpose="plan").data == {"calls": []}
    stats = llm.stats.purpose("plan")
    assert (stats.invalid_json, stats.truncated) == (2, 1)  # only the first was cut off by the length limit


def test_json_cut_off_at_max_tokens_to_the_end_fails_as_truncated(scripted_openai_server):
    """The grammar cannot stop a looping model at max_tokens: the failure says so, not "invalid JSON"."""
    server = scripted_openai_server.script([
        {"content": "{calls: }"},
        {"content": '{"calls": ["cd", "cd", "cd', "finish_reason": "length"},
    ])
    llm = backend(server, json_repairs=1)
    with pytest.raises(LLMError) as info:
        llm.chat(USER, json_schema=PLAN, purpose="judge")
    assert info.value.kind == "truncated" and "max_tokens" in str(info.value)
    stats = llm.stats.purpose("judge")
    assert (stats.invalid_json, stats.truncated, stats.failures) == (2, 1, 1)


def test_json_that_never_validates_raises_and_counts(scripted_openai_server):
    server = scripted_openai_server.script([], default={"content": "I cannot do that."})
    llm = backend(server, json_repairs=1)
    with pytest.raises(LLMError) as info:
        llm.chat(USER, json_schema=PLAN, purpose="judge")
    err = info.value
    assert err.kind == "invalid_json" and err.purpose == "judge" and err.attempts == 2
    assert err.last_text == "I cannot do that." and err.prompt_tokens == 20
    stats = llm.stats.purpose("judge")
    assert (stats.chats, stats.requests, stats.invalid_json, stats.failures) == (1, 2, 2, 1)


def test_5xx_and_broken_bodies_are_retried_with_backoff(scripted_openai_server, monkeypatch):
    server = scripted_openai_server.script([
        {"status": 500},
        {"status": 503, "body": "upstream overloaded"},
        {"raw": "<html>bad gateway</html>"},
        {"content": "done"},
    ])
    llm = backend(server, max_retries=3, backoff_s=0.1, backoff_max_s=0.3)
    pauses: list[float] = []
    monkeypatch.setattr(base_module.time, "sleep", pauses.append)  # a fake clock: record, don't wait
    reply = llm.chat(USER, purpose="rewrite")
    assert reply.text == "done" and reply.attempts == 4
    assert pauses == [0.1, 0.2, 0.3]  # exponential backoff between the four requests, capped
    stats = llm.stats.purpose("rewrite")
    assert stats.retries == 3 and stats.errors == {"server": 2, "malformed": 1} and stats.failures == 0


def test_persistent_5xx_gives_llm_error_after_max_retries(scripted_openai_server):
    server = scripted_openai_server.script([], default={"status": 503})
    llm = backend(server, max_retries=2, backoff_s=0.01, backoff_max_s=0.02)
    with pytest.raises(LLMError) as info:
        llm.chat(USER, purpose="plan")
    assert info.value.kind == "server" and info.value.attempts == 3
    assert len(server.requests) == 3
    assert llm.stats.total.errors == {"server": 3} and llm.stats.total.failures == 1


def test_timeouts_are_retried_then_fail(scripted_openai_server):
    server = scripted_openai_server.script([{"sleep": 1.5, "content": "late"}, {"content": "on time"}])
    llm = backend(server, timeout_s=0.5)
    reply = llm.chat(USER, purpose="plan")
    assert reply.text == "on time" and reply.attempts == 2
    assert llm.stats.total.errors == {"timeout": 1}

    server.script([], default={"sleep": 1.0, "content": "late"})
    with pytest.raises(LLMError, match="within 0.3s") as info:
        llm.chat(USER, purpose="plan", timeout_s=0.3)
    assert info.value.kind == "timeout" and info.value.attempts == 3


def test_client_errors_are_not_retried(scripted_openai_server):
    server = scripted_openai_server.script([{"status": 401, "body": {"error": {"message": "bad key"}}}])
    llm = backend(server)
    with pytest.raises(LLMError, match="bad key") as info:
        llm.chat(USER)
    assert info.value.kind == "bad_request" and len(server.requests) == 1


def test_unreachable_endpoint_is_a_connection_error():
    llm = OpenAIBackend(base_url="http://127.0.0.1:9/v1", model="m",
                        config=LLMConfig(max_retries=1, backoff_s=0.01, timeout_s=2))
    with pytest.raises(LLMError) as info:
        llm.chat(USER)
    assert info.value.kind == "connection" and info.value.attempts == 2


def rejects_response_format(kind):
    def answer(body):
        fmt = body.get("response_format")
        if fmt and fmt["type"] in kind:
            return {"status": 400, "body": {"error": {"message": f"response_format {fmt['type']} unsupported"}}}
        return {"json": {"calls": ["ls()"]}}

    return answer


def test_structured_output_falls_back_when_the_server_rejects_it(scripted_openai_server):
    server = scripted_openai_server.script([], default=rejects_response_format({"json_schema", "json_object"}))
    llm = backend(server)
    assert llm.structured_level == "json_schema"
    reply = llm.chat(USER, json_schema=PLAN)
    assert reply.data == {"calls": ["ls()"]}
    formats = [r.get("response_format") for r in server.requests]
    assert [(f or {}).get("type") for f in formats] == ["json_schema", "json_object", "json_object", None]
    assert formats[1]["schema"] == PLAN_SCHEMA and "schema" not in formats[2]
    assert llm.structured_level == "none"
    assert llm.stats.total.requests == 4  # the rejected requests count too
    # Without server-side structure the schema travels in the prompt instead.
    assert json.dumps(PLAN_SCHEMA) in server.requests[-1]["messages"][-1]["content"]
    # The level is remembered: the next call goes straight to plain text.
    llm.chat(USER, json_schema=PLAN)
    assert "response_format" not in server.requests[-1] and len(server.requests) == 5


def test_llama_cpp_style_500_on_response_format_also_falls_back(scripted_openai_server):
    def answer(body):
        if (body.get("response_format") or {}).get("type") == "json_schema":
            return {"status": 500, "body": {"error": {"message": "('body', 'response_format', 'type'): "
                                                                 "Input should be 'text' or 'json_object'"}}}
        return {"json": {"calls": []}}

    server = scripted_openai_server.script([], default=answer)
    llm = backend(server, max_retries=0)
    assert llm.chat(USER, json_schema=PLAN).data == {"calls": []}
    assert llm.structured_level == "json_object_schema"
    assert server.requests[-1]["response_format"] == {"type": "json_object", "schema": PLAN_SCHEMA}
    assert llm.stats.total.retries == 0 and llm.stats.total.failures == 0


def test_json_mode_asks_for_a_json_object(scripted_openai_server):
    server = scripted_openai_server.script([{"json": {"ok": True}}])
    reply = backend(server).chat(USER, json_mode=True)
    assert reply.data == {"ok": True}
    assert server.requests[0]["response_format"] == {"type": "json_object"}


def test_pydantic_schema_gives_a_parsed_instance(scripted_openai_server):
    class Verdict(BaseModel):
        passed: bool
        reason: str

    server = scripted_openai_server.script([{"json": {"passed": True}}, {"json": {"passed": True, "reason": "ok"}}])
    reply = backend(server).chat(USER, json_schema=Verdict, purpose="judge")
    assert reply.parsed == Verdict(passed=True, reason="ok") and reply.data == {"passed": True, "reason": "ok"}
    assert server.requests[0]["response_format"]["json_schema"]["name"] == "Verdict"
    assert reply.repairs == 1


def test_tool_calls_come_back_including_unknown_functions(scripted_openai_server):
    tools = [{"type": "function", "function": {"name": "cd", "description": "change dir",
                                               "parameters": {"type": "object", "properties": {}}}}]
    server = scripted_openai_server.script([
        {"tool_calls": [{"name": "cd", "arguments": {"folder": "docs"}},
                        {"name": "teleport", "arguments": "{not json"}]},
    ])
    reply = backend(server).chat(USER, tools=tools, tool_choice="auto", json_schema=PLAN)
    assert [c["name"] for c in reply.tool_calls] == ["cd", "teleport"]
    assert json.loads(reply.tool_calls[0]["arguments"]) == {"folder": "docs"}
    assert reply.tool_calls[1]["arguments"] == "{not json"  # passed through: the caller judges it
    assert reply.finish_reason == "tool_calls" and reply.data is None
    sent = server.requests[0]
    assert sent["tools"] == tools and sent["tool_choice"] == "auto" and "response_format" not in sent


@pytest.mark.parametrize("limit", [1, 3])
def test_concurrency_limit_is_honoured_at_the_server(scripted_openai_server, limit):
    server = scripted_openai_server.script([], default=answer_in_groups_of(limit))
    llm = backend(server, max_concurrency=limit)
    replies: list = []
    threads = [threading.Thread(target=lambda: replies.append(llm.chat(USER))) for _ in range(3 * limit)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    n = 3 * limit
    assert len(server.requests) == n
    assert server.max_in_flight == limit  # reached (the barrier), never passed (the semaphore)
    assert llm.stats.total.chats == n and llm.stats.total.failures == 0 and len(replies) == n


def test_achat_runs_concurrently_under_the_limit(scripted_openai_server):
    server = scripted_openai_server.script([], default=answer_in_groups_of(2))
    llm = backend(server, max_concurrency=2)

    async def many():
        return await asyncio.gather(*(llm.achat(USER, purpose=f"p{i % 2}") for i in range(6)))

    replies = asyncio.run(many())
    assert [r.text for r in replies] == ["ok"] * 6
    assert server.max_in_flight == 2  # the limit was reached (the barrier), never passed
    assert llm.stats.purpose("p0").chats == 3 and llm.stats.purpose("p1").chats == 3
    snap = llm.stats.snapshot()
    assert snap["total"]["chats"] == 6 and set(snap["by_purpose"]) == {"p0", "p1"}


def test_model_name_is_asked_from_the_server(scripted_openai_server):
    server = scripted_openai_server.script([{"content": "hi"}])
    llm = make_backend("openai", base_url=server.base_url)
    assert llm.model == "scripted-model" and llm.describe() == "openai:scripted-model"
    llm.chat(USER)
    assert server.requests[0]["model"] == "scripted-model"


def test_factory_routes_config_fields_and_rejects_unknown_names(scripted_openai_server):
    llm = make_backend("openai", base_url=scripted_openai_server.base_url, model="m", max_concurrency=7, timeout_s=3)
    assert llm.config.max_concurrency == 7 and llm.config.timeout_s == 3
    with pytest.raises(ValueError, match="unknown LLM backend 'gpt'"):
        make_backend("gpt")
    with pytest.raises(ValueError, match="structured"):
        make_backend("openai", base_url=scripted_openai_server.base_url, structured="xml")


def test_scripted_server_routes_answers_by_purpose(scripted_openai_server):
    server = scripted_openai_server.route({
        "plan": [{"json": {"calls": ["teleport(to='moon')"]}}, {"json": {"calls": ["ls()"]}}],
        "judge": {"json": {"passed": True}},
    }).script([], default={"content": "fallback"})
    llm = backend(server)
    assert llm.chat(USER, json_schema=PLAN, purpose="plan").data == {"calls": ["teleport(to='moon')"]}
    assert llm.chat(USER, json_mode=True, purpose="judge").data == {"passed": True}
    assert llm.chat(USER, json_schema=PLAN, purpose="plan").data == {"calls": ["ls()"]}
    assert llm.chat(USER, json_mode=True, purpose="judge").data == {"passed": True}
    assert llm.chat(USER, purpose="plan").text == "fallback"  # the plan route is used up
    assert server.purposes == ["plan", "judge", "plan", "judge", "plan"]
