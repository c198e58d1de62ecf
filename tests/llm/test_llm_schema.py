"""JSON extraction and validation of untrusted model replies."""

import pytest
from pydantic import BaseModel

from rods.llm.schema import JSONReplyError, extract_json, schema_of, validate

SCHEMA = {
    "type": "object",
    "properties": {
        "turns": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "mode": {"enum": ["a", "b"]},
        "n": {"type": "integer", "minimum": 0},
    },
    "required": ["turns"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"a": 1}', {"a": 1}),
        ('Sure! ```json\n{"a": [1, 2]}\n``` hope it helps', {"a": [1, 2]}),
        ('The plan is {"a": {"b": null}} and more {"c": 2}', {"a": {"b": None}}),
        ("  [1, 2, 3]  ", [1, 2, 3]),
        ('broken {"a": 1 then {"b": 2}', {"b": 2}),
    ],
)
def test_extract_json_finds_the_value(text, expected):
    assert extract_json(text) == expected


@pytest.mark.parametrize("text", ["", "   ", "no json here", '{"a": 1', "{'a': 1}"])
def test_extract_json_rejects_text_without_json(text):
    with pytest.raises(JSONReplyError):
        extract_json(text)


def test_validate_accepts_a_matching_value():
    value = {"turns": ["x", "y"], "mode": "a", "n": 3}
    assert validate(value, SCHEMA) is value


@pytest.mark.parametrize(
    "value, fragment",
    [
        ({}, "missing required key 'turns'"),
        ({"turns": []}, "at least 1"),
        ({"turns": [1]}, "$.turns[0]: expected string"),
        ({"turns": ["x"], "mode": "c"}, "'c' is not one of"),
        ({"turns": ["x"], "n": -1}, "below the minimum"),
        ({"turns": ["x"], "n": True}, "expected integer"),
        ({"turns": ["x"], "extra": 1}, "unexpected key 'extra'"),
        ([], "expected object"),
    ],
)
def test_validate_names_the_fault(value, fragment):
    with pytest.raises(JSONReplyError, match=None) as info:
        validate(value, SCHEMA)
    assert fragment in str(info.value)


class Verdict(BaseModel):
    passed: bool
    reason: str


def test_validate_with_a_pydantic_model_and_refs():
    assert validate({"passed": True, "reason": "ok"}, Verdict) == Verdict(passed=True, reason="ok")
    with pytest.raises(JSONReplyError, match="reason"):
        validate({"passed": True}, Verdict)
    # A schema with $defs/$ref, as pydantic writes nested models.
    class Report(BaseModel):
        verdicts: list[Verdict]

    schema = schema_of(Report)
    assert "$defs" in schema
    validate({"verdicts": [{"passed": False, "reason": "r"}]}, schema)
    with pytest.raises(JSONReplyError, match=r"verdicts\[0\]"):
        validate({"verdicts": [{"passed": "no"}]}, schema)


def test_schema_of_rejects_other_types():
    with pytest.raises(TypeError, match="json_schema"):
        schema_of("object")
