"""Tool calls: parse model text into calls, never with `eval`/`exec`.

Two input forms are read:

* BFCL's pythonic form, `f(a=1)` or a list of calls `[f(a=1), g(b='x')]`,
  parsed with `ast`; a call is accepted only if it names a plain function
  (no attribute chain, no `_private` or dunder name) and every argument is a
  literal (constants, lists, tuples, dicts, sets, negative numbers), decoded by
  `ast.literal_eval` node by node;
* JSON tool calls, `{"name": ..., "arguments": {...}}` (arguments may also be a
  JSON string, as OpenAI sends them; `{"function": {...}}` wrappers and lists
  are accepted).

Anything else raises `CallParseError`; the environment turns that into an
`Error during execution: ...` tool result. Model output is untrusted.
"""

from __future__ import annotations

import ast
import copy
import inspect
import json
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

#: Longest call text the parser accepts (longer text is refused unparsed).
MAX_CALL_TEXT = 100_000
#: Most calls one text may hold.
MAX_CALLS = 64


class CallParseError(ValueError):
    """Text that is not an acceptable tool call; the message says why."""


@dataclass(frozen=True)
class ToolCall:
    """One call of an environment function: `name(*args, **arguments)`.

    `args` holds positional arguments (BFCL's ground truth has a few, e.g.
    `sort('final_report.pdf')`); models normally send keywords only.
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    args: tuple[Any, ...] = ()

    def __hash__(self) -> int:  # arguments is a dict; hash by the pythonic text
        return hash(format_call(self))


def format_call(call: ToolCall) -> str:
    """The pythonic text of a call, e.g. `cd(folder='document')` (BFCL's format)."""
    parts = [repr(a) for a in call.args]
    parts += [f"{k}={v!r}" for k, v in call.arguments.items()]
    return f"{call.name}({', '.join(parts)})"


def parse_calls(text: str) -> list[ToolCall]:
    """All calls in one model text, pythonic or JSON; raises `CallParseError`.

    The calls are the caller's own copies: editing their arguments cannot
    reach the parse cache.
    """
    if not isinstance(text, str):
        raise CallParseError(f"expected call text (str), got {type(text).__name__}")
    return [ToolCall(c.name, copy.deepcopy(c.arguments), copy.deepcopy(c.args)) for c in parse_call_text(text)[0]]


def parse_call_text(text: str) -> tuple[tuple[ToolCall, ...], type | None]:
    """Calls in one text plus the container they came in (`list`, `tuple` or None for one bare call).

    Short texts are cached: equal texts (the same ground truth in K rollouts)
    are parsed once, and the returned calls are shared: do not edit their
    arguments (`parse_calls` returns copies). Raises `CallParseError` (also for
    non-str input).
    """
    if not isinstance(text, str):
        raise CallParseError(f"expected call text (str), got {type(text).__name__}")
    if len(text) > MAX_CALL_TEXT:
        raise CallParseError(f"call text too long ({len(text)} > {MAX_CALL_TEXT} characters)")
    if len(text) <= _CACHED_TEXT:
        return _parse_cached(text)
    return _parse(text)


#: Texts up to this length go through the parse cache.
_CACHED_TEXT = 2_000


@lru_cache(maxsize=32768)
def _parse_cached(text: str) -> tuple[tuple[ToolCall, ...], type | None]:
    return _parse(text)


def _parse(text: str) -> tuple[tuple[ToolCall, ...], type | None]:
    stripped = text.strip()
    if not stripped:
        raise CallParseError("empty call text")
    if stripped[0] == "{" or (stripped[0] == "[" and stripped[1:].lstrip().startswith("{")):
        try:
            obj = json.loads(stripped)
            return tuple(_from_json(obj)), (list if isinstance(obj, list) else None)
        except json.JSONDecodeError:
            pass  # e.g. a pythonic list holding a dict literal: fall through
        except RecursionError:
            raise CallParseError("JSON nested too deeply") from None
    return _from_python(stripped)


# -- pythonic ---------------------------------------------------------------

#: CPython 3.11 converts a parsed tree to `ast` objects with one recursion counter
#: per interpreter, not per thread: when a garbage collection inside that conversion
#: lets another thread parse, it fails with "SystemError: AST constructor recursion
#: depth mismatch" (seen with the synthesis pipeline's threads). One parse at a time.
_AST_LOCK = threading.RLock()


def ast_parse(source: str, mode: str = "exec") -> ast.AST:
    """`ast.parse`, one thread at a time (see `_AST_LOCK`): every parse in rods goes through here."""
    with _AST_LOCK:
        return ast.parse(source, mode=mode)


def source_of(obj: Any) -> str:
    """`inspect.getsource` under `_AST_LOCK`: for a class, CPython 3.11's `inspect` parses its module."""
    with _AST_LOCK:
        return inspect.getsource(obj)


def _from_python(text: str) -> tuple[tuple[ToolCall, ...], type | None]:
    try:
        tree = cast(ast.Expression, ast_parse(text, mode="eval"))
    except SyntaxError as err:
        raise CallParseError(f"invalid syntax: {err.msg}") from None
    except (ValueError, RecursionError, MemoryError) as err:
        raise CallParseError(f"unparsable call text: {type(err).__name__}") from None
    body = tree.body
    container: type | None = None
    nodes: list[ast.expr] = [body]
    if isinstance(body, ast.List | ast.Tuple):
        container, nodes = (list if isinstance(body, ast.List) else tuple), body.elts
    if len(nodes) > MAX_CALLS:
        raise CallParseError(f"too many calls in one text ({len(nodes)} > {MAX_CALLS})")
    return tuple(_call_from_node(node, text) for node in nodes), container


def _call_from_node(node: ast.expr, text: str) -> ToolCall:
    if not isinstance(node, ast.Call):
        raise CallParseError(f"expected a function call, got {_describe(node, text)}")
    if not isinstance(node.func, ast.Name):
        raise CallParseError(f"only plain function names can be called, got {_describe(node.func, text)}")
    name = node.func.id
    check_name(name)
    args: list[Any] = []
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            raise CallParseError(f"{name}: starred arguments are not allowed")
        args.append(_literal(arg, name, f"positional argument {len(args) + 1}", text))
    kwargs: dict[str, Any] = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise CallParseError(f"{name}: '**' argument unpacking is not allowed")
        if kw.arg in kwargs:
            raise CallParseError(f"{name}: keyword argument repeated: {kw.arg}")
        kwargs[kw.arg] = _literal(kw.value, name, f"argument '{kw.arg}'", text)
    return ToolCall(name, kwargs, tuple(args))


def _literal(node: ast.expr, name: str, what: str, text: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
        raise CallParseError(f"{name}: {what} must be a literal value, got {_describe(node, text)}") from None


def _describe(node: ast.AST, text: str) -> str:
    """The source text of a node, shortened (cheaper than `ast.unparse`)."""
    segment = None
    if getattr(node, "end_col_offset", None) is not None:
        try:
            segment = ast.get_source_segment(text, node)
        except Exception:  # odd offsets: fall back to the node type
            segment = None
    segment = segment if segment is not None else type(node).__name__
    return segment if len(segment) <= 80 else segment[:77] + "..."


def check_name(name: str) -> None:
    """Refuse names that can never be environment functions (private, dunder, non-identifiers)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise CallParseError(f"invalid function name {str(name)[:80]!r}")
    if name.startswith("_"):
        raise CallParseError(f"name '{name}' is not defined")


# -- JSON -------------------------------------------------------------------


def _from_json(obj: Any) -> list[ToolCall]:
    items = obj if isinstance(obj, list) else [obj]
    if len(items) > MAX_CALLS:
        raise CallParseError(f"too many calls in one text ({len(items)} > {MAX_CALLS})")
    return [tool_call_from_json(item) for item in items]


def tool_call_from_json(obj: Any) -> ToolCall:
    """A call from a decoded JSON tool call (`{"name", "arguments"}`, OpenAI or Hermes style)."""
    if not isinstance(obj, dict):
        raise CallParseError(f"a JSON tool call must be an object, got {type(obj).__name__}")
    if "function" in obj and isinstance(obj["function"], dict):
        obj = obj["function"]
    name = obj.get("name")
    if not isinstance(name, str):
        raise CallParseError("a JSON tool call needs a string 'name'")
    check_name(name)
    arguments = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (json.JSONDecodeError, RecursionError):
            raise CallParseError(f"{name}: 'arguments' is not valid JSON") from None
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise CallParseError(f"{name}: 'arguments' must be an object, got {type(arguments).__name__}")
    for key in arguments:
        if not key.isidentifier():
            raise CallParseError(f"{name}: invalid argument name {key[:80]!r}")
    return ToolCall(name, dict(arguments))
