"""A database in a state (rods.synth.database): its collections of records and the fields whose values repeat."""

from __future__ import annotations

from rods.synth.database import MIN_RECORDS, Database, scalars_of


def state(n: int) -> dict:
    """A shop of n customers (two tiers), each with a wallet of one card; a settings map that is no collection."""
    customers = {f"C{i}": {"name": f"Name {i}", "tier": ["gold", "silver"][i % 2], "zip": f"{10000 + i}",
                           "wallet": {f"card_{i}": {"brand": "visa", "last_four": f"{1000 + i}"}}}
                 for i in range(n)}
    return {"Shop": {"customers": customers, "settings": {"currency": "USD", "open": True}}}


def test_a_map_of_enough_records_keyed_by_id_is_a_collection_and_its_repeating_fields_are_marks():
    db = Database(state(40))
    assert [c.where for c in db.collections] == [("Shop", "customers")]
    customers = db.collections[0]
    assert db.home["C7"] is customers and "card_7" not in db.home  # no collection inside a record
    assert customers.marks[()] == {"tier": 2}  # a name, a zip: one value a record, no mark
    assert customers.marks[("wallet",)] == {"brand": 1}  # entries' marks too


def test_a_small_map_is_no_database():
    assert not Database(state(MIN_RECORDS - 1))
    assert Database(state(MIN_RECORDS))


def test_scalars_are_values_and_record_ids_not_field_names():
    record = state(8)["Shop"]["customers"]["C1"]
    found = list(scalars_of(record))
    assert "card_1" in found and "gold" not in found and "silver" in found
    assert "wallet" not in found and "brand" not in found  # field names, which every record shares
