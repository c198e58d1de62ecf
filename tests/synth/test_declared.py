"""What an environment declares (rods.synth.declared): the sets its schemas, descriptions and code name."""

from __future__ import annotations

import textwrap

from rods.synth.declared import compared, declared_sets

SOURCE = textwrap.dedent('''
    OPEN = frozenset({"booked", "checked-in"})
    RATES = {"standard": 1.0, "member": 0.8}

    class Desk:
        def book(self, status, record, plan, kind):
            if status not in OPEN:
                raise ValueError(status)
            if record.get("board") == "half" or "full" == record["board"]:
                pass
            if kind.lower() in ("walk-in", "online"):
                pass
            return RATES[plan]
''')


def test_the_code_declares_what_it_compares_and_looks_up():
    found = compared(SOURCE)
    assert found["status"] == {"booked", "checked-in"}  # `in` a module's frozenset
    assert found["board"] == {"half", "full"}  # `.get("board") ==` and `"full" == record["board"]`
    assert found["kind"] == {"walk-in", "online"}  # `.lower() in (...)`
    assert found["plan"] == {"standard", "member"}  # a dict of the module looked up by it
    assert compared("def broken(:") == {}


def test_schemas_and_descriptions_declare_sets():
    docs = {"book": {"class": "desk:Desk", "parameters": {"properties": {
        "size": {"type": "string", "enum": ["s", "m"]},
        "meal": {"anyOf": [{"type": "string", "enum": ["none", "half"]}, {"type": "null"}]},
        "board": {"type": "string", "description": "meals, one of 'none', 'breakfast' or 'half'"},
        "room": {"type": "string", "description": "one of single, double or suite"},
        "note": {"type": "string", "description": "anything the guest says"}}}}}
    by_param, by_name = declared_sets(docs, {"desk:Desk": SOURCE})
    assert by_param == {"book.size": {"s", "m"}, "book.meal": {"none", "half"},
                        "book.board": {"none", "breakfast", "half"}, "book.room": {"single", "double", "suite"}}
    assert by_name["desk:Desk/plan"] == {"standard", "member"}


def test_a_format_with_its_example_and_a_list_of_records_declare_nothing():
    """A description that quotes a format and an example, or the keys of the records a list takes, names no
    set: tau2 airline's flight date ("in the format 'YYYY-MM-DD', such as '2024-05-01'") was refused every
    other date."""
    docs = {"search": {"class": "a:A", "parameters": {"properties": {
        "date": {"type": "string", "description": "The date in the format 'YYYY-MM-DD', such as '2024-05-01'."},
        "lines": {"type": "array", "items": {"$ref": "#/$defs/Line"},
                  "description": 'one line per SKU, e.g. [{"sku": "SKU-20431", "qty": 5}]'}}}}}
    assert declared_sets(docs, {}) == ({}, {})


def test_a_table_made_from_a_literal_and_looked_up_by_get_declares_its_strings():
    """The warehouse's carriers: a read-only map built from a literal tuple, looked up after trimming the text."""
    source = textwrap.dedent('''
        from types import MappingProxyType
        CARRIERS = MappingProxyType({c.lower(): c for c in ("DPD", "GLS", "An Post")})

        def ship(carrier):
            booked = CARRIERS.get(carrier.strip().lower())
            return booked
    ''')
    assert compared(source)["carrier"] == {"DPD", "GLS", "An Post"}
    assert "carrier" not in compared("T = {'a': 1, 'b': 2}\ndef f(carrier):\n    return T.get('a')\n")


def test_the_numbers_of_a_table_of_rates_are_declared():
    from rods.synth.declared import rates

    assert rates(SOURCE) == {1.0, 0.8}  # RATES, a module's dict of names to numbers
    nested = textwrap.dedent('''
        DEFAULT_STATE = {"accounts": {"acc-1": 820.0}}  # records, no table of rates
        _bank = {"Amelia Hart": 820.0}  # no constant

        class Council:
            FEES = {"up to 3": 29, "4-6": 45}
            def fee(self, n):
                TABLE = {"a": 7}  # a function's own dict is no table of the class
                return TABLE
    ''')
    assert rates(nested) == {29.0, 45.0}
    assert rates("def broken(:") == frozenset()
