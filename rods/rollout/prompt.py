"""What the policy is told: system prompts and tool descriptions.

Two ways to give a model its tools:

* native: the tool schemas travel next to the messages (``tools=`` of a chat
  template or of an OpenAI request) and the system prompt only sets behaviour;
* in the prompt: the tool descriptions are written into the system message
  (and, at a reveal turn, into the reveal user message, as BFCL does for
  prompting models), for chat templates that ignore ``tools``.

The pythonic format always uses BFCL's own prompting system prompt (the
``classic`` style of ``bfcl_eval.constants.default_prompts``).
"""

from __future__ import annotations

import json
import re
from typing import Literal

from rods.tasks import REVEAL_MESSAGE

ToolFormat = Literal["hermes", "pythonic"]
#: How tools are described: ``full`` JSON schemas (or BFCL docs), ``compact`` one
#: signature line with the first sentence of the description per function, or
#: ``signatures``: a short system prompt of bare signature lines and the Hermes call
#: format in place of the usual one (~10x shorter; for tiny models on CPU).
ToolDocs = Literal["full", "compact", "signatures"]

#: Behaviour for a native tool-calling model (tools passed separately).
DEFAULT_SYSTEM_PROMPT = (
    "You are an assistant that completes the user's requests by calling the provided tools. "
    "At each turn, try your best to complete the tasks requested by the user within the current turn. "
    "Keep calling tools until you have fulfilled the request to the best of your ability; tool results "
    "come back to you. When you have no more tools to call, answer in plain text and the turn ends. "
    "If none of the tools can be used, or the request lacks a required value, say so instead of guessing."
)

#: BFCL's default prompting system prompt (ret_fmt=python, func_doc_fmt=json, classic).
BFCL_PYTHONIC_PROMPT = (
    "You are an expert in composing functions.You are given a question and a set of possible functions. "
    "Based on the question, you will need to make one or more function/tool calls to achieve the purpose. "
    "If none of the functions can be used, point it out. If the given question lacks the parameters "
    "required by the function, also point it out.\n\n"
    "You should only return the function calls in your response.\n\n"
    "If you decide to invoke any of the function(s), you MUST put it in the format of "
    "[func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]. "
    " You SHOULD NOT include any other text in the response.\n\n"
    "At each turn, you should try your best to complete the tasks requested by the user within the "
    "current turn. Continue to output functions to call until you have fulfilled the user's request to "
    "the best of your ability. Once you have no more functions to call, the system will consider the "
    "current turn complete and proceed to the next turn or task.\n\n"
    "Here is a list of functions in json format that you can invoke.\n{functions}\n"
)

#: The whole system prompt of ``tool_docs="signatures"``.
SIGNATURES_SYSTEM_PROMPT = (
    "You are an assistant that completes the user's request by calling tools.\n"
    "Tools:\n{signatures}\n"
    "To call a tool, write a JSON object inside <tool_call></tool_call> tags:\n"
    '<tool_call>\n{{"name": "<function-name>", "arguments": {{"<arg>": <value>}}}}\n</tool_call>\n'
    "When you are done, answer in plain text."
)

#: The Hermes tool block of the Qwen2.5/Qwen3 chat templates, for templates without tools.
HERMES_TOOLS_BLOCK = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{functions}\n</tools>\n\n"
    "For each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{{"name": <function-name>, "arguments": <args-json-object>}}\n</tool_call>'
)


def describe_tools(tools: list[dict], tool_format: ToolFormat, style: ToolDocs = "full") -> str:
    """The tool list as text.

    ``full``: a JSON list of BFCL function docs (pythonic) or one JSON schema a
    line (hermes), as BFCL and the Qwen templates write them. ``compact``: one
    signature line per function with the first sentence of its description,
    about a quarter of the tokens. ``signatures``: bare signature lines.
    """
    if style != "full":
        return "\n".join(signature(t, describe=style == "compact") for t in tools)
    if tool_format == "pythonic":
        return json.dumps(tools, ensure_ascii=False)
    return "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)


def signature(tool: dict, describe: bool = True) -> str:
    """`name(a: string, b: integer = ...)`, then `` - First sentence of the description.`` when `describe`.

    Takes an OpenAI tool schema or a BFCL function doc; the one signature renderer of rods.
    """
    fn = tool.get("function", tool)
    params = fn.get("parameters") or {}
    required = set(params.get("required", []))
    parts = []
    for name, spec in (params.get("properties") or {}).items():
        kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
        parts.append(f"{name}: {kind}" + ("" if name in required else " = ..."))
    head = f"{fn['name']}({', '.join(parts)})"
    if not describe:
        return head
    description = " ".join(str(fn.get("description", "")).split())
    # BFCL's docs open with the class's blurb, then "Tool description: ...".
    description = description.split("Tool description:", 1)[-1].strip()
    first = re.split(r"(?<=[.!?])\s", description, maxsplit=1)[0][:160]
    return f"{head} - {first}"


def system_message(
    tools: list[dict],
    tool_format: ToolFormat,
    tools_in_prompt: bool,
    system_prompt: str | None = None,
    tool_docs: ToolDocs = "full",
) -> dict:
    """The episode's system message (with ``signatures``, always the short signatures prompt)."""
    described = describe_tools(tools, tool_format, tool_docs)
    if tool_docs == "signatures":
        return {"role": "system", "content": SIGNATURES_SYSTEM_PROMPT.format(signatures=described)}
    if tool_format == "pythonic":
        base = system_prompt if system_prompt is not None else BFCL_PYTHONIC_PROMPT
        if tool_docs == "compact":
            base = base.replace("functions in json format", "functions")
        if "{functions}" in base:
            return {"role": "system", "content": base.replace("{functions}", described)}
        return {
            "role": "system",
            "content": base + "\n\nHere is a list of functions that you can invoke.\n" + described,
        }
    content = system_prompt if system_prompt is not None else DEFAULT_SYSTEM_PROMPT
    if tools_in_prompt:
        content += "\n\n" + HERMES_TOOLS_BLOCK.format(functions=described)
    return {"role": "system", "content": content}


def reveal_message(
    new_tools: list[dict], tool_format: ToolFormat, tools_in_prompt: bool, tool_docs: ToolDocs = "full"
) -> dict:
    """The user message of a reveal turn (BFCL's text; prefixed with the new tools when in the prompt)."""
    if not tools_in_prompt:
        return {"role": "user", "content": REVEAL_MESSAGE}
    return {"role": "user", "content": describe_tools(new_tools, tool_format, tool_docs) + "\n" + REVEAL_MESSAGE}

