"""How users ask for each tool (rods.synth.phrasings): requests mined from the seeds' one-call turns keep their words
and take a new call's values; words that cannot travel (numbers, names, "she", a seed's own things) are left behind."""

import sys
from pathlib import Path

import pytest

from rods.llm.template import in_their_words, request
from rods.synth.phrasings import mine, phrasing_of
from rods.synth.profile import parse_ground_truth
from rods.tasks import Task
from rods.tasks.task_files import read_tasks

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def warehouse():
    sys.path.insert(0, str(EXAMPLES / "warehouse"))
    yield read_tasks(EXAMPLES / "warehouse" / "seeds.jsonl")
    sys.path.remove(str(EXAMPLES / "warehouse"))


def with_turn(seed: Task, query: str, call: str) -> Task:
    """The seed with one more turn: `query` asking for `call`."""
    return Task.model_validate({**seed.model_dump(), "question": [*[[m.model_dump() for m in q] for q in seed.question],
                                                                  [{"role": "user", "content": query}]],
                                "ground_truth": [*seed.ground_truth, [call]]})


def mined_from(seed: Task, query: str, call: str):
    task = with_turn(seed, query, call)
    return phrasing_of(task, task.num_turns - 1, parse_ground_truth(task)[-1][0])


def test_a_request_keeps_its_words_and_takes_new_values(warehouse):
    found = {p.text: p for p in mine(warehouse).get("find_products", [])}
    where = found["Where are the {query} kept at the moment?"]
    assert where.fits({"query": "cable ties"}, set())
    assert where.say({"query": "cable ties"}) == "Where are the cable ties kept at the moment?"
    assert not where.fits({"query": "cable ties", "zone": "B"}, set())  # another argument: other words
    assert not where.fits({"query": 7}, set())  # a number where the seed said a text
    low = found["Is any of the {category} at or below its reorder point?"]
    assert low.fits({"category": "Power Tools", "low_stock": True}, set())
    assert not low.fits({"category": "Power Tools", "low_stock": False}, set())  # the words mean low stock
    assert low.say({"category": "Power Tools", "low_stock": True}).startswith("Is any of the power tools")


def test_a_value_left_unsaid_must_be_pointed_at_and_come_from_an_earlier_result(warehouse):
    send = next(p for p in mine(warehouse)["ship_order"] if p.text == "Send it with {carrier}.")
    assert send.fits({"order_id": "SO-7000", "carrier": "GLS"}, {"order_id"})
    assert not send.fits({"order_id": "SO-7000", "carrier": "GLS"}, set())  # said by the user: "it" is no order
    seed = warehouse[0]
    assert mined_from(seed, "Send it with DPD.", "ship_order(order_id='SO-5512', carrier='DPD')") is not None
    assert mined_from(seed, "Send with DPD.", "ship_order(order_id='SO-5512', carrier='DPD')") is None  # which?


@pytest.mark.parametrize("query", [
    "She says send it with DPD.",                       # a person of the seed's story
    "Send it with DPD before 5.",                        # a number of the seed's story
    "Send it with DPD, Megan is waiting.",              # a proper noun
    "Send the drills with DPD.",                         # a thing of the seed's state ("18V cordless drill")
    "Send it with DPD. And ship_order it today please.",  # names the tool
    "Send it with carrier 'DPD'.",                       # recites a parameter
])
def test_words_that_cannot_travel_are_not_mined(warehouse, query):
    assert mined_from(warehouse[0], query, "ship_order(order_id='SO-5512', carrier='DPD')") is None


def test_context_around_a_request_is_left_behind(warehouse):
    mined = mined_from(warehouse[0], "Grand, the lads say it's packed. Send it with DPD.",
                       "ship_order(order_id='SO-5512', carrier='DPD')")
    assert mined is not None and mined.text == "Send it with {carrier}."


def test_every_request_mined_from_the_shipped_seeds_names_nothing_of_its_story():
    for folder in ("clinic", "warehouse", "calendar_invites", "tau2_airline", "tau2_retail"):
        sys.path.insert(0, str(EXAMPLES / folder))
        try:
            seeds = [t for f in sorted((EXAMPLES / folder).glob("*.jsonl")) for t in read_tasks(f)]
            for phrasings in mine(seeds).values():
                for p in phrasings:
                    bare = p.text.replace("{", "").replace("}", "")
                    assert not any(ch.isdigit() for ch in bare), (folder, p.text)
                    assert not {"she", "he", "her", "his", "him"} & set(bare.lower().split()), (folder, p.text)
        finally:
            sys.path.remove(str(EXAMPLES / folder))


def test_the_template_asks_in_the_users_words_and_falls_back_per_call():
    mined = {"function": "ship_order", "arguments": {"order_id": "SO-1", "carrier": "GLS"}, "bound": ["order_id"],
             "asked": ["Send it with GLS."], "params": {"order_id": "", "carrier": ""}, "effect": "write"}
    plain = {"function": "get_product", "arguments": {"sku": "SKU-1"}, "bound": [], "params": {"sku": ""},
             "effect": "read", "index": 1}
    assert request({"kind": "calls", "calls": [mined]}) == "Send it with GLS."
    both = in_their_words([plain, mined])
    assert both.endswith("Send it with GLS.") and "SKU-1" in both
    assert in_their_words([plain]) == ""  # no call has users' words: the template's own
    # a turn leaving a value out is never asked in a seed's words (they would say it)
    left_out = request({"kind": "ask_missing", "calls": [{**mined, "index": 0}],
                        "missing": {"index": 0, "param": "carrier", "value": "GLS"}})
    assert "GLS" not in left_out
