"""Counterparts (rods.synth.counterparts): a seed's errand done for another of the database's own people.

The unit tests hold the rules on a made-up shop's database (customers who list their orders, orders whose items
name the shop's products); a tau2 retail seed shows the whole path: a seed whose world is the domain's database,
which a recast could not change and a re-plan wrote as parts put together, recast for another customer, calls and
words alike, and replayed to 1.0.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from rods.envs.validation import validate_task
from rods.llm import make_backend
from rods.synth.counterparts import counterparts, errand_of, mapped
from rods.synth.database import Database
from rods.synth.pipeline import Pipeline
from rods.synth.profile import parse_ground_truth
from rods.synth.settings import SynthConfig
from rods.tasks import read_tasks

FIRST = ["Ana", "Ben", "Chloe", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kai", "Lea"]
STATUSES = ["pending", "delivered", "cancelled"]


def shop() -> dict:
    """40 customers, each listing two orders (statuses cycling), each order one item of one of 4 products."""
    products = {f"P{p}": {"name": f"Product {p}", "variants": {f"I{p}{v}": {"price": 10.0 + p + v / 10}
                                                                for v in range(3)}} for p in range(8)}
    customers, orders = {}, {}
    for c in range(40):
        first = FIRST[c % len(FIRST)]
        ids = [f"O{c}{k}" for k in range(2)]
        customers[f"C{c}"] = {"name": {"first": first, "last": f"Lastname{c}"}, "zip": f"{10000 + c}",
                              "orders": ids}
        for k, oid in enumerate(ids):
            p = (c + k) % 4
            orders[oid] = {"customer": f"C{c}", "status": STATUSES[(c // 4 + k) % 3],
                           "items": [{"product": f"P{p}", "item": f"I{p}-{c}{k}", "price": 10.0 + p + c / 10}]}
    return {"Shop": {"customers": customers, "orders": orders, "products": products}}


def test_the_anchor_is_the_customer_her_orders_are_owned_and_products_shared():
    db = Database(shop())
    # cancel Ana's pending order O00 of product P0 (an order's `customer` names Ana back: she is the errand's)
    said = ["O00", "P0"]
    errand = errand_of(db, said, written=["O00"], told="I am Ana, cancel O00")
    assert errand.anchor == "C0" and set(errand.owned) == {"O00"} and errand.shared == frozenset({"P0"})
    assert errand.written == frozenset({"O00"})


def test_a_counterpart_has_the_written_order_s_status_and_product_and_its_own_names():
    data = shop()
    db = Database(data)
    customers, orders = data["Shop"]["customers"], data["Shop"]["orders"]
    errand = errand_of(db, ["C0", "O00", "I0-00"], written=["O00"], told="I am Ana Lastname0 (10000), cancel O00")
    found = list(counterparts(db, errand, random.Random(0)))
    assert found, "some customer has a pending order of product P0"
    for mapping in found:
        customer, order = mapping['"C0"'], mapping['"O00"']
        assert customer != "C0" and order in customers[customer]["orders"]
        assert orders[order]["status"] == "pending"  # the written order's mark
        assert orders[order]["items"][0]["product"] == "P0"  # the same product: an item of the shared record
        assert mapping['"I0-00"'] == orders[order]["items"][0]["item"]
        assert mapping['"Ana"'] == customers[customer]["name"]["first"]
        assert mapping['"10000"'] == customers[customer]["zip"]
    # no customer without a pending order of P0 is a counterpart
    fitting = {c for c, rec in customers.items() if c != "C0" and any(
        orders[o]["status"] == "pending" and orders[o]["items"][0]["product"] == "P0" for o in rec["orders"])}
    assert {m['"C0"'] for m in found} == fitting


def test_an_order_only_read_needs_no_status_of_its_seed():
    db = Database(shop())
    read = errand_of(db, ["C0", "O00"], written=[])
    written = errand_of(db, ["C0", "O00"], written=["O00"])
    assert len(list(counterparts(db, read, random.Random(0)))) > len(list(counterparts(db, written, random.Random(0))))


def test_mapped_values_keep_their_type_and_amounts_inside_a_text_follow():
    mapping = {json.dumps("C0"): "C7", json.dumps(466.75): 512.3, json.dumps(39.0): 41.0}
    assert mapped({"who": "C0", "n": 39, "x": 39.0, "all": ["C0", "C1"]}, mapping) == {
        "who": "C7", "n": 41, "x": 41.0, "all": ["C7", "C1"]}
    assert mapped("466.75 + 288.82", mapping) == "512.30 + 288.82"
    assert mapped("keep 466.751", mapping) == "keep 466.751"


def test_a_tau2_retail_seed_is_recast_for_another_customer():
    seeds = read_tasks(Path(__file__).resolve().parents[2] / "examples" / "tau2_retail" / "test.jsonl")
    seed = next(s for s in seeds if s.id == "tau2_retail_17")  # Fatima Johnson moves a pending order's address
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=2, workers=1, seed=3))
    variants = pipeline([seed])
    assert variants, pipeline.report()["rejections"]
    for variant in variants:
        assert variant.provenance.strategy == "recast"
        calls = [c for turn in parse_ground_truth(variant) for c in turn]
        assert [c.name for c in calls] == [c.name for turn in parse_ground_truth(seed) for c in turn]
        first, last = calls[0].arguments["first_name"], calls[0].arguments["last_name"]
        assert (first, last) != ("Fatima", "Johnson")
        text = variant.question[0][0].content
        assert f"I am {first} {last} in zipcode {calls[0].arguments['zip']}." in text
        assert "Fatima" not in text and "78712" not in text and "#W8665881" not in text
        moved = calls[-1].arguments["order_id"]
        assert re.search(rf"change {re.escape(moved)} to be delivered", text)
        assert validate_task(variant) == []


def test_a_value_the_words_say_that_the_counterpart_holds_two_ways_passes_it_over():
    """The customer's zip is her order's address's too; a counterpart whose order went elsewhere pairs it twice,
    so the words' zip would have no one value: such a counterpart is passed over where the words say the zip."""
    data = shop()
    for order in data["Shop"]["orders"].values():
        c = int(order["customer"][1:])
        order["zip"] = f"{10000 + c}" if c % 2 == 0 else f"{20000 + c}"  # the odd customers' orders went elsewhere
    db = Database(data)
    told = errand_of(db, ["C0", "O01"], written=[], told="I am Ana, zip 10000; where is O01?")
    untold = errand_of(db, ["C0", "O01"], written=[], told="I am Ana; where is O01?")
    kept = {m['"C0"'] for m in counterparts(db, told, random.Random(0))}
    assert kept and all(int(c[1:]) % 2 == 0 for c in kept)
    assert any(int(m['"C0"'][1:]) % 2 for m in counterparts(db, untold, random.Random(0)))


def test_a_counterpart_without_a_match_of_what_the_words_say_is_passed_over():
    """"The item shipped on May 17": a counterpart whose order's item shipped another day has no match of that
    entry (its marks differ), so nothing would turn May 17 into its day; it is passed over where the words say it."""
    data = shop()
    days = ["2026-05-17", "2026-05-18", "2026-05-19"]
    for order in data["Shop"]["orders"].values():
        order["items"][0]["shipped"] = days[int(order["customer"][1:]) % 3]
    orders = data["Shop"]["orders"]
    db = Database(data)
    told = errand_of(db, ["C0", "O01"], written=[], told="I am Ana; the item of O01 shipped on May 17.")
    untold = errand_of(db, ["C0", "O01"], written=[], told="I am Ana; where is O01?")
    found = list(counterparts(db, told, random.Random(0)))
    assert found and all(orders[m['"O01"']]["items"][0]["shipped"] == "2026-05-17" for m in found)
    assert any(orders[m['"O01"']]["items"][0]["shipped"] != "2026-05-17"
               for m in counterparts(db, untold, random.Random(0)))


def test_an_entry_keeps_the_marks_the_words_say_and_no_others():
    """A card the calls name is matched by what the words say of it: "my Visa" keeps the brand, and without it any
    of the counterpart's cards will do (whether the errand's tools take it, the run checks)."""
    data = shop()
    for c, customer in data["Shop"]["customers"].items():
        brand = ["visa", "mastercard"][int(c[1:]) % 2]
        customer["cards"] = {f"card_{c}": {"brand": brand, "last_four": f"{1000 + int(c[1:])}"}}
    customers = data["Shop"]["customers"]
    db = Database(data)
    said = errand_of(db, ["C0", "O01", "card_C0"], written=[], told="I am Ana; pay O01 with my Visa, card_C0.")
    unsaid = errand_of(db, ["C0", "O01", "card_C0"], written=[], told="I am Ana; pay O01 with card_C0.")
    kept = [m['"C0"'] for m in counterparts(db, said, random.Random(0))]
    assert kept and all(customers[c]["cards"][f"card_{c}"]["brand"] == "visa" for c in kept)
    others = [m['"C0"'] for m in counterparts(db, unsaid, random.Random(0))]
    assert {customers[c]["cards"][f"card_{c}"]["brand"] for c in others} == {"visa", "mastercard"}


def test_a_kind_the_words_say_in_their_own_spelling_is_kept():
    """"Refund it to my gift card": the card the calls name is a 'gift_card', and the counterpart's must be one too
    (the tau2 read's draw 5656 refunded a recast's gift card to PayPal)."""
    data = shop()
    for c, customer in data["Shop"]["customers"].items():
        source = ["gift_card", "paypal"][int(c[1:]) % 2]
        customer["cards"] = {f"card_{c}": {"source": source, "balance": 10.0 + int(c[1:])}}
    customers = data["Shop"]["customers"]
    db = Database(data)
    errand = errand_of(db, ["C0", "O01", "card_C0"], written=[], told="I am Ana; refund O01 to my gift card.")
    kept = [m['"C0"'] for m in counterparts(db, errand, random.Random(0))]
    assert kept and all(customers[c]["cards"][f"card_{c}"]["source"] == "gift_card" for c in kept)


def test_an_entry_the_calls_name_is_matched_before_one_nobody_names():
    """Ana holds a PayPal account and a gift card and pays with the gift card; a customer whose wallet lists a
    gift card after her PayPal is a counterpart: her unnamed PayPal entry must not take the gift card, the one
    match of the entry the calls name, and a call passing records ({'first_name': ...}) names no field of hers."""
    data = shop()
    for c, customer in data["Shop"]["customers"].items():
        n = int(c[1:])
        wallet = [("paypal", f"paypal_{c}"), ("gift_card", f"gift_{c}")] if n % 2 else [("paypal", f"paypal_{c}")]
        customer["wallet"] = {key: {"source": source, "id": key} for source, key in wallet}
    data["Shop"]["customers"]["C0"]["wallet"] = {"paypal_C0": {"source": "paypal", "id": "paypal_C0"},
                                                 "gift_C0": {"source": "gift_card", "id": "gift_C0"}}
    customers = data["Shop"]["customers"]
    db = Database(data)
    said = ["C0", "O01", "gift_C0", "first", "Ana", "last", "Lastname0"]  # a call passed {'first': 'Ana', ...}
    errand = errand_of(db, said, written=[], told="I am Ana Lastname0; pay O01 with my gift card.")
    found = list(counterparts(db, errand, random.Random(0)))
    assert {m['"C0"'] for m in found} == {c for c in customers if c != "C0" and int(c[1:]) % 2}
    for mapping in found:
        assert customers[mapping['"C0"']]["wallet"][mapping['"gift_C0"']]["source"] == "gift_card"
        assert mapping['"Ana"'] == customers[mapping['"C0"']]["name"]["first"]
