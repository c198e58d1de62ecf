"""Tool schemas: each class's function docs (from its domain) and the OpenAI "tools" JSON built from them.

Some docs write Python-ish types (BFCL's: `dict`, `float`, `tuple`, `any`);
they are mapped to JSON-schema types the way BFCL's own OpenAI handler does.
The schema a gold call's arguments are checked against (`argument_schema`,
`rods.envs.validation`) maps them alike, except `any`, which accepts anything
there (the model is shown "string", as BFCL's handler shows it).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from functools import cache
from typing import Any

from rods.envs.domains import domain_of
from rods.envs.protocol import ToolSpec

#: Python-ish type names -> JSON-schema types (as BFCL's GORILLA_TO_OPENAPI maps them).
JSON_TYPES = {
    "integer": "integer", "number": "number", "float": "number", "string": "string",
    "boolean": "boolean", "bool": "boolean", "array": "array", "list": "array",
    "dict": "object", "object": "object", "tuple": "array", "any": "string",
    "byte": "integer", "short": "integer", "long": "integer", "double": "number",
    "char": "string", "ArrayList": "array", "Array": "array", "HashMap": "object",
    "Hashtable": "object", "Queue": "array", "Stack": "array", "Any": "string",
    "String": "string", "Bigint": "integer",
}
#: Python-ish type names that accept any value: unconstrained in `argument_schema`.
OPEN_TYPES = frozenset({"any", "Any"})


def function_docs(classes: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """Class -> function docs (deep copies), each from the class's domain (`Domain.tool_docs`):
    BFCL's own docs, a Python class's from its methods (with each tool's declared "effect"),
    a protocol environment's from its `tools()`."""
    return {c: copy.deepcopy(list(_docs_of(c))) for c in classes}


@cache
def _docs_of(key: str) -> tuple[dict[str, Any], ...]:
    return tuple(domain_of(key).tool_docs(key))


def function_names(classes: Iterable[str]) -> list[str]:
    """The documented function names of the given classes, in doc order."""
    return [doc["name"] for docs in function_docs(classes).values() for doc in docs]


def _to_json_schema(schema: Any, open_any: bool = False) -> Any:
    if isinstance(schema, dict):
        out = {k: _to_json_schema(v, open_any) for k, v in schema.items() if k not in ("type", "properties")}
        if "type" in schema:
            kind = schema["type"]
            if isinstance(kind, str) and not (open_any and kind in OPEN_TYPES):
                out["type"] = JSON_TYPES.get(kind, kind)
            elif isinstance(kind, list) and not (open_any and OPEN_TYPES & set(map(str, kind))):
                out["type"] = [JSON_TYPES.get(k, k) if isinstance(k, str) else k for k in kind]
            elif not isinstance(kind, (str, list)):
                out["type"] = kind
        if "properties" in schema:
            properties = schema["properties"]
            out["properties"] = ({name: _to_json_schema(p, open_any) for name, p in properties.items()}
                                 if isinstance(properties, dict) else properties)
        return out
    if isinstance(schema, list):
        return [_to_json_schema(s, open_any) for s in schema]
    return schema


def argument_schema(doc: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema (type "object") a call's arguments are checked against: the doc's parameters with
    Python-ish types mapped as for the model, except `any`, which accepts any value."""
    params = _to_json_schema(doc.get("parameters") or {"type": "dict", "properties": {}}, open_any=True)
    params["type"] = "object"
    params.setdefault("properties", {})
    return params


def tool_schema(doc: dict[str, Any]) -> dict[str, Any]:
    """One function doc as an OpenAI tool (`{"type": "function", "function": {...}}`)."""
    params = _to_json_schema(doc.get("parameters", {"type": "dict", "properties": {}}))
    params["type"] = "object"
    params.setdefault("properties", {})
    return {
        "type": "function",
        "function": {"name": doc["name"], "description": doc.get("description", ""), "parameters": params},
    }


def tool_schemas(classes: Iterable[str], exclude: Iterable[str] = ()) -> list[dict[str, Any]]:
    """OpenAI tools for the functions of `classes`, minus `exclude` (e.g. held-out functions)."""
    skip = set(exclude)
    return [tool_schema(doc) for docs in function_docs(classes).values() for doc in docs if doc["name"] not in skip]


def task_tool_schemas(task: Any, turn: int = 0) -> list[dict[str, Any]]:
    """The tools a model sees at `turn` of a task: its classes' functions minus those still held out."""
    return tool_schemas(task.involved_classes, exclude=task.held_out_functions(turn))


def tool_specs(classes: Iterable[str], exclude: Iterable[str] = ()) -> list[ToolSpec]:
    """The tools of `classes` as protocol `ToolSpec`s (effect: declared, else "unknown")."""
    skip = set(exclude)
    return [
        ToolSpec(
            name=doc["name"],
            description=doc.get("description", ""),
            parameters=tool_schema(doc)["function"]["parameters"],
            effect=doc.get("effect", "unknown"),
            group=cls,
        )
        for cls, docs in function_docs(classes).items()
        for doc in docs
        if doc["name"] not in skip
    ]
