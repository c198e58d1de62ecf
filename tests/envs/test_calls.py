"""The call parser: pythonic and JSON calls in, literal-only ToolCalls out."""

import pytest

from rods.envs import CallParseError, ToolCall, format_call, parse_call_text, parse_calls


def test_pythonic_single_and_list():
    assert parse_calls("cd(folder='document')") == [ToolCall("cd", {"folder": "document"})]
    calls = parse_calls("[cd(folder='a'), mean(numbers=[1, -2.5, 3]), ls()]")
    assert [c.name for c in calls] == ["cd", "mean", "ls"]
    assert calls[1].arguments == {"numbers": [1, -2.5, 3]}
    assert parse_call_text("[ls()]")[1] is list
    assert parse_call_text("ls()")[1] is None


def test_positional_and_literal_kinds():
    (call,) = parse_calls("sort('final_report.pdf')")
    assert call.args == ("final_report.pdf",) and call.arguments == {}
    (call,) = parse_calls("f(a=(1, 2), b={'k': [True, None]}, c={1, 2}, d=-3, e=1e3)")
    assert call.arguments == {"a": (1, 2), "b": {"k": [True, None]}, "c": {1, 2}, "d": -3, "e": 1000.0}


def test_json_forms():
    assert parse_calls('{"name": "cd", "arguments": {"folder": "x"}}') == [ToolCall("cd", {"folder": "x"})]
    # OpenAI sends arguments as a JSON string, wrapped in {"function": ...}
    text = '{"type": "function", "function": {"name": "cd", "arguments": "{\\"folder\\": \\"x\\"}"}}'
    assert parse_calls(text) == [ToolCall("cd", {"folder": "x"})]
    assert [c.name for c in parse_calls('[{"name": "ls", "arguments": {}}, {"name": "pwd"}]')] == ["ls", "pwd"]


def test_format_round_trip():
    for text in ["cd(folder='document')", "sort('final_report.pdf')", "mean(numbers=[1, 2.5])", "ls()"]:
        (call,) = parse_calls(text)
        assert format_call(call) == text
        assert parse_calls(format_call(call)) == [call]


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("cd(folder='x'", "invalid syntax"),
        ("os.system('id')", "plain function names"),
        ("_load_scenario({})", "not defined"),
        ("__import__('os')", "not defined"),
        ("ls(a=b)", "literal"),
        ("ls(a=1+len([]))", "literal"),
        ("ls(*[1])", "starred"),
        ("ls(**{'a': 1})", "unpacking"),
        ("ls(a=1, a=2)", "repeated"),
        ("42", "expected a function call"),
        ("", "empty"),
        ('{"name": "_x", "arguments": {}}', "not defined"),
        ('{"name": "ls", "arguments": "not json"}', "valid JSON"),
        ('{"name": "ls", "arguments": [1]}', "must be an object"),
        ('{"arguments": {}}', "name"),
    ],
)
def test_refusals(text, fragment):
    with pytest.raises(CallParseError, match=fragment):
        parse_calls(text)


def test_non_string_and_oversized_input():
    with pytest.raises(CallParseError):
        parse_calls(["ls()"])  # type: ignore[arg-type]
    with pytest.raises(CallParseError, match="too long"):
        parse_calls("ls(a='" + "x" * 200_000 + "')")
    with pytest.raises(CallParseError):
        parse_calls("ls(a=" + "[" * 5000 + "]" * 5000 + ")")
    with pytest.raises(CallParseError, match="too many calls"):
        parse_calls("[" + ", ".join(["ls()"] * 100) + "]")


def test_parsed_calls_are_the_callers_own():
    first = parse_calls("mean(numbers=[1, 2])")[0]
    first.arguments["numbers"].append(3)
    first.arguments["extra"] = 1
    assert parse_calls("mean(numbers=[1, 2])")[0].arguments == {"numbers": [1, 2]}


class _CycleWithFinalizer:
    """Garbage only the collector frees, running Python code when it does (a chance to switch threads)."""

    def __init__(self):
        self.me = self

    def __del__(self):
        sum(range(50))


def test_threads_parse_at_once_without_ast_errors():
    """CPython 3.11 shares one AST recursion counter between threads: parsing must not interleave."""
    import sys
    import threading

    errors, interval = [], sys.getswitchinterval()

    def parse_many(worker):
        for i in range(150):
            garbage = [_CycleWithFinalizer() for _ in range(100)]
            del garbage
            text = "[" + ", ".join(f"f{worker}_{i}_{j}(a=[1, {{'k': (2, 3)}}], b='x')" for j in range(30)) + "]"
            try:
                assert len(parse_call_text(text)[0]) == 30  # distinct texts: no parse cache hit
            except Exception as err:  # a SystemError here is the bug
                errors.append(repr(err))

    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=parse_many, args=(w,)) for w in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
