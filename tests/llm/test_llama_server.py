"""The openai backend against a real inference server: llama.cpp serving the embedded SmolLM2.

SmolLM2-135M is weak; these tests check the protocol round trip (text, JSON
mode, schema-constrained JSON, forced tool calls), not the answers' quality.
"""

import json

import pytest
from pydantic import BaseModel, Field

from rods.llm import make_backend

from servers.fixtures import MODEL_ALIAS

pytestmark = pytest.mark.slow

class City(BaseModel):
    city: str = Field(max_length=40)


CITY = City
CD = [{
    "type": "function",
    "function": {
        "name": "cd",
        "description": "Change the current directory.",
        "parameters": {"type": "object", "properties": {"folder": {"type": "string", "enum": ["docs", "src"]}},
                       "required": ["folder"]},
    },
}]


@pytest.fixture(scope="module")
def llm(llama_server):
    backend = make_backend("openai", base_url=llama_server, temperature=0.0, max_tokens=32, timeout_s=120,
                           max_retries=1)
    yield backend
    backend.close()


def test_chat_round_trip_and_accounting(llm):
    assert llm.model == MODEL_ALIAS
    reply = llm.chat([{"role": "user", "content": "Say hello."}], purpose="hello", max_tokens=16)
    assert reply.text.strip()
    assert reply.prompt_tokens > 0 and 0 < reply.completion_tokens <= 16
    assert llm.stats.purpose("hello").chats == 1


def test_json_mode_gives_a_json_object(llm):
    reply = llm.chat([{"role": "user", "content": 'What is 2+2? Answer as a JSON object like {"answer": 0}.'}],
                     json_mode=True, max_tokens=64, purpose="json")
    assert isinstance(reply.data, dict)
    # The server's own text is that object (JSON mode constrains it), not JSON fished out of prose or repaired.
    assert json.loads(reply.text) == reply.data and reply.repairs == 0
    assert reply.completion_tokens > 0 and llm.stats.purpose("json").invalid_json == 0


def test_schema_is_enforced_through_the_fallback(llm):
    # llama-cpp-python rejects response_format json_schema, accepts JSON mode with a schema.
    reply = llm.chat([{"role": "user", "content": "What is the capital of France? Answer in JSON."}],
                     json_schema=CITY, purpose="judge")
    city = reply.data["city"]
    assert isinstance(city, str) and city.strip() and len(city) <= 40  # the schema's maxLength held
    assert llm.structured_level == "json_object_schema"


def test_forced_tool_call(llm):
    reply = llm.chat([{"role": "user", "content": "Go to the docs folder."}], tools=CD,
                     tool_choice={"type": "function", "function": {"name": "cd"}})
    assert [c["name"] for c in reply.tool_calls] == ["cd"]
    assert json.loads(reply.tool_calls[0]["arguments"])["folder"] in ("docs", "src")
