"""Environments: safe, isolated, executable tool surfaces for rollouts.

`Environment` is the contract every environment keeps (`rods.envs.protocol`);
`ToolEnvironment` runs one rollout's calls on its own instances of the BFCL API
classes or of a user's Python class (`rods.envs.python`, `@tool`);
`rods.envs.calls` parses model text into calls without `eval`;
`rods.envs.schemas` turns BFCL's function docs into OpenAI tool schemas.
"""

from rods.envs.calls import CallParseError, ToolCall, format_call, parse_call_text, parse_calls, tool_call_from_json
from rods.envs.classes import CLASS_MODULES, api_class, method_owners, public_methods
from rods.envs.environment import (
    BLOCKED_NAMES,
    ERROR_PREFIX,
    EnvTemplate,
    ToolEnvironment,
    format_result,
    public_state,
)
from rods.envs.protocol import Environment, ToolSpec
from rods.envs.python import tool
from rods.envs.schemas import function_docs, function_names, task_tool_schemas, tool_schemas, tool_specs

__all__ = [
    "BLOCKED_NAMES",
    "CLASS_MODULES",
    "ERROR_PREFIX",
    "EnvTemplate",
    "Environment",
    "ToolSpec",
    "CallParseError",
    "ToolCall",
    "api_class",
    "public_methods",
    "ToolEnvironment",
    "format_call",
    "format_result",
    "function_docs",
    "function_names",
    "method_owners",
    "parse_call_text",
    "parse_calls",
    "public_state",
    "task_tool_schemas",
    "tool_call_from_json",
    "tool",
    "tool_schemas",
    "tool_specs",
]
