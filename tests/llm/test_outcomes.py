"""The template's phrasing with the BFCL domain's phrase table: every BFCL function asked for as an outcome,
never by its docs; any other tool phrased from its own name."""

import re

import pytest

from rods.envs.domains import domain_of
from rods.llm.outcomes import outcome as phrase_outcome, plural
from rods.synth.api_graph import describe, function_docs
from rods.synth.leak import leaks
from rods.tasks.bfcl import API_CLASSES

DOCS = function_docs(API_CLASSES)
BFCL = domain_of("bfcl")
OUTCOMES = BFCL.outcome_phrases()


def outcome(name, arguments, **kw):
    """One call phrased with the BFCL domain's hints, as the rewriter sends them."""
    return phrase_outcome(name, arguments, phrase=OUTCOMES.get(name), nouns=BFCL.nouns(), forms=BFCL.forms(), **kw)
SAMPLES = {"string": "Zqv{i}x", "integer": 7, "float": 3.5, "boolean": True, "array": ["Ab1", "Cd2"],
           "dict": {"priority": 2}}


def _arguments(name):
    props = DOCS[name].get("parameters", {}).get("properties", {})
    out = {}
    for i, (param, spec) in enumerate(props.items()):
        value = SAMPLES.get(spec.get("type"), "v")
        out[param] = value.format(i=i) if isinstance(value, str) else value
    return list(props), out


def _stems(text):
    return {w.rstrip("s")[:5] for w in re.findall(r"[a-z]{4,}", text.lower())}


def test_the_table_covers_exactly_the_128_functions():
    assert set(OUTCOMES) == set(DOCS) and len(DOCS) == 128


@pytest.mark.parametrize("name", sorted(DOCS))
def test_every_function_phrase_says_values_not_docs(name):
    params, arguments = _arguments(name)
    given = outcome(name, arguments, params=params)
    assert leaks(given, [name], API_CLASSES) is None, given
    for param, value in arguments.items():  # every supplied string value is said
        if isinstance(value, str) and param in OUTCOMES[name][0] + str(OUTCOMES[name][1]):
            assert value.lower() in given.lower(), (param, given)
    found = outcome(name, arguments, params=params, bound=params)  # all from earlier results
    assert leaks(found, [name], API_CLASSES) is None
    assert not any(isinstance(v, str) and v.lower() in found.lower() for v in arguments.values()), found
    # the judge's intent check can still tell which call a value-free query asks for
    assert _stems(describe(DOCS[name])) & _stems(found), found
    for param in params:  # a miss_param turn leaves that value out
        left = outcome(name, arguments, params=params, missing=param)
        value = arguments[param]
        if isinstance(value, str):
            assert value.lower() not in left.lower() and leaks(left, [name], API_CLASSES) is None


def test_an_unknown_function_gets_a_generic_phrase_without_parameter_names():
    text = phrase_outcome("reserve_table", {"restaurant_name": "Zuni", "party_size": 4},
                          params=["restaurant_name", "party_size"])
    # values said; parameter names only as plain words after their value, never as identifiers
    assert "Zuni" in text and "4" in text and "restaurant_name" not in text and "party_size" not in text
    assert leaks(text, ["reserve_table"], API_CLASSES) is None
    assert "reserve" in text and "table" in text


def test_a_tool_named_like_a_bfcl_function_outside_bfcl_is_phrased_from_its_own_words():
    """Without the domain's phrase and nouns (another domain's tool called `cat`), BFCL's wording never appears."""
    text = phrase_outcome("cat", {"name": "Ines Moreau"}, params=["name"], description="Adopt a cat for a person.")
    bfcl = outcome("cat", {"file_name": "notes.txt"}, params=["file_name"])
    assert "contents" in bfcl and "contents" not in text
    assert "company" not in phrase_outcome("add_member", {"name": "Ines Moreau"}, params=["name"], bound=["name"])


def test_generic_requests_say_people_places_and_dates_as_people_do():
    """Not "'Cyrus Zimmer' as the author": a person by name, places and dates with their prepositions."""
    by = phrase_outcome("search_books", {"author": "Cyrus Zimmer"}, params=["author"], effect="read")
    assert by == "search the books for the author named 'Cyrus Zimmer'"
    trip = phrase_outcome("search_direct_flight", {"origin": "ORD", "destination": "EWR", "date": "2024-05-19"},
                   params=["origin", "destination", "date"], effect="read")
    assert trip == "search for direct flights from 'ORD' to 'EWR' on '2024-05-19'"
    found = phrase_outcome("search_direct_flight", {"origin": "ORD", "destination": "EWR", "date": "2024-05-19"},
                    params=["origin", "destination", "date"], bound=["origin"], effect="read")
    assert found.startswith("search for direct flights from that origin to 'EWR'") and "ORD" not in found
    named = phrase_outcome("add_member", {"name": "Hana Sato"}, params=["name"], effect="write")
    assert named == "add the member 'Hana Sato'"
    for text in (by, trip, found):
        assert " as the " not in text
    bags = phrase_outcome("update_reservation_baggages", {"reservation_id": "R1", "total_baggages": 2,
                                                          "nonfree_baggages": 0}, effect="write",
                          params=["reservation_id", "total_baggages", "nonfree_baggages"])
    assert "2 total baggages and 0 nonfree baggages" in bags and " as the " not in bags, bags  # a count, said so
    # a thing handed to a person goes to them, not "for the member named ..."
    assert phrase_outcome("lend_book", {"book_id": "bk-1", "member": "Hana Sato"}, params=["book_id", "member"],
                          bound=["book_id"], effect="write") == "lend that book to 'Hana Sato'"
    assert phrase_outcome("return_book", {"book_id": "bk-1", "member": "Hana Sato"}, params=["book_id", "member"],
                          effect="write") == "return book 'bk-1' for the member named 'Hana Sato'"
    # a number after its noun ("for 18147 as the amount" read like a form's slot to the thirteenth blind reader)
    sent = phrase_outcome("send_certificate", {"amount": 604}, params=["amount"], effect="write")
    assert "for an amount of 604" in sent and " as the " not in sent, sent


def test_a_search_for_one_kind_of_thing_asks_for_several():
    found = phrase_outcome("search_onestop_flight", {"origin": "JFK", "destination": "SFO"},
                           params=["origin", "destination"], effect="read")
    assert found.startswith("search for onestop flights"), found
    moved = phrase_outcome("transfer_to_human_agents", {"summary": "Wants a refund."}, params=["summary"],
                           effect="read")
    assert moved.startswith("transfer to human agents"), moved  # a verb, though the tool changes nothing


def test_a_one_word_verb_says_its_value_right_after_it():
    text = phrase_outcome("calculate", {"expression": "2 * (350 - 104)"}, params=["expression"], effect="read")
    assert text == "calculate '2 * (350 - 104)'", text


def test_plural_nouns():
    assert [plural(n) for n in ("book", "flight number", "city", "address", "day", "match")] == \
        ["books", "flight numbers", "cities", "addresses", "days", "matches"]
    assert plural("numbers") == "numbers" and plural("status") == "statuses"


def test_a_plural_noun_is_asked_for_and_referred_to_as_many():
    """mean(numbers=...) left out of a miss_param turn is "some numbers", taken from a result "those numbers"."""
    mean = dict(params=["numbers"])  # the BFCL domain's noun of `numbers` is "numbers"
    assert outcome("mean", {"numbers": [3, 4]}, **mean, missing="numbers") == "work out the mean of some numbers"
    assert outcome("mean", {"numbers": [3, 4]}, **mean, bound=["numbers"]) == "work out the mean of those numbers"
    assert outcome("cat", {"file_name": "a.txt"}, params=["file_name"], missing="file_name").endswith("a file")
    post = outcome("post_tweet", {"content": "Hi", "mentions": ["@ana"]}, params=["content", "mentions"],
                   missing="mentions")
    assert post.endswith("mentioning some people"), post


def test_a_value_picked_from_several_listed_says_which_one():
    """'return that book' after a search that found three has no single meaning: the pick says which."""
    picks = {"book_id": [1, 3]}
    generic = dict(params=["book_id"], bound=["book_id"], nouns={"book_id": "book"}, effect="write")
    assert phrase_outcome("return_book", {"book_id": "bk-2"}, **generic) == "return that book"
    assert phrase_outcome("return_book", {"book_id": "bk-2"}, **generic, picks=picks) == \
        "return the second of those books"
    assert phrase_outcome("return_book", {"book_id": "bk-3"}, **generic, picks={"book_id": [2, 3]}) == \
        "return the last of those books"
    # a phrase's slot, and one item of a list argument
    assert outcome("cat", {"file_name": "a.txt"}, params=["file_name"], bound=["file_name"],
                   picks={"file_name": [0, 2]}).endswith("the first of those files")
    mixed = phrase_outcome("share_books", {"book_ids": ["bk-1", "bk-9"]}, params=["book_ids"],
                           bound=["book_ids[1]"], nouns={"book_ids": "book"}, effect="write",
                           picks={"book_ids[1]": [4, 12]})
    assert "'bk-1'" in mixed and "the fifth of those books" in mixed and "bk-9" not in mixed


def test_a_thing_whose_name_is_left_out_is_made_without_one():
    """The eleventh blind read: "create a folder called a folder". Left out, the name is not said at all."""
    assert outcome("mkdir", {"dir_name": "hatch"}, params=["dir_name"], missing="dir_name") == "create a folder"
    assert outcome("mkdir", {"dir_name": "hatch"}, params=["dir_name"]) == "create a folder called 'hatch'"


def test_a_code_segment_says_one_and_any_other_value():
    """"(just the final 1 lines)": one line is said as one; any other count fills the segment's "*"."""
    assert outcome("tail", {"file_name": "a.txt", "lines": 1}, params=["file_name", "lines"]).endswith(
        "(just the final line)")
    assert outcome("tail", {"file_name": "a.txt", "lines": 5}, params=["file_name", "lines"]).endswith(
        "(just the final 5 lines)")
    # a code with a slot in the outcome is said there, and the usual one when the call passes none
    assert outcome("wc", {"file_name": "a.txt", "mode": "w"}, params=["file_name", "mode"]) == \
        "tell me how many words there are in 'a.txt'"
    assert outcome("wc", {"file_name": "a.txt"}, params=["file_name", "mode"]) == \
        "tell me how many lines there are in 'a.txt'"


def test_a_tool_without_a_phrase_is_asked_for_with_its_docs_action():
    """Issue 39's reads: requests were the tool's name split into words ("check the out for a code"). A docstring's
    first clause, when it is an action, is said with the call's values in place of the things it names."""
    from rods.llm.outcomes import documented_action, generic_outcome

    book = generic_outcome("book_appointment", {"patient_id": "P-1", "doctor_id": "D-2", "date": "2026-01-12"},
                           description="Book an appointment for a patient with a doctor.",
                           params=["patient_id", "doctor_id", "date"])
    assert book.startswith("book an appointment for patient 'P-1' with doctor 'D-2'") and "'2026-01-12'" in book
    free = documented_action("Show when a doctor is free on a given day.", {"doctor_id": "D-2", "date": "2026-01-12"},
                             param_docs={"date": "Day, as YYYY-MM-DD."})
    assert free == ("show when doctor 'D-2' is free on '2026-01-12'", {"doctor_id", "date"})
    checked = documented_action("Check a patient in for today's appointment and charge the copay.",
                                {"appointment_id": "AP-1"}, bound={"appointment_id"})
    assert checked == ("check a patient in for that appointment", {"appointment_id"})
    # a choice the call makes one way ("phone number or insurance plan"), no verb, a recital: the name's words
    assert documented_action("Change a patient's phone number or insurance plan.",
                             {"patient_id": "P-1", "phone": "555"}) is None
    assert documented_action("Returns the details of a patient.", {"patient_id": "P-1"}) is None
    assert documented_action("Patient lookup by id.", {"patient_id": "P-1"}) is None
    assert documented_action("Move a product into another bin of the same zone of the warehouse.",
                             {"sku": "S-1", "bin": "B-2"}) is None  # six words of the docs in a row
