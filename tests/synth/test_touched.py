"""What of a seed a recast changes (rods.synth.touched): the errand's values change, the world's stay.

Each case is one a blind read found, named in its docstring; the populations of every example environment in
tests/synth/test_recast.py hold every recast to the same split.
"""

from __future__ import annotations

from rods.envs.calls import ToolCall
from rods.synth.touched import handles_of_kept, touched_values, written_in


def test_a_measure_of_a_thing_the_words_name_stays_with_it():
    """The ferry read of draw 1616: "the wee car instead: Ford Fiesta, 4.1 m" came back as a Fiesta of 5.0 m. A
    number written right after a proper name the recast keeps measures that thing and stays; the same number
    given on its own, after a person's name or after a date is the errand's and changes."""
    said = ["FB64105", 4.1, 7.2]
    state = {"bookings": {"FB64105": {"lead": "Ana Reyes", "vehicles": []}}}
    text = "We'll bring the wee car: Ford Fiesta, 4.1 m. The Swift Escape is 7.2 metres long. Ref FB64105."
    assert touched_values(state, said, text) == {"FB64105"}
    assert touched_values(state, said, "a car of 4.1 m and a motorhome, Swift Escape, 7.2 m") == {"FB64105", 4.1}
    assert 4.1 in touched_values(state, said, "Ana Reyes, 4.1 m of luggage, and the Swift Escape, 7.2 m")
    assert 7.2 in touched_values(state, said, "on Thursday November 7.2 of the Swift Escape")


def test_numbers_of_dates_and_of_kept_labels_are_not_the_errand_s():
    """The held-out pharmacy's read (whole states, two readers): a date of birth '1955-01-30' made every 30 of the
    state "written", so a 30-day supply of 60 tablets taken twice daily became 24 days; "the ibuprofen 800" of a
    strength '800 mg' re-drew the 800 tablets of metformin in stock and the words said "ibuprofen 600"."""
    state = {"rx": {"R1": {"quantity": 60, "days_supply": 30}},
             "meds": {"M1": {"strength": "800 mg", "stock": 800}, "M2": {"stock": 45}}}
    assert not touched_values(state, [], "my father, date of birth 1955-01-30, at 10:30")
    assert touched_values(state, [], "a 30-day supply, please") == {30}
    assert 800 not in touched_values(state, [2], "put 2 packs of the ibuprofen 800 on order")
    assert touched_values(state, [800], "order 800 tablets of the ibuprofen 800") == {800}  # the call's number
    assert touched_values(state, [], "we have 45 left?") == {45}


def test_a_handle_made_of_a_kept_person_s_name_stays_with_that_person():
    """The BFCL read of draw 1515 (both readers): the ticket username 'mthompson' of the cardholder Michael Thompson,
    re-drawn alone as 'mzhang'. A touched value made of the name of a person the recast keeps is not touched; one
    of a person it renames is."""
    state = {"cards": {"card_4893": {"cardholder_name": "Michael Thompson"}}, "tickets": {"owner": "Ana Reyes"}}
    said = ["card_4893", "mthompson85", "areyes7", "token_abc123"]
    text = "I am Ana Reyes. My ticket username is 'mthompson85', my old one 'areyes7', card 'card_4893'."
    touched = touched_values(state, said, text)
    assert "Ana Reyes" in touched and "areyes7" in touched  # Ana is the errand's: her handle moves with her
    assert "mthompson85" not in touched and "card_4893" in touched
    assert handles_of_kept(state, {"mthompson", "card_4893"}, frozenset()) == {"mthompson"}


def test_a_list_of_records_passed_by_a_call_is_no_written_value():
    """A ferry booking's passengers passed as a list of objects crashed the recast of a held-out domain's seeds
    (`written_in` of a dict); a record or a flag is never a value the words write."""
    text = "Book 2 adults and a child, Ana and Ben Reyes and little Cal, 3 seats"
    assert not written_in({"name": "Ana Reyes", "type": "adult"}, text)
    assert not written_in(True, text) and written_in(3, text) and written_in("Ana", text)


def test_a_name_whose_only_number_is_a_year_is_no_code():
    """BFCL reads of draws 1818 and 2323: 'ArchivedFinalReport2024.txt' of a 2024 report and 'Spring2023Draft.txt'
    of notes for spring 2023 were re-drawn a year away. A text whose only digits are a year another text of the
    state tells is the world's; a year nothing else tells ('notes_2024.txt') and any other digits are a code's."""
    state = {"files": {"Spring2023Draft.txt": {"content": "Notes for spring 2023, the first draft."},
                       "Q3_report_118.txt": {"content": ""}, "notes_2024.txt": {"content": "Ideas."}}}
    said = ["Spring2023Draft.txt", "Q3_report_118.txt", "INV-2023-0042", "notes_2024.txt"]
    assert touched_values(state, said, "open 'Spring2023Draft.txt'") == {"Q3_report_118.txt", "INV-2023-0042",
                                                                         "notes_2024.txt"}


def test_a_number_a_write_returned_is_the_environment_s():
    """The allotment society's read: a pensioner's rent halved by the environment to £26, then paid, was re-drawn
    wherever the state held a 26 (another member's invoice), and the payment, bound to the new half, was refused as
    a moved flow."""
    from rods.synth.touched import produced_numbers

    calls = [ToolCall("set_concession", {"member_id": "M-0118"}), ToolCall("record_payment", {"amount": 26.0}),
             ToolCall("find_member", {"query": "M-0104"}), ToolCall("record_payment", {"amount": 30.0})]
    results = ['{"invoice": "INV-0405", "amount": 26.0}', '{"paid": 26.0}', '{"owes": 30.0}', "{}"]
    assert produced_numbers(calls, results, [True, True, False, True]) == {26.0}  # 30 came from a read


def test_a_house_number_a_call_passes_takes_its_address_along():
    """The council's waste desk read: a call passed the house '7' (or 'Flat 3') and the postcode of a property
    whose address is '7 Cedar Close'; the recast re-drew '7' in the call alone and the register had no such house
    (9 of 14 tries failed). The address of the record the errand touches is the errand's too; another street's
    '7 Alder Road' is not."""
    state = {"properties": {"100062130007": {"address": "7 Cedar Close", "postcode": "KF3 5RW"},
                            "100062110007": {"address": "7 Alder Road", "postcode": "KF1 3PL"},
                            "100062200315": {"address": "Flat 3, Marlow Court", "postcode": "KF2 8DN"}}}
    said = ["KF3 5RW", "7", "100062130007", "KF2 8DN", "Flat 3"]
    touched = touched_values(state, said, "Hi, it's 7 Cedar Close, KF3 5RW. And Flat 3, Marlow Court, KF2 8DN.")
    assert {"7 Cedar Close", "Flat 3, Marlow Court"} <= touched and "7 Alder Road" not in touched


def test_a_number_the_state_writes_after_the_names_word_is_the_thing_s():
    """BFCL read 2929 (both readers): the folder 'Quarter1_Reports', whose files say "Quarter 1 financial report.",
    came back as 'Quarter4_Reports' beside the same files. A number another text writes after the name's word stays;
    'report1.txt', which no text writes as "report 1", is a code and is re-drawn."""
    state = {"Quarter1_Reports": {"report1.txt": {"content": "Quarter 1 financial report."},
                                  "report2.txt": {"content": "Quarter 1 sales report."}}}
    touched = touched_values(state, ["Quarter1_Reports", "report1.txt"], "Copy the files of 'Quarter1_Reports'.")
    assert "Quarter1_Reports" not in touched and "report1.txt" in touched
