"""Reading tool calls from reply text: Hermes blocks, BFCL pythonic lists, bad output."""

from hypothesis import given, settings, strategies as st

from rods.envs.calls import ToolCall, format_call
from rods.rollout.parse import parse_tool_calls


def test_hermes_blocks_in_order_with_content_kept():
    text = (
        "Let me look.\n<tool_call>\n{\"name\": \"cd\", \"arguments\": {\"folder\": \"docs\"}}\n</tool_call>\n"
        '<tool_call>{"name": "ls", "arguments": {}}</tool_call>'
    )
    reply = parse_tool_calls(text)
    assert [c.name for c in reply.calls] == ["cd", "ls"]
    assert reply.calls[0].arguments == {"folder": "docs"}
    assert reply.content == "Let me look."
    assert reply.errors == []


def test_hermes_arguments_as_json_string_and_unclosed_last_block():
    text = (
        '<tool_call>{"name": "mean", "arguments": "{\\"numbers\\": [1, 2]}"}</tool_call>'
        '<tool_call>{"name": "ls", "arguments": {}}'
    )
    reply = parse_tool_calls(text)
    assert [format_call(c) for c in reply.calls] == ["mean(numbers=[1, 2])", "ls()"]


def test_bad_hermes_block_becomes_an_error_and_good_ones_survive():
    text = (
        '<tool_call>{"name": "cd", "arguments": {"folder": </tool_call>'
        '<tool_call>{"name": "pwd", "arguments": {}}</tool_call>'
    )
    reply = parse_tool_calls(text)
    assert [c.name for c in reply.calls] == ["pwd"]
    assert len(reply.errors) == 1 and "tool call 1" in reply.errors[0] and "invalid JSON" in reply.errors[0]
    assert reply.has_calls


def test_hermes_private_name_is_refused():
    reply = parse_tool_calls('<tool_call>{"name": "__import__", "arguments": {"name": "os"}}</tool_call>')
    assert reply.calls == [] and len(reply.errors) == 1


def test_pythonic_list_plain_and_fenced():
    for text in (
        "[cd(folder='a'), mv(source='x', destination='y')]",
        "```python\n[cd(folder='a'), mv(source='x', destination='y')]\n```",
    ):
        reply = parse_tool_calls(text)
        assert [format_call(c) for c in reply.calls] == ["cd(folder='a')", "mv(source='x', destination='y')"]
        assert reply.errors == []


def test_pythonic_never_evaluates():
    reply = parse_tool_calls("[cd(folder=__import__('os').getcwd())]")
    assert reply.calls == [] and len(reply.errors) == 1


def test_json_call_without_tags():
    reply = parse_tool_calls('[{"name": "ls", "arguments": {"a": true}}, {"function": "pwd", "parameters": {}}]')
    assert [c.name for c in reply.calls] == ["ls", "pwd"]


def test_plain_text_is_an_answer():
    for text in ("The file is moved.", "", "[1, 2, 3] are the numbers", "I will call [the manager] tomorrow"):
        reply = parse_tool_calls(text)
        assert not reply.has_calls, text


def test_think_block_is_not_read_for_calls():
    text = "<think>maybe <tool_call>{\"name\": \"rm\"}</tool_call></think>Done."
    reply = parse_tool_calls(text)
    assert not reply.has_calls and reply.content == "Done."


_names = st.sampled_from(["cd", "ls", "mean", "post_tweet", "send_message"])
_values = st.one_of(st.integers(-5, 5), st.text(max_size=8), st.booleans(), st.lists(st.integers(0, 3), max_size=3))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(_names, st.dictionaries(st.sampled_from(["a", "b", "path"]), _values, max_size=2)),
        min_size=1,
        max_size=3,
    )
)
def test_round_trip_both_formats(calls):
    """What the loop writes (format_call / Hermes JSON) reads back to the same calls."""
    import json

    expected = [ToolCall(n, dict(a)) for n, a in calls]
    pythonic = "[" + ", ".join(format_call(c) for c in expected) + "]"
    hermes = "".join(
        f"<tool_call>{json.dumps({'name': c.name, 'arguments': c.arguments})}</tool_call>" for c in expected
    )
    for text in (pythonic, hermes):
        reply = parse_tool_calls(text)
        assert reply.errors == []
        assert [(c.name, c.arguments) for c in reply.calls] == [(c.name, c.arguments) for c in expected]
