"""Finding JSON in untrusted model replies and checking it against reply models."""

from typing import Literal

import pytest
from pydantic import BaseModel, Field

from rods.llm.schema import JSONReplyError, extract_json, schema_of, validate


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


class Turns(BaseModel):
    turns: list[str] = Field(min_length=1)
    mode: Literal["a", "b"] = "a"
    n: int = Field(default=0, ge=0)


def test_validate_returns_the_model_instance():
    assert validate({"turns": ["x", "y"], "mode": "b", "n": 3}, Turns) == Turns(turns=["x", "y"], mode="b", n=3)


@pytest.mark.parametrize(
    "value, fragment",
    [
        ({}, "turns: Field required"),
        ({"turns": []}, "turns: List should have at least 1 item"),
        ({"turns": [1]}, "turns[0]: Input should be a valid string"),
        ({"turns": ["x"], "mode": "c"}, "mode: Input should be 'a' or 'b'"),
        ({"turns": ["x"], "n": -1}, "n: Input should be greater than or equal to 0"),
        # JSON types are checked strictly: no bool for an integer, no digit string for one
        ({"turns": ["x"], "n": True}, "n: Input should be a valid integer"),
        ({"turns": ["x"], "n": "3"}, "n: Input should be a valid integer"),
        ([], "$: Input should be a valid dictionary"),
    ],
)
def test_validate_names_the_fault_by_its_path(value, fragment):
    with pytest.raises(JSONReplyError) as info:
        validate(value, Turns)
    assert fragment in str(info.value)


def test_nested_models_report_nested_paths():
    class Verdict(BaseModel):
        passed: bool
        reason: str

    class Report(BaseModel):
        verdicts: list[Verdict]

    assert "$defs" in schema_of(Report)  # pydantic writes nested models as $refs; servers get that schema
    assert validate({"verdicts": [{"passed": False, "reason": "r"}]}, Report).verdicts[0].reason == "r"
    with pytest.raises(JSONReplyError, match=r"verdicts\[0\]\.passed: .*; verdicts\[0\]\.reason: Field required"):
        validate({"verdicts": [{"passed": "no"}]}, Report)


def test_at_most_five_faults_are_reported():
    class Many(BaseModel):
        a: int
        b: int
        c: int
        d: int
        e: int
        f: int

    with pytest.raises(JSONReplyError) as info:
        validate({}, Many)
    assert str(info.value).count("Field required") == 5


@pytest.mark.parametrize("spec", ["object", {"type": "object"}, None])
def test_schema_of_takes_only_reply_models(spec):
    with pytest.raises(TypeError, match="json_schema must be a pydantic model"):
        schema_of(spec)
