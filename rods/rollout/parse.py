"""Reading tool calls out of a policy's reply text.

Two formats are understood (docs/design.md §2.4):

* Hermes, as the Qwen2.5/Qwen3 chat templates emit it:
  ``<tool_call>{"name": "cd", "arguments": {"folder": "a"}}</tool_call>``,
  one block per call (a missing closing tag at the very end is tolerated,
  since generation often stops at the end-of-turn token right before it);
* BFCL's pythonic list ``[cd(folder='a'), ls()]`` (optionally in a code fence),
  also bare JSON objects ``{"name": ..., "arguments": ...}`` or lists of them.

Model output is untrusted: pythonic calls are read with ``ast`` by
``rods.envs.calls.parse_calls``, never evaluated. A block that cannot be read
becomes an entry of ``errors`` (the agent loop answers it with an error tool
result) instead of an exception.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from rods.envs.calls import CallParseError, ToolCall, parse_calls, tool_call_from_json
from rods.llm.hermes import tool_call_bodies, without_tool_calls

_THINK_BLOCK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)
_FENCE = re.compile(r"```(?:python|py|json|tool_code)?\s*\n?(.*?)```", re.DOTALL)
#: A reply that *looks like* a pythonic call list: `[name(` at its start.
_PYTHONIC_START = re.compile(r"^\s*\[\s*[A-Za-z_][\w.]*\s*\(")
_JSON_START = re.compile(r'^\s*(\[\s*)?\{\s*"(name|function)"')


@dataclass
class ParsedReply:
    """A reply split into its free text and its tool calls.

    Attributes:
        content: the text outside tool-call blocks (stripped).
        calls: the calls read, in order.
        errors: one message per block (or reply) that looked like a tool call
            but could not be read; non-empty errors never end a turn.
    """

    content: str
    calls: list[ToolCall] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def has_calls(self) -> bool:
        """Whether the reply asks for any tool execution (valid or not)."""
        return bool(self.calls or self.errors)


def parse_tool_calls(text: str) -> ParsedReply:
    """Parse the tool calls of one assistant reply (Hermes blocks, else pythonic/JSON)."""
    if not isinstance(text, str):
        raise TypeError(f"reply must be a str, got {type(text).__name__}")
    visible = _THINK_BLOCK.sub("", text)
    if "<tool_call>" in visible:
        return _parse_hermes(visible)
    return _parse_plain(visible)


def _parse_hermes(text: str) -> ParsedReply:
    calls: list[ToolCall] = []
    errors: list[str] = []
    for index, body in enumerate(tool_call_bodies(text), start=1):
        try:
            calls.append(_call_from_json(json.loads(body)))
        except json.JSONDecodeError as err:
            errors.append(f"tool call {index}: invalid JSON ({err.msg} at column {err.colno}): {_clip(body)}")
        except ValueError as err:
            errors.append(f"tool call {index}: {err}: {_clip(body)}")
    content = without_tool_calls(text).strip()
    return ParsedReply(content=content, calls=calls, errors=errors)


def _parse_plain(text: str) -> ParsedReply:
    stripped = text.strip()
    candidate = stripped
    fence = _FENCE.search(stripped)
    if fence and (_PYTHONIC_START.match(fence.group(1)) or _JSON_START.match(fence.group(1))):
        candidate = fence.group(1).strip()
    if _JSON_START.match(candidate):
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError as err:
            return ParsedReply(stripped, [], [f"invalid JSON tool call ({err.msg}): {_clip(candidate)}"])
        try:
            items = data if isinstance(data, list) else [data]
            return ParsedReply(_outside(stripped, candidate), [_call_from_json(i) for i in items], [])
        except ValueError as err:
            return ParsedReply(stripped, [], [f"{err}: {_clip(candidate)}"])
    if _PYTHONIC_START.match(candidate):
        end = candidate.rfind("]")
        call_list = candidate[: end + 1] if end >= 0 else candidate
        try:
            calls = parse_calls(call_list)
        except (CallParseError, ValueError, SyntaxError, TypeError) as err:
            return ParsedReply(stripped, [], [f"unparseable call list ({err}): {_clip(call_list)}"])
        return ParsedReply(_outside(stripped, call_list), list(calls), [])
    return ParsedReply(content=stripped)


def _call_from_json(obj: object) -> ToolCall:
    """A ToolCall from `{"name": ..., "arguments": {...}}` (arguments may be a JSON string)."""
    if isinstance(obj, dict) and "name" not in obj and isinstance(obj.get("function"), str):
        obj = {"name": obj["function"], "arguments": obj.get("parameters", obj.get("arguments", {}))}
    return tool_call_from_json(obj)


def _outside(text: str, part: str) -> str:
    """The text around `part` (and its code fence), stripped."""
    rest = text.replace(part, "", 1)
    return re.sub(r"```\w*\s*```", "", rest).strip()


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
