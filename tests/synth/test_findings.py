"""What a read's result tells (rods.synth.findings): nothing, no match, or a thing the task just made."""

import pytest

from rods.envs.calls import ToolCall
from rods.synth.findings import answers_nothing, echoes, finds_nothing, is_empty, reads_what_it_made, tells_nothing


@pytest.mark.parametrize(("result", "empty"), [
    ("", True), ("None", True), ("[]", True), ("{}", True),
    ('{"file_content": ""}', True), ('{"diff_lines": ""}', True), ('{"result": {"text": "", "note": null}}', True),
    ('{"matching_lines": []}', False), ('{"result": {"items": [], "note": null}}', False),
    ('{"file_content": "a"}', False), ('{"count": 0}', False), ('{"ok": false}', False), ('["", "x"]', False),
    ("0", False), ("some text", False),
])
def test_a_result_whose_every_field_is_empty_holds_nothing(result, empty):
    assert is_empty(result) is empty


@pytest.mark.parametrize("result, nothing", [
    ('{"matching_lines": []}', True), ('{"count": 0, "type": "lines"}', True), ("[]", True),
    ('{"file_content": ""}', True), ('{"matching_lines": ["a b"]}', False), ('{"count": 3, "type": "lines"}', False),
    ('{"id": "R1", "a": 1, "b": 2, "bags": 0}', False),  # a record with a zero in it answers its question
    ('{"ok": false}', False),
])
def test_what_finds_nothing(result, nothing):
    assert finds_nothing(result) is nothing


def test_a_read_of_a_thing_just_made_that_finds_nothing_is_pointless():
    touch, cd = ToolCall("touch", {"file_name": "a.log"}), ToolCall("cd", {"folder": "docs"})
    grep = ToolCall("grep", {"file_name": "a.log", "pattern": "x"})
    made = {"a.log": "/fs/root/a.log"}
    assert reads_what_it_made(grep, '{"matching_lines": []}', [(touch, True, made), (cd, True, {"docs": "/p"})])
    assert not reads_what_it_made(grep, '{"matching_lines": ["x y"]}', [(touch, True, made)])  # it found something
    write = ToolCall("echo", {"content": "x y", "file_name": "a.log"})
    assert not reads_what_it_made(grep, '{"matching_lines": []}', [(touch, True, made), (write, True, {})])
    assert not reads_what_it_made(grep, '{"matching_lines": []}', [(cd, True, {})])  # a file the task found
    assert not reads_what_it_made(grep, '{"matching_lines": []}', [(touch, False, made)])  # no change: not made
    # a copy made from it leaves it as empty as it was (the ninth blind read failed `wc` of such a file)
    cp = ToolCall("cp", {"source": "a.log", "destination": "b.log"})
    assert reads_what_it_made(grep, '{"matching_lines": []}', [(touch, True, made), (cp, True, {"b.log": "/p"})])


@pytest.mark.parametrize("result, nothing", [
    ('{"matches": []}', True), ("[]", True), ('{"count": 0}', True), ('""', True),
    ('{"title": "Soup", "text": "Leek soup", "tags": []}', False),  # a page with no tags answers
    ('{"count": 0, "type": "lines"}', False), ('{"matching_lines": ["a"]}', False),
])
def test_what_answers_nothing(result, nothing):
    assert answers_nothing(result) is nothing


def test_a_read_that_only_gives_back_its_own_arguments_tells_nothing():
    """`echo` of a text to the terminal (no file) repeats what the user said: a variant that calls it between a
    `cat` and a post of that text read as a pointless call in the blind reads."""
    echo = ToolCall("echo", {"content": "To be or not to be."})
    assert echoes(echo, '{"terminal_output": "To be or not to be."}')
    assert tells_nothing(echo, '{"terminal_output": "To be or not to be."}')
    assert not echoes(echo, '{"terminal_output": "something else"}')
    cat = ToolCall("cat", {"file_name": "a.txt"})
    assert not tells_nothing(cat, '{"file_content": "To be or not to be."}')  # a text the user did not say
    assert tells_nothing(cat, '{"file_content": ""}')  # nothing at all
    assert not echoes(ToolCall("pwd", {}), "None") and not echoes(cat, "{}")  # nothing to repeat: not an echo
    cd = ToolCall("cd", {"folder": "docs"})  # a name given back: the call moved somewhere
    assert not tells_nothing(cd, '{"current_working_directory": "docs"}')
