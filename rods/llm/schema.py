"""Finding and validating the JSON in model replies.

Model output is untrusted text: weak models wrap JSON in prose or Markdown
fences, truncate it, or return the wrong shape. :func:`extract_json` finds the
JSON value in a reply; :func:`validate` checks it against the pydantic model of
the expected reply (strictly, as JSON types: ``"3"`` is no integer, ``1`` no
boolean) and turns pydantic's errors into the short, human-readable message
the repair loop sends back to the model. The JSON Schema sent to servers is
the model's own (:func:`schema_of`), so what a constrained server enforces and
what we check cannot drift apart.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ValidationError

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)

#: The schema of a JSON-mode request: any JSON object.
ANY_OBJECT: dict[str, Any] = {"type": "object"}


class JSONReplyError(ValueError):
    """The reply holds no JSON value, or one that does not match the expected reply."""


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


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema of a reply model, as servers with structured output receive it."""
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(f"json_schema must be a pydantic model class, not {type(model).__name__}")
    return model.model_json_schema()


def validate(value: Any, model: type[BaseModel]) -> BaseModel:
    """Check ``value`` (decoded JSON) against ``model``; return the model instance.

    Raises:
        JSONReplyError: naming each mismatch (at most five) by its path, e.g.
            ``queries: List should have at least 3 items after validation, not 2``.
    """
    try:
        return model.model_validate(value, strict=True)
    except ValidationError as exc:
        parts = [f"{_path(e['loc'])}: {e['msg']}" for e in exc.errors()[:5]]
        raise JSONReplyError("; ".join(parts)) from None


def _path(loc: tuple[Any, ...]) -> str:
    """pydantic's location as a JSON path: ``verdicts.natural.pass``, ``queries[2]``, ``$`` for the root."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "$"


#: Longest free-text ``reason`` a reply model allows (characters): a short
#: bound keeps a grammar-constrained reply inside its ``max_tokens``.
MAX_REASON_CHARS = 300
#: Longest string value a reply may propose (an argument, a config value).
MAX_VALUE_CHARS = 100

#: Any scalar a reply may propose, strings bounded.
SCALAR: dict[str, Any] = {"anyOf": [{"type": "string", "maxLength": MAX_VALUE_CHARS}, {"type": "integer"},
                                    {"type": "number"}, {"type": "boolean"}]}


def like(value: Any, max_chars: int = MAX_VALUE_CHARS) -> dict[str, Any]:
    """JSON Schema of a value of `value`'s JSON type (for a reply that replaces it), strings bounded."""
    if isinstance(value, bool):
        return {"type": "boolean"}
    if isinstance(value, int):
        return {"type": "integer"}
    if isinstance(value, float):
        return {"type": "number"}
    if isinstance(value, str):
        return {"type": "string", "maxLength": max(max_chars, 2 * len(value))}
    if isinstance(value, (list, tuple)):
        return {"type": "array"}
    if isinstance(value, dict):
        return {"type": "object"}
    return {}


def closed_object(properties: dict[str, dict[str, Any]], required: list[str] | None = None) -> dict[str, Any]:
    """Schema of an object with exactly these optional (or `required`) keys: no other key is allowed.

    Used as ``json_schema_extra`` of a ``dict`` field: a constrained server can
    only write the listed keys; the field's own check stays as lenient as its
    type, so a server that ignores the schema still has its unknown keys
    counted by the stage rather than failing validation.
    """
    out: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        out["required"] = list(required)
    return out
