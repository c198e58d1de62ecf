"""The Hermes tool-call format of the Qwen2.5/Qwen3 chat templates, written and found in one place.

A call is ``<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>``.
`tool_call_block` writes one (endpoint replies with structured calls, SFT
targets); `tool_call_bodies` finds the JSON bodies in a reply (the rollout
parser, the local backend). A missing closing tag at the very end is
tolerated, since generation often stops at the end-of-turn token right before it.
"""

from __future__ import annotations

import json
import re
from typing import Any

TOOL_CALL_BLOCK = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)


def tool_call_block(name: str, arguments: Any) -> str:
    """One Hermes block; `arguments` is written as JSON as it is (a string stays a string)."""
    body = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
    return f"<tool_call>\n{body}\n</tool_call>"


def tool_call_bodies(text: str) -> list[str]:
    """The stripped body of every ``<tool_call>`` block of `text`, in order (not yet parsed)."""
    return [match.group(1).strip() for match in TOOL_CALL_BLOCK.finditer(text)]


def without_tool_calls(text: str) -> str:
    """`text` with its ``<tool_call>`` blocks removed."""
    return TOOL_CALL_BLOCK.sub("", text)
