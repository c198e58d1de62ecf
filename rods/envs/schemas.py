"""Tool schemas: BFCL's function docs and the OpenAI "tools" JSON built from them.

The docs are read from the installed `bfcl-eval` package
(`data/multi_turn_func_doc/*.json`), never copied into this repository.
BFCL writes Python-ish types (`dict`, `float`, `tuple`, `any`); they are mapped
to JSON-schema types the way BFCL's own OpenAI handler does.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from functools import cache
from typing import Any

from rods.envs.protocol import ToolSpec
from rods.tasks.bfcl import API_CLASS_FILES
from rods.tasks.model import MCP_MANIFEST_SUFFIXES

#: API class -> its function-doc file in `data/multi_turn_func_doc/`.
DOC_FILES = {cls: f"{stem}.json" for cls, stem in API_CLASS_FILES.items()}

#: BFCL's type names -> JSON-schema types (BFCL's GORILLA_TO_OPENAPI).
JSON_TYPES = {
    "integer": "integer", "number": "number", "float": "number", "string": "string",
    "boolean": "boolean", "bool": "boolean", "array": "array", "list": "array",
    "dict": "object", "object": "object", "tuple": "array", "any": "string",
    "byte": "integer", "short": "integer", "long": "integer", "double": "number",
    "char": "string", "ArrayList": "array", "Array": "array", "HashMap": "object",
    "Hashtable": "object", "Queue": "array", "Stack": "array", "Any": "string",
    "String": "string", "Bigint": "integer",
}


@cache
def _docs() -> dict[str, tuple[dict[str, Any], ...]]:
    from rods.tasks.bfcl import bfcl_data_dir

    folder = bfcl_data_dir() / "multi_turn_func_doc"
    out = {}
    for cls, name in DOC_FILES.items():
        with (folder / name).open(encoding="utf-8") as fh:
            out[cls] = tuple(json.loads(line) for line in fh if line.strip())
    return out


@cache
def _environment_docs(key: str) -> tuple[dict[str, Any], ...]:
    """A non-BFCL environment's tools as function docs: a Python class's from its signatures and
    docstrings, a protocol environment's (MCP, `Environment` subclass) from its `tools()`."""
    from rods.envs.classes import api_class, is_replayed
    from rods.envs.python import tool_docs
    from rods.envs.replayed import tool_specs_of

    if is_replayed(key):
        return tuple(
            {"name": s.name, "description": s.description, "parameters": dict(s.parameters), "effect": s.effect}
            for s in tool_specs_of(key)
        )
    return tuple(tool_docs(api_class(key)))


def function_docs(classes: Iterable[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """Class -> function docs (deep copies), for the given classes or BFCL's eight.

    A BFCL class's docs are BFCL's own; a Python class's come from its methods
    (`rods.envs.python.tool_docs`, with each tool's declared "effect").
    """
    docs = _docs()
    wanted = list(classes) if classes is not None else list(docs)
    unknown = [c for c in wanted if c not in docs and ":" not in c and not c.endswith(MCP_MANIFEST_SUFFIXES)]
    if unknown:
        raise ValueError(f"unknown API class(es) {unknown}; expected some of {sorted(docs)} or 'module:Class'")
    return {c: copy.deepcopy(list(docs[c] if c in docs else _environment_docs(c))) for c in wanted}


def function_names(classes: Iterable[str]) -> list[str]:
    """The documented function names of the given classes, in doc order."""
    return [doc["name"] for docs in function_docs(classes).values() for doc in docs]


def _to_json_schema(schema: Any) -> Any:
    if isinstance(schema, dict):
        out = {k: _to_json_schema(v) for k, v in schema.items() if k not in ("type", "properties")}
        if "type" in schema:
            kind = schema["type"]
            out["type"] = JSON_TYPES.get(kind, kind) if isinstance(kind, str) else kind
        if "properties" in schema:
            out["properties"] = {name: _to_json_schema(p) for name, p in schema["properties"].items()}
        return out
    if isinstance(schema, list):
        return [_to_json_schema(s) for s in schema]
    return schema


def tool_schema(doc: dict[str, Any]) -> dict[str, Any]:
    """One BFCL function doc as an OpenAI tool (`{"type": "function", "function": {...}}`)."""
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
