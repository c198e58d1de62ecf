"""The local transformers backend with the embedded SmolLM2-135M (slow: loads a model).

Answers are short on purpose (a few dozen tokens on 2 CPU cores). The model is
weak, so the JSON test accepts either outcome of the repair loop but checks
that every round was made and accounted.
"""

import threading

import pytest
from pydantic import BaseModel

from rods.llm import LLMError, make_backend
from rods.llm.local_backend import _tool_calls

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def llm():
    return make_backend("local", temperature=0.0, max_tokens=8, json_repairs=1, timeout_s=120)


def test_generates_text_with_accounting(llm):
    reply = llm.chat([{"role": "user", "content": "Say hello."}], purpose="hello")
    assert reply.text.strip()
    assert reply.prompt_tokens > 5 and 0 < reply.completion_tokens <= 8
    assert llm.describe() == "local:SmolLM2-135M-Instruct.Q4_1.gguf"
    stats = llm.stats.purpose("hello")
    assert (stats.chats, stats.requests, stats.completion_tokens) == (1, 1, reply.completion_tokens)


def test_greedy_generation_is_deterministic_and_thread_safe(llm):
    messages = [{"role": "user", "content": "Name a colour."}]
    replies = [None, None]

    def ask(i):
        replies[i] = llm.chat(messages, max_tokens=4).text

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert replies[0] and replies[0] == replies[1]


def test_json_request_runs_the_repair_loop(llm):
    class Answer(BaseModel):
        answer: int

    schema = Answer
    messages = [{"role": "user", "content": 'What is 2+2? Reply as JSON like {"answer": 0}.'}]
    try:
        reply = llm.chat(messages, json_schema=schema, purpose="json", max_tokens=16)
    except LLMError as err:
        assert err.kind in ("invalid_json", "truncated") and err.attempts == 2 and err.last_text is not None
        stats = llm.stats.purpose("json")
        assert err.kind == "invalid_json" or stats.truncated >= 1
        assert (stats.requests, stats.invalid_json, stats.repairs, stats.failures) == (2, 2, 1, 1)
    else:
        assert isinstance(reply.data["answer"], int)
        assert llm.stats.purpose("json").invalid_json == reply.repairs
    # The schema went into the prompt (no constrained decoding here).
    assert llm.stats.purpose("json").prompt_tokens > 40


def test_hermes_tool_calls_are_read_from_text():
    text = 'ok <tool_call>{"name": "cd", "arguments": {"folder": "x"}}</tool_call> <tool_call>{bad}</tool_call>'
    assert _tool_calls(text) == [{"id": "call_0", "name": "cd", "arguments": '{"folder": "x"}'}]
