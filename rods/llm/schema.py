"""JSON extraction and validation for model replies.

Model output is untrusted text: weak models wrap JSON in prose or Markdown
fences, truncate it, or return the wrong shape. This module finds the JSON value
in a reply and checks it against a JSON Schema (the subset structured-output
servers use) or a pydantic model, returning a short, human-readable error that
the repair loop sends back to the model.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


class JSONReplyError(ValueError):
    """The reply holds no JSON value, or one that does not match the schema."""


def extract_json(text: str) -> Any:
    """Return the first JSON object or array in ``text``.

    Tries the whole text, then fenced blocks, then the first position where a
    ``{`` or ``[`` starts a complete JSON value.

    Raises:
        JSONReplyError: no JSON value could be decoded.
    """
    stripped = text.strip()
    if not stripped:
        raise JSONReplyError("the reply is empty; expected a JSON value")
    try:
        return json.loads(stripped)
    except json.JSONDecodeError as first:
        error = first
    for block in _FENCE.findall(text):
        try:
            return json.loads(block.strip())
        except json.JSONDecodeError:
            pass
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "{[":
            try:
                value, _ = decoder.raw_decode(text, i)
                return value
            except json.JSONDecodeError:
                continue
    raise JSONReplyError(f"the reply is not valid JSON: {error.msg} at line {error.lineno} column {error.colno}")


def schema_of(spec: dict | type[BaseModel] | None) -> dict | None:
    """The JSON Schema dict for ``spec`` (a schema dict or a pydantic model class)."""
    if spec is None:
        return None
    if isinstance(spec, type) and issubclass(spec, BaseModel):
        return spec.model_json_schema()
    if isinstance(spec, dict):
        return spec
    raise TypeError(f"json_schema must be a dict or a pydantic model class, not {type(spec).__name__}")


def validate(value: Any, spec: dict | type[BaseModel]) -> Any:
    """Check ``value`` against ``spec``; return the value (a model instance for pydantic).

    Raises:
        JSONReplyError: with every mismatch found (at most five), each naming its path.
    """
    if isinstance(spec, type) and issubclass(spec, BaseModel):
        try:
            return spec.model_validate(value)
        except ValidationError as exc:
            parts = [f"{'.'.join(map(str, e['loc'])) or '$'}: {e['msg']}" for e in exc.errors()[:5]]
            raise JSONReplyError("; ".join(parts)) from None
    errors: list[str] = []
    _check(value, spec, "$", spec, errors)
    if errors:
        raise JSONReplyError("; ".join(errors[:5]))
    return value


def _resolve(schema: dict, root: dict) -> dict:
    ref = schema.get("$ref")
    if not ref:
        return schema
    if not ref.startswith("#/"):
        raise JSONReplyError(f"unsupported $ref {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part]
    return _resolve(node, root)


def _is_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _TYPES.get(name, (object,)))


def _check(value: Any, schema: Any, path: str, root: dict, errors: list[str]) -> None:  # noqa: C901
    """Validate the common JSON Schema keywords (a subset; unknown keywords pass)."""
    if not isinstance(schema, dict) or len(errors) >= 5:
        return
    schema = _resolve(schema, root)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            if not any(_matches(value, s, root) for s in schema[key]):
                errors.append(f"{path}: matches none of the allowed shapes")
            return
    for sub in schema.get("allOf", []):
        _check(value, sub, path, root, errors)
    if "const" in schema and value != schema["const"]:
        errors.append(f"{path}: must be {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{path}: {value!r} is not one of {schema['enum']!r}")
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_is_type(value, k) for k in kinds):
            errors.append(f"{path}: expected {' or '.join(kinds)}, got {type(value).__name__}")
            return
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                errors.append(f"{path}: missing required key {name!r}")
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            if name in props:
                _check(item, props[name], f"{path}.{name}", root, errors)
            elif extra is False:
                errors.append(f"{path}: unexpected key {name!r}")
            elif isinstance(extra, dict):
                _check(item, extra, f"{path}.{name}", root, errors)
    elif isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            errors.append(f"{path}: needs at least {schema['minItems']} items, got {len(value)}")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{path}: allows at most {schema['maxItems']} items, got {len(value)}")
        if isinstance(schema.get("items"), dict):
            for i, item in enumerate(value):
                _check(item, schema["items"], f"{path}[{i}]", root, errors)
    elif isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append(f"{path}: string shorter than {schema['minLength']}")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{path}: string longer than {schema['maxLength']}")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{path}: {value} is below the minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            errors.append(f"{path}: {value} is above the maximum {schema['maximum']}")


def _matches(value: Any, schema: Any, root: dict) -> bool:
    errs: list[str] = []
    _check(value, schema, "$", root, errs)
    return not errs
