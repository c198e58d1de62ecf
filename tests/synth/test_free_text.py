"""Free-text arguments from the seeds' examples, literals re-drawn from the live state (rods.synth.free_text)."""

from __future__ import annotations

import random

from hypothesis import given, settings, strategies as st

from rods.synth.free_text import LITERAL, Example, FreeText, literals_of, place
from rods.synth.values import ValueRemapper


def free_text(seed: int = 0) -> FreeText:
    return FreeText([], ValueRemapper(random.Random(seed), frozenset()), random.Random(seed + 1))


def test_literals_are_quoted_strings_and_standalone_numbers_only():
    text = "SELECT t2.name FROM items_3 WHERE name = 'O''Brien' AND price > 12.5 AND qty = 3 AND code = \"x\""
    found = literals_of(text, {})
    assert [lit.value for lit in found] == ["O'Brien", 12.5, 3, "x"]  # not t2, items_3
    assert [lit.quote for lit in found] == ["'", "", "", '"']


def test_places_generalize_list_positions_but_keep_a_record_field():
    assert place("/state_snapshot/sqlite/products/rows/3/1") == "/state_snapshot/sqlite/products/rows/*/1"
    assert place("/git/branches/main/messages/0") == "/git/branches/main/messages/*"
    assert place("/orders/o1001/items/2/price") == "/orders/o1001/items/*/price"


def test_a_literal_the_state_held_is_redrawn_from_the_same_place_in_the_live_state():
    places = {"lamp": {"/t/rows/*/1"}, 0: {"/t/rows/*/3"}}
    example = Example("UPDATE products SET stock = 0 WHERE name = 'lamp'",
                      literals_of("UPDATE products SET stock = 0 WHERE name = 'lamp'", places),
                      frozenset({"products", "stock", "name"}))
    live = {"/t/rows/*/1": ["pen", "stapler"], "/t/rows/*/3": [5, 7], "/other/*": ["nope", 99]}
    seen = set()
    for seed in range(40):
        text = free_text(seed).derive(example, live)
        assert text.startswith("UPDATE products SET stock = ") and " WHERE name = '" in text
        seen.add(text)
        name = text.split("'")[1]
        stock = text.split("stock = ")[1].split(" ")[0]
        assert name in {"pen", "stapler"} or name not in {"nope", "lamp"}  # from its place, else fresh
        assert stock in {"5", "7"} or stock.isdigit()
    assert len(seen) > 2


def test_new_names_in_the_skeleton_are_renamed_alike_in_every_call_of_a_plan():
    ft = free_text(3)
    create = Example("CREATE TABLE reviews (id INTEGER PRIMARY KEY, stars INTEGER)", (), frozenset({"id"}))
    insert_text = "INSERT INTO reviews (id, stars) VALUES (1, 5)"
    insert = Example(insert_text, literals_of(insert_text, {}), frozenset({"id"}))
    made, filled = ft.derive(create, {}), ft.derive(insert, {})
    table = made.split()[2]
    assert table != "reviews" and filled.startswith(f"INSERT INTO {table} (id, ")
    assert "INTEGER PRIMARY KEY" in made  # capitals are the language's


WORDS = st.sampled_from(["SELECT", "name", "FROM", "products", "WHERE", "=", "AND", "city", "notes"])
LITERALS = st.one_of(st.integers(-500, 500).map(str), st.sampled_from(["'Ada Lovelace'", "'London'", "12.5"]))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(WORDS, LITERALS), min_size=2, max_size=12), st.integers(0, 1000))
def test_derived_text_keeps_the_skeleton_and_the_number_of_literals(tokens, seed):
    text = " ".join(tokens)
    known = frozenset({"name", "products", "city", "notes"})
    example = Example(text, literals_of(text, {}), known)
    derived = free_text(seed).derive(example, {})
    assert len(LITERAL.findall(derived)) == len(example.literals)
    assert LITERAL.sub("#", derived) == LITERAL.sub("#", text)  # every word kept: capitals or known
