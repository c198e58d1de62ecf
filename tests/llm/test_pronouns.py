"""A thing the previous step of a sentence was about is said again as "it", and only then."""

import pytest

from rods.envs.domains import domain_of
from rods.llm.pronouns import it_for_repeats
from rods.llm.template import goal, request
from rods.synth.api_graph import function_docs
from rods.tasks.bfcl import API_CLASSES

BFCL = domain_of("bfcl")
DOCS = function_docs(API_CLASSES)


def _call(index, function, changed=False, bound=(), phrase=True, nouns=None, **arguments):
    params = dict.fromkeys(DOCS.get(function, {}).get("parameters", {}).get("properties", {}) or arguments)
    call = {"index": index, "function": function, "changed": changed, "params": params, "arguments": arguments,
            "bound": list(bound), "description": DOCS.get(function, {}).get("description", "")}
    if phrase:
        call.update(phrase=BFCL.outcome_phrases()[function], nouns=BFCL.nouns(), forms=BFCL.forms())
    if nouns:
        call["nouns"] = nouns
    return call


def _library(index, function, changed, **arguments):
    return _call(index, function, changed=changed, phrase=False, nouns={"book_id": "book"}, **arguments)


def test_a_book_looked_up_and_then_returned_is_named_once():
    asked = request({"kind": "calls", "calls": [_library(0, "book_details", False, book_id="bk-464"),
                                                _library(1, "return_book", True, book_id="bk-464")]})
    assert asked.count("'bk-464'") == 1 and asked.endswith("and then return it."), asked


FILE_READS = ["cat", "sort", "tail", "wc"]


@pytest.mark.parametrize("second", FILE_READS)
def test_a_file_made_and_then_used_in_one_sentence_is_it_for_every_file_tool(second):
    """Over the file tools: the file a `touch` created is named once; the second step still asks for its call."""
    made = _call(0, "touch", changed=True, file_name="notes.md")
    used = _call(1, second, changed=second == "sort", file_name="notes.md")
    asked = request({"kind": "calls", "calls": [made, used]})
    alone = request({"kind": "calls", "calls": [used]})
    assert asked.count("'notes.md'") == 1 and " it" in asked, asked
    assert alone.count("'notes.md'") == 1  # said in full when it is the sentence's only step


def test_a_folder_made_and_then_entered_is_it_and_the_goal_says_so_too():
    made, entered = _call(1, "mkdir", changed=True, dir_name="captions"), _call(2, "cd", folder="captions")
    first = _call(0, "cat", file_name="a.txt")
    assert request({"kind": "calls", "calls": [made, entered]}) == \
        "Please create a folder called 'captions' and then go into it."
    stated = goal([{"kind": "calls", "calls": [first]}, {"kind": "calls", "calls": [made, entered]}])
    assert stated.count("'captions'") == 1 and stated.endswith("go into it."), stated


def test_no_it_where_it_could_mean_another_thing_a_person_or_a_place():
    moved = _call(0, "mv", changed=True, source="a.txt", destination="b.txt")
    written = _call(1, "echo", changed=True, content="hello there", file_name="b.txt")
    asked = request({"kind": "calls", "calls": [moved, written]})
    assert asked.count("'b.txt'") == 2, asked  # the move named two files: "it" could be either
    added = _call(0, "add_contact", changed=True, user_name="Ines")
    sent = _call(1, "send_message", changed=True, receiver_id="Ines", message="see you at noon")
    assert "to it" not in request({"kind": "calls", "calls": [added, sent]})


def test_steps_that_do_not_match_their_calls_are_left_as_they_are():
    steps = ["look up book 'b1'", "return book 'b1'"]
    calls = [_library(0, "book_details", False, book_id="b1")]
    assert it_for_repeats(steps, calls) == steps
    two = [_library(0, "book_details", False, book_id="b1"), _library(1, "return_book", True, book_id="b1")]
    assert it_for_repeats(steps, two) == ["look up book 'b1'", "return it"]
    bound = [_library(0, "book_details", False, book_id="b1"),
             {**_library(1, "return_book", True, book_id="b1"), "bound": ["book_id"]}]
    assert it_for_repeats(steps, bound) == steps  # a value from a result is said by the phrase ("that book")


def test_a_value_from_an_earlier_result_drops_the_called_of_a_naming_phrase():
    """"remove that empty folder" (not "remove the empty folder called that folder"); a pick is said alone."""
    rmdir = _call(1, "rmdir", changed=True, bound=["dir_name"], dir_name="old")
    assert request({"kind": "calls", "calls": [rmdir]}) == "Please remove that empty folder."
    picked = {**rmdir, "picks": {"dir_name": [0, 3]}}
    assert request({"kind": "calls", "calls": [picked]}) == "Please remove the first of those folders."


def test_a_goal_says_a_long_text_is_written_and_its_turn_says_which():
    """"I want to write some text into 'notes.md' and find out how many words there are in it", not the whole text twice
    (a goal reciting the steps read as a template to the fifteenth blind reader)."""
    text = "Study diligently, practice programming, master algorithms."
    made = _call(0, "touch", changed=True, file_name="notes.md")
    written = _call(1, "echo", changed=True, content=text, file_name="notes.md")
    counted = _call(2, "wc", file_name="notes.md", mode="w")
    turns = [{"kind": "calls", "calls": [made]}, {"kind": "calls", "calls": [written]},
             {"kind": "calls", "calls": [counted]}]
    stated = goal(turns)
    assert "some text" in stated and text not in stated, stated
    assert stated.endswith("find out how many words there are in it."), stated
    assert text in request(turns[1])
    short = goal([turns[0], {"kind": "calls", "calls": [{**written, "arguments": {"content": "Hello",
                                                                                    "file_name": "notes.md"}}]},
                  turns[2]])
    assert "'Hello'" in short, short  # a word or two is said as it is
