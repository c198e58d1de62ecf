"""Tool schemas from BFCL's function docs."""

from rods.envs import function_docs, function_names, task_tool_schemas, tool_schemas
from rods.envs.environment import public_methods
from rods.tasks.bfcl import API_CLASSES


def test_docs_cover_exactly_the_public_methods():
    docs = function_docs(API_CLASSES)
    assert sum(len(v) for v in docs.values()) == 128
    for cls in API_CLASSES:
        assert set(function_names([cls])) == set(public_methods(cls)), cls


def test_openai_tools_are_json_schema():
    tools = tool_schemas(["GorillaFileSystem", "MathAPI"], exclude=["cd"])
    names = [t["function"]["name"] for t in tools]
    assert "cd" not in names and "mean" in names
    allowed = {"object", "array", "string", "integer", "number", "boolean"}

    def walk(schema):
        if isinstance(schema, dict):
            if isinstance(schema.get("type"), str):
                assert schema["type"] in allowed, schema
            for v in schema.values():
                walk(v)
        elif isinstance(schema, list):
            for v in schema:
                walk(v)

    for tool in tools:
        assert tool["type"] == "function" and tool["function"]["parameters"]["type"] == "object"
        walk(tool["function"]["parameters"])


def test_held_out_functions_are_hidden_until_revealed(bfcl_tasks):
    task = next(t for t in bfcl_tasks if t.missed_function)
    reveal, hidden = next(iter(task.reveal_turns().items()))
    before = {t["function"]["name"] for t in task_tool_schemas(task, reveal - 1)}
    after = {t["function"]["name"] for t in task_tool_schemas(task, reveal)}
    assert not set(hidden) & before
    assert set(hidden) <= after
