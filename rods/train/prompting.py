"""Compact tool descriptions: one signature line per function instead of full JSON schemas.

The full Hermes tool block of a BFCL task is 3-5k tokens; on two CPU cores that
alone makes a GRPO step minutes long. With ``rollout.tool_description:
signatures`` the system prompt lists ``name(arg: type, opt: type = ...)`` lines
plus the Hermes call format, about 10x shorter. Used for the embedded demo;
the paper setting keeps the full schemas.
"""

from __future__ import annotations

from rods.envs.schemas import function_docs
from rods.tasks import Task

COMPACT_SYSTEM_PROMPT = (
    "You are an assistant that completes the user's request by calling tools.\n"
    "Tools:\n{signatures}\n"
    "To call a tool, write a JSON object inside <tool_call></tool_call> tags:\n"
    '<tool_call>\n{{"name": "<function-name>", "arguments": {{"<arg>": <value>}}}}\n</tool_call>\n'
    "When you are done, answer in plain text."
)


def signature(doc: dict) -> str:
    """``name(a: string, b: integer = ...)`` for one BFCL function doc."""
    params = doc.get("parameters", {}) or {}
    required = set(params.get("required", []))
    parts = []
    for name, spec in (params.get("properties") or {}).items():
        kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
        parts.append(f"{name}: {kind}" + ("" if name in required else " = ..."))
    return f"{doc['name']}({', '.join(parts)})"


def compact_system_prompt(task: Task, turn: int = 0) -> str:
    """The system prompt listing the signatures of the tools available at `turn`."""
    hidden = task.held_out_functions(turn)
    lines = [
        signature(doc)
        for docs in function_docs(task.involved_classes).values()
        for doc in docs
        if doc["name"] not in hidden
    ]
    return COMPACT_SYSTEM_PROMPT.format(signatures="\n".join(lines))
