"""Adversarial call text cannot reach anything outside the tool surface.

Each attempt must come back as an `Error during execution: ...` string (or, for
a legitimate call, a tool result), raise nothing, leave the environment's state
as it was (unless it is a real tool call), and trigger no process, file, import
or code-execution audit event.
"""

import string
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rods.envs import ERROR_PREFIX, ToolEnvironment

ESCAPES = [
    "__import__('os').system('id')",
    "__import__('os')",
    "().__class__.__bases__",
    "().__class__.__bases__[0].__subclasses__()",
    "_load_scenario({})",
    "_load_scenario(scenario={'root': {}})",
    "cd.__globals__",
    "cd.__globals__['__builtins__']['eval']('1')",
    "cd(folder=__import__('os').getcwd())",
    "(lambda: __import__('os'))()",
    "ls(a=lambda: 1)",
    "[c for c in ().__class__.__mro__]",
    "ls(a=[x for x in range(3)])",
    "f'{__import__(\"os\").system(\"id\")}'",
    "ls(a=f'{1}')",
    "GorillaFileSystem.cd(folder='x')",
    "self._current_dir",
    "pwd().__class__",
    "getattr(pwd, '__globals__')",
    "eval('1')",
    "exec('import os')",
    "open('/etc/passwd')",
    "globals()",
    "ls(*['a'])",
    "ls(**{'a': True})",
    "ls(a=(b := 1))",
    "(x := pwd())",
    "ls(a=not_a_name)",
    "ls(a=1 if True else 2)",
    "ls(a=[1, 2][0])",
    "ls(a={'k': 1}['k'])",
    "ls(a=1 + 2)",
    "ls(a=2 ** 100000)",
    "kill(pid=1)",
    "run()",
    "exit()",
    "__class__()",
    "__init__()",
    "cd(folder='x').__class__",
    "cd(folder='x')(1)",
    "cd(folder='x')[0]",
    "await ls()",
    "yield ls()",
    "import os",
    "ls(); __import__('os')",
    "ls()\n__import__('os')",
    '{"name": "_load_scenario", "arguments": {"scenario": {}}}',
    '{"name": "__init__", "arguments": {}}',
    '{"name": "cd.__globals__", "arguments": {}}',
    '{"name": "os.system", "arguments": {"command": "id"}}',
    '{"name": "cd", "arguments": {"folder": "x", "__class__": 1}}',
    "ls(a=" + "[" * 300 + "]" * 300 + ")",
    "ls(a=" + "(" * 300 + ")" * 300 + ")",
    "-" * 100_001,
    "ls(a='" + "x" * 200_000 + "')",
    "[" + "ls(), " * 1000 + "]",
    "\x00",
]

_DANGEROUS_EVENTS = (
    "os.system",
    "subprocess",
    "os.exec",
    "os.spawn",
    "os.posix_spawn",
    "os.fork",
    "exec",
    "import",
    "open",
    "socket",
    "ctypes",
    "object.__getattr__",
    "sys._getframe",
)


class _Audit:
    def __init__(self):
        self.active = False
        self.events = []
        sys.addaudithook(self)

    def __call__(self, event, args):
        if self.active and event.startswith(_DANGEROUS_EVENTS):
            self.events.append((event, repr(args)[:200]))


_AUDIT = _Audit()


@pytest.fixture()
def env(bfcl_tasks):
    task = next(t for t in bfcl_tasks if set(t.involved_classes) == {"GorillaFileSystem", "TwitterAPI"})
    return ToolEnvironment(task)


def _attempt(env, text):
    before = env.snapshot()
    _AUDIT.events.clear()
    _AUDIT.active = True
    try:
        result = env.execute(text)
    finally:
        _AUDIT.active = False
    assert isinstance(result, str)
    assert not _AUDIT.events, (text[:100], _AUDIT.events)
    return result, before


@pytest.mark.parametrize("text", ESCAPES, ids=lambda t: t[:40])
def test_known_escapes_become_errors(env, text):
    result, before = _attempt(env, text)
    assert result.startswith(ERROR_PREFIX), (text[:100], result[:200])
    assert env.snapshot() == before
    assert "uid=" not in result


_alphabet = string.ascii_letters + string.digits + "_()[]{}.,'\"=*:+-/\\ \n@!$%^&|<>?;~`#"
_names = st.sampled_from(
    ["ls", "cd", "pwd", "_load_scenario", "__import__", "eval", "os", "self", "__class__", "post_tweet", "x"]
)
_atoms = st.sampled_from(
    [
        "1",
        "-2.5",
        "'a'",
        "None",
        "True",
        "[1]",
        "{'k': 1}",
        "__import__('os')",
        "lambda: 1",
        "x",
        "().__class__",
        "*[1]",
        "**{}",
        "(y := 1)",
    ]
)


@st.composite
def _call_like(draw):
    name = draw(_names)
    chain = draw(st.lists(st.sampled_from([".__class__", ".__globals__", "()", "[0]", ".system"]), max_size=3))
    args = draw(st.lists(_atoms, max_size=3))
    kwargs = draw(st.lists(st.tuples(st.sampled_from(["a", "folder", "content", "__class__"]), _atoms), max_size=2))
    parts = list(args) + [f"{k}={v}" for k, v in kwargs]
    return f"{name}{''.join(chain)}({', '.join(parts)})"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(st.text(alphabet=_alphabet, max_size=80), _call_like()))
def test_fuzzed_text_never_escapes(env, text):
    result, before = _attempt(env, text)
    if result.startswith(ERROR_PREFIX):
        # A failed call may still be a real tool call that failed inside the API, which
        # must not change state; anything refused by the parser certainly does not.
        assert env.snapshot() == before


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.text(min_size=1, max_size=30),
    args=st.dictionaries(st.text(max_size=10), st.integers() | st.text(max_size=10), max_size=3),
)
def test_fuzzed_json_calls_only_reach_public_methods(env, name, args):
    import json

    result, before = _attempt(env, json.dumps({"name": name, "arguments": args}))
    if name.startswith("_") or not name.isidentifier() or name not in env.functions:
        assert result.startswith(ERROR_PREFIX)
        assert env.snapshot() == before


@pytest.mark.parametrize(
    "text",
    [
        "power(base=9, exponent=100000000000)",
        "power(9, 10**11)",
        "square_root(number=2.0, precision=1000000000)",
        "logarithm(value=10.0, base=2.0, precision=10000000)",
    ],
)
def test_resource_exhausting_math_fails_fast(text, monkeypatch):
    """Refused before BFCL's method runs (it would run for minutes), not merely finished in time."""
    import functools

    from rods.envs import api_class

    math_api, entered = api_class("MathAPI"), []

    def spy(method):
        @functools.wraps(method)  # same name and signature: the limit check reads both
        def spied(self, *args, **kwargs):
            entered.append(method.__name__)
            return method(self, *args, **kwargs)

        return spied

    for name in ("power", "square_root", "logarithm"):
        monkeypatch.setattr(math_api, name, spy(getattr(math_api, name)))
    env = ToolEnvironment({}, ["MathAPI"])
    assert env.execute(text).startswith(ERROR_PREFIX)
    assert entered == []
    assert env.execute("power(base=2, exponent=10)") == '{"result": 1024}'
    assert entered == ["power"]  # the spy does see calls that run


def test_the_audit_hook_does_see_escapes():
    """Guard for the guard: the hook above records what an escape would trigger."""
    _AUDIT.events.clear()
    _AUDIT.active = True
    try:
        open("/dev/null").close()
        exec("1")  # noqa: S102 - on purpose, our own constant code
    finally:
        _AUDIT.active = False
    assert {e for e, _ in _AUDIT.events} >= {"open", "exec"}
