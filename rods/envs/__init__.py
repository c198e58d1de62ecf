"""Environments: safe, isolated, executable tool surfaces for rollouts.

`Environment` is the contract every environment keeps (`rods.envs.protocol`);
each family of environments is a domain in its own folder (`bfcl/`, `python/`,
`tau2/`, `mcp/`) whose hooks the layers above read (`rods.envs.domain`);
`ToolEnvironment` runs one rollout's calls on its own instances of a task's
classes, whatever their domain; `rods.envs.calls` parses model text into calls
without `eval`; `rods.envs.schemas` turns function docs into OpenAI tool schemas.
"""

from rods.envs.calls import CallParseError, ToolCall, format_call, parse_call_text, parse_calls, tool_call_from_json
from rods.envs.classes import api_class, method_owners, public_methods
from rods.envs.domain import Domain, standard_error
from rods.envs.domains import domain_of, domain_of_task
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
    "Domain",
    "domain_of",
    "domain_of_task",
    "standard_error",
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
