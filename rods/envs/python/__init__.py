"""The Python domain: a user's class as an environment (docs/design.md §2.2).

`classes` loads a class and its instances (`@tool`, `load_instance`), `schema`
turns its methods into tool docs, `running` runs a tool under a time limit and
turns results into text; `domain` holds the domain's hooks.
"""

from rods.envs.python.classes import (
    EFFECT_ATTRIBUTE,
    VOLATILE_ATTRIBUTE,
    constructor_parameters,
    declared_effect,
    load_class,
    load_instance,
    tool,
    tool_methods,
    volatile,
)
from rods.envs.python.running import (
    DEFAULT_TIME_LIMIT,
    ToolTimeout,
    call_with_time_limit,
    result_text,
    time_limit,
    to_json,
)
from rods.envs.python.schema import tool_docs

__all__ = [
    "DEFAULT_TIME_LIMIT",
    "EFFECT_ATTRIBUTE",
    "VOLATILE_ATTRIBUTE",
    "ToolTimeout",
    "call_with_time_limit",
    "constructor_parameters",
    "declared_effect",
    "load_class",
    "load_instance",
    "result_text",
    "time_limit",
    "to_json",
    "tool",
    "tool_docs",
    "tool_methods",
    "volatile",
]
