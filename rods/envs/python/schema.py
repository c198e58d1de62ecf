"""A Python class's tools as function docs: names, type hints and docstrings give the schema."""

from __future__ import annotations

import inspect
import json
import typing
from typing import Any

from rods.envs.python.classes import declared_effect, tool_methods


def tool_docs(klass: type) -> list[dict[str, Any]]:
    """The tools of a class as function docs (BFCL's doc shape, JSON-schema types, plus "effect")."""
    return [_tool_doc(klass, name) for name in tool_methods(klass)]


def _tool_doc(klass: type, name: str) -> dict[str, Any]:
    from pydantic import TypeAdapter

    fn = inspect.getattr_static(klass, name)
    doc = _parse_docstring(fn)
    try:
        hints = typing.get_type_hints(fn)
    except Exception as err:  # an unresolvable annotation is the class author's error: name it
        raise ValueError(f"{klass.__name__}.{name}: cannot read its type hints: {err}") from err
    properties: dict[str, Any] = {}
    required: list[str] = []
    defs: dict[str, Any] = {}
    open_names = False  # `**kwargs`: names beyond the listed ones are accepted
    for param in list(inspect.signature(fn).parameters.values())[1:]:  # skip self
        open_names = open_names or param.kind == param.VAR_KEYWORD
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        schema: dict[str, Any] = {}
        if param.name in hints:
            schema = TypeAdapter(hints[param.name]).json_schema(ref_template="#/$defs/{model}")
            defs.update(schema.pop("$defs", {}))
        if doc["params"].get(param.name):
            schema["description"] = doc["params"][param.name]
        if param.default is param.empty:
            required.append(param.name)
        else:
            schema.setdefault("default", _json_default(param.default))
        properties[param.name] = schema
    parameters: dict[str, Any] = {"type": "object", "properties": properties, "required": required}
    if open_names:
        parameters["additionalProperties"] = True
    if defs:
        parameters["$defs"] = defs
    return {
        "name": name,
        "description": doc["description"] or name.replace("_", " "),
        "parameters": parameters,
        "effect": declared_effect(fn),
    }


def _parse_docstring(fn: Any) -> dict[str, Any]:
    import docstring_parser

    parsed = docstring_parser.parse(inspect.getdoc(fn) or "")
    text = "\n\n".join(p for p in (parsed.short_description, parsed.long_description) if p)
    return {"description": text.strip(), "params": {p.arg_name: (p.description or "").strip() for p in parsed.params}}


def _json_default(value: Any) -> Any:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


