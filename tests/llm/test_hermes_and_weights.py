"""The Hermes tool-call format written and read back in one place; where model weights are found."""

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from rods.llm.hermes import tool_call_block, tool_call_bodies, without_tool_calls
from rods.llm.local_backend import _tool_calls
from rods.llm.weights import EMBEDDED, weights_location
from rods.rollout import parse_tool_calls

#: Public identifiers (the rollout parser refuses private names, as it should).
NAMES = st.builds(str.__add__, st.sampled_from("abcdefghij"), st.text(alphabet="abcxyz_019", max_size=9))
SCALARS = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=12)
VALUES = SCALARS | st.lists(SCALARS, max_size=3) | st.dictionaries(NAMES, SCALARS, max_size=3)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(NAMES, st.dictionaries(NAMES, VALUES, max_size=4)), min_size=1, max_size=4),
       st.text(alphabet=st.characters(blacklist_characters="<>"), max_size=20))
def test_written_blocks_are_found_by_every_reader(calls, prose):
    text = prose + "\n" + "\n".join(tool_call_block(name, args) for name, args in calls)
    assert [json.loads(b) for b in tool_call_bodies(text)] == [{"name": n, "arguments": a} for n, a in calls]
    assert without_tool_calls(text).strip() == prose.strip()
    parsed = parse_tool_calls(text)
    assert [(c.name, c.arguments) for c in parsed.calls] == calls and not parsed.errors
    found = _tool_calls(text)
    assert [(c["name"], json.loads(c["arguments"])) for c in found] == calls


def test_an_unclosed_last_block_is_still_read():
    text = '<tool_call>\n{"name": "ls", "arguments": {"a": true}}'
    assert [json.loads(b)["name"] for b in tool_call_bodies(text)] == ["ls"]
    assert [c["name"] for c in _tool_calls(text)] == ["ls"]


def test_weights_location(tmp_path):
    folder, gguf = weights_location(EMBEDDED)
    assert folder and gguf is not None and gguf.endswith(".gguf")
    gguf_file = tmp_path / "m.gguf"
    with pytest.raises(FileNotFoundError, match="m.gguf does not exist"):
        weights_location(gguf_file)
    gguf_file.write_bytes(b"GGUF")
    assert weights_location(gguf_file) == (str(tmp_path), "m.gguf")
    assert weights_location(tmp_path / "model-dir") == (str(tmp_path / "model-dir"), None)
    assert weights_location("org/model", "w.gguf") == ("org/model", "w.gguf")
