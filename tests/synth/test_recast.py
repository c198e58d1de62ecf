"""Recast variants (rods.synth.recast): a seed's own plan and words in a new world.

A hand-made kennel shows one recast word for word and one refused for a value written in a form nothing maps; the
populations of every example environment show that each recast keeps its seed's calls and profile, validates,
holds none of its seed's remapped values, and differs from its seed's messages only in the words of values.
"""

from __future__ import annotations

import calendar
import difflib
import json
import re
import sys
import textwrap
from pathlib import Path

import pytest

from rods.envs.slices import slice_source, task_slices
from rods.envs.validation import validate_task
from rods.llm import make_backend
from rods.synth.dates import as_date
from rods.synth.gate import copied_values, returned_values
from rods.synth.mentions import Mentions, message_text, spelled
from rods.synth.people import is_person_name
from rods.synth.pipeline import Pipeline
from rods.synth.profile import parse_ground_truth, profile_of, trace_task
from rods.synth.recast import (
    follow_runs,
    numbers_followed,
    paired,
    placed_in_month,
    typed_as,
)
from rods.synth.settings import SynthConfig
from rods.synth.touched import coincident, said_values, touched_values
from rods.synth.value_kinds import is_distinctive, leaves, vocabulary_of
from rods.tasks import Task, load_split, read_tasks, write_tasks

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE_ENVS = {"clinic": "clinic:Clinic", "warehouse": "warehouse:Warehouse",
                "calendar_invites": "team_calendar:TeamCalendar", "byo_env": "library:Library",
                "bikeshare": "bikeshare:BikeShare", "car_rental": "car_rental:CarRental",
                "box_office": "box_office:BoxOffice", "school_bus": "school_bus:BusDispatch",
                "marina": "marina:Marina", "print_shop": "print_shop:PrintShop"}

KENNEL = textwrap.dedent('''
    from rods.envs import tool

    class Kennel:
        """Dogs boarding at a kennel."""

        def __init__(self, today: str = "2026-04-20", owners: dict | None = None, stays: dict | None = None):
            self.today = today
            self.owners = owners or {}
            self.stays = stays or {}

        @tool("read")
        def find_owner(self, name: str) -> list:
            """Owners whose name holds `name`, with their ids."""
            return [{"owner_id": k, **v} for k, v in sorted(self.owners.items()) if name.lower() in v["name"].lower()]

        @tool("read")
        def stays_of(self, owner_id: str) -> list:
            """An owner's stays, with their ids."""
            return [{"stay_id": k, **v} for k, v in sorted(self.stays.items()) if v["owner"] == owner_id]

        @tool("write")
        def move_stay(self, stay_id: str, arrive: str) -> dict:
            """Move a stay to another day of arrival."""
            if arrive < self.today:
                raise ValueError("in the past")
            self.stays[stay_id]["arrive"] = arrive
            return {"stay_id": stay_id, **self.stays[stay_id]}

        @tool("write")
        def extend_stay(self, stay_id: str, nights: int) -> dict:
            """Add nights to a stay."""
            if not isinstance(nights, int) or nights < 1:
                raise ValueError("nights must be a whole number of at least 1")
            self.stays[stay_id]["nights"] += nights
            return {"stay_id": stay_id, **self.stays[stay_id]}
''')

STATE = {"today": "2026-04-20",
         "owners": {"OW-1103": {"name": "Margaret Ashworth", "phone": "555-904-2218"},
                    "OW-1104": {"name": "Tom Baker", "phone": "555-771-3020"}},
         "stays": {"ST-4821": {"owner": "OW-1103", "dog": "Biscuit", "arrive": "2026-04-25", "nights": 3,
                               "price": 140.5},
                   "ST-4822": {"owner": "OW-1104", "dog": "Pepper", "arrive": "2026-05-09", "nights": 2,
                               "price": 95.0}}}
TRUTH = [["find_owner(name='Margaret Ashworth')", "stays_of(owner_id='OW-1103')"],
         ["move_stay(stay_id='ST-4821', arrive='2026-05-02')"]]
SAID = ["Hi, this is Margaret Ashworth (555) 904-2218. Can you check my booking ST-4821 for Biscuit?",
        "Margaret here again: please move it from Saturday 25 April to 2026-05-02, I'll pay the £140.50 as before."]


def kennel_seed(id_: str, said: list[str]) -> Task:
    return Task.model_validate({"id": id_, "category": "base", "environment": "rc_kennel:Kennel",
                                "question": [[{"role": "user", "content": q}] for q in said],
                                "ground_truth": TRUTH, "initial_config": {"rc_kennel:Kennel": STATE}})


@pytest.fixture(scope="module")
def kennel(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kennel")
    (folder / "rc_kennel.py").write_text(KENNEL)
    sys.path.insert(0, str(folder))
    yield
    sys.path.remove(str(folder))
    sys.modules.pop("rc_kennel", None)


def test_a_seed_is_recast_word_for_word(kennel):
    seed = kennel_seed("kennel-0", SAID)
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=1, workers=1, seed=1, recast=1.0))
    (variant,) = pipeline([seed])
    assert variant.provenance.strategy == "recast" and variant.provenance.parent_id == seed.id
    state = variant.initial_config["rc_kennel:Kennel"]
    owner, (stay, booked) = next(iter(state["owners"])), next(iter(state["stays"].items()))
    name, phone = state["owners"][owner]["name"], state["owners"][owner]["phone"]
    arrive = as_date(booked["arrive"])
    moved = parse_ground_truth(variant)[1][0].arguments["arrive"]
    assert arrive.strftime("%A") == "Saturday" and (as_date(moved) - arrive).days == 7  # whole weeks, as the seed's
    area, rest = phone.split("-", 1)  # the phone number's digits, as the seed wrote them
    assert variant.question[0][0].content == (
        f"Hi, this is {name} ({area}) {rest}. Can you check my booking {stay} for {booked['dog']}?")
    assert variant.question[1][0].content == (
        f"{name.split()[0]} here again: please move it from Saturday {arrive.day} {calendar.month_name[arrive.month]} "
        f"to {moved}, I'll pay the £{booked['price']:.2f} as before.")
    # the same calls, the second bound to what the first found
    assert [c.name for turn in parse_ground_truth(variant) for c in turn] == ["find_owner", "stays_of", "move_stay"]
    assert parse_ground_truth(variant)[0][1].arguments["owner_id"] == owner


def test_a_person_the_messages_call_she_stays_a_woman_where_no_name_list_knows_her_name(kennel):
    """The youth-league read: "Keiko Morimoto emailed that she ..." recast as "Daniel Ribeiro emailed that she ...".
    Robin is a first name of either gender in the name lists: the messages say which."""
    from rods.synth.people import gender_of

    state = json.loads(json.dumps(STATE).replace("Margaret Ashworth", "Robin Ashworth"))
    said = ["Robin Ashworth emailed that she wants booking ST-4821 checked.", "Please move it to 2026-05-02."]
    seed = kennel_seed("kennel-k", said).model_copy(update={"initial_config": {"rc_kennel:Kennel": state},
                                                            "ground_truth": json.loads(json.dumps(TRUTH).replace(
                                                                "Margaret Ashworth", "Robin Ashworth"))})
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=6, workers=1, seed=3, recast=1.0))
    variants = pipeline([seed])
    assert variants, pipeline.report()["rejections"]
    for variant in variants:
        first = variant.question[0][0].content.split()[0]
        assert gender_of(first) == "female", variant.question[0][0].content


def test_a_count_equal_to_a_price_of_the_state_stays_a_whole_number(kennel):
    """The catering read: 'guests=3' came out as 'guests=3.0', the type of a price of 3.0 that the state kept
    (numbers are mapped by value, and 3 == 3.0)."""
    state = json.loads(json.dumps(STATE))
    state["owners"]["OW-1104"]["balance"] = 2.0  # before the stays, so 2.0 is the first 2 the mapping meets
    seed = kennel_seed("kennel-n", [SAID[0], "Margaret again: Biscuit stays 2 nights longer, please."])
    seed = seed.model_copy(update={"initial_config": {"rc_kennel:Kennel": state}, "ground_truth": [
        TRUTH[0], ["extend_stay(stay_id='ST-4821', nights=2)"]]})
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=4, workers=1, seed=2, recast=1.0))
    variants = pipeline([seed])
    assert variants, pipeline.report()["rejections"]
    for variant in variants:
        (extend,) = parse_ground_truth(variant)[1]
        assert type(extend.arguments["nights"]) is int, extend
        assert validate_task(variant) == []


def test_a_seed_whose_last_call_is_meant_to_fail_is_recast_with_a_call_that_fails_too(kennel):
    """A rule the errand runs into (a stay moved into the past) is part of the errand: the recast keeps the call and
    its failure, and marks it as the seed does, instead of being re-planned."""
    said = [SAID[0], "Margaret here again: please move it to 2026-04-13, I'll pay the £140.50 as before."]
    seed = kennel_seed("kennel-e", said).model_copy(update={
        "ground_truth": [TRUTH[0], ["move_stay(stay_id='ST-4821', arrive='2026-04-13')"]],
        "expected_errors": {"1": [0]}})
    assert validate_task(seed) == []
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=3, workers=1, seed=1, recast=1.0))
    variants = pipeline([seed])
    assert variants and {v.provenance.strategy for v in variants} == {"recast"}, pipeline.report()
    for variant in variants:
        assert variant.expected_errors == {"1": [0]}
        assert validate_task(variant) == []  # the marked call fails on a fresh environment, the others do not
        state = variant.initial_config["rc_kennel:Kennel"]
        (move,) = parse_ground_truth(variant)[1]
        assert move.arguments["arrive"] < state["today"] and move.arguments["arrive"] in variant.question[1][0].content


def test_a_value_written_in_a_form_nothing_maps_is_not_emitted(kennel):
    said = [SAID[0], "Margaret again: move it from the 25/04/2026 to 2026-05-02, please."]
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=2, workers=1, seed=1, recast=1.0))
    assert pipeline([kennel_seed("kennel-1", said)]) == []
    assert pipeline.report()["rejections"] == {"recast:leftover_value": 2}


def test_mentions_handle_the_usual_forms_and_find_the_rest():
    pairs = [("Margaret Ashworth", "Ana Reyes"), ("2026-04-25", "2026-05-16"), (1250.0, 1180.0), ("bk-5001", "bk-7314"),
             (50, 40)]
    mentions = Mentions.of(pairs, {"Margaret Ashworth": "Ana Reyes"}, frozenset(),
                           "Margaret Ashworth Margaret's BK-5001 April 25th 25 April 2026 1,250.00 50 fifty 25/04/2026")
    text, left = mentions.apply("Margaret's booking BK-5001 on April 25th, 2026: 1,250.00 in all, 50 nights.")
    assert (text, left) == ("Ana's booking BK-7314 on May 16th, 2026: 1,180.00 in all, 40 nights.", [])
    assert mentions.apply("Pay 1250 on 25 April 2026.")[0] == "Pay 1180 on 16 May 2026."
    assert mentions.apply("Due 25/04/2026, fifty of them.")[1] == ["25/04/2026", "fifty"]
    assert mentions.apply("PF-1250 at 12:50")[0] == "PF-1250 at 12:50"  # a number inside an id or a time is none
    assert spelled(25) == ["twenty-five", "twenty five"]
    # a family name is said of the family too ("the Novaks"; the permit-office read kept them for the Trons')
    family = Mentions.of([], {"Tomasz and Ewa Novak": "Gianni and Maria Tron"}, frozenset(),
                         "Tomasz and Ewa Novak; the Novaks' deck")
    assert family.apply("The Novaks' deck: Ewa Novak called.") == ("The Trons' deck: Maria Tron called.", [])
    # a date moved into another month takes its month with it; the old month's name alone is a leftover
    moved = Mentions.of([("2026-11-15", "2026-12-13")], {}, frozenset(), "the 15th, which is November of 2026")
    assert moved.apply("the 15th, which is November of 2026") == ("the 13th, which is December of 2026", [])
    assert moved.apply("the 15th of next month (November)")[1] == ["November"]


def test_another_day_of_the_month_the_words_write_moves_with_the_date():
    """The BFCL read of draw 1313: "November on two days after close of the 14th day" of 2026-11-16, moved two weeks,
    booked the 30th beside "the 14th"; the 14th moves with it. A day that would leave the new date's month, and a
    number far from the month's name, are no such day."""
    text = "my journey next month November on two days after close of the 14th day in the year 2026"
    moved = Mentions.of([("2026-11-16", "2026-11-30")], {}, frozenset(), text)
    assert moved.apply(text) == (text.replace("14th", "28th"), [])
    late = "in November, on the 16th, twelve days before the 28th"
    later = Mentions.of([("2026-11-16", "2026-11-20")], {}, frozenset(), late)
    assert later.apply(late) == ("in November, on the 20th, twelve days before the 28th", ["28th"])  # December's 2nd
    far = "I live on the 4th floor of a building I bought long, long ago, so many years before all this. November 16"
    assert Mentions.of([("2026-11-16", "2026-11-30")], {}, frozenset(), far).apply(far) == (
        far.replace("November 16", "November 30"), [])


def test_a_number_said_as_part_of_a_kept_value_stays_and_only_written_numbers_are_touched():
    """The print-shop read: "500 flyers on the 50 lb gloss" of a stock that stayed 'gloss_100lb', and "double-sided"
    quoted with sides=1: a number the words say beside a kept value is that value's; a number the calls pass that
    no message writes (a count said in words, half of a price) stays."""
    text = "500 flyers on the 100 lb gloss, and 100 business cards, double-sided."
    mentions = Mentions.of([(100, 340), (500, 450), ("gloss_100lb", "gloss_100lb")], {}, frozenset(), text)
    assert mentions.apply(text) == ("450 flyers on the 100 lb gloss, and 340 business cards, double-sided.", [])
    state = {"jobs": {"PJ-1": {"quantity": 500, "sides": 2, "price": 54.0, "paid": 27.0}}}
    touched = touched_values(state, ["PJ-1", 500, 2, 27.0], text)
    assert 500 in touched and "PJ-1" in touched and not {2, 27.0, 54.0} & touched






def test_a_name_typed_without_its_accents_is_the_state_s_person_typed_so():
    """A held-out pharmacy's seed: a clerk's find_patient(name='Lucia Fernandez') of the state's 'Lucía Fernández'.
    The person is the errand's (touched) and the call passes her new name typed the same way; mapped as a value of
    its own, the recast searched for somebody nobody knew, and every try failed."""
    state = {"patients": {"P-1006": {"name": "Lucía Fernández"}, "P-1007": {"name": "Ana Reyes"}}}
    touched = touched_values(state, ["Lucia Fernandez"], "Lucia Fernandez has insurance now")
    assert touched == {"Lucía Fernández", "Lucia Fernandez"}  # the state's person, the call's name of her
    mapping = {("s", "Lucía Fernández"): "Zoë Müller", ("s", "Goldberg"): "Hernández"}
    assert typed_as("Lucia Fernandez", mapping) == "Zoe Muller"
    assert typed_as("goldberg", mapping) == "hernandez" and typed_as("GOLDBERG", mapping) == "HERNANDEZ"
    assert typed_as("Lucía Fernández", mapping) is None and typed_as("Ana Reyes", mapping) is None


def test_a_post_of_the_state_s_numbers_is_no_code_and_tells_the_new_state():
    """The BFCL read of draw 1313: "top it up with 30 gallons" beside rear tires of 30 PSI, and a tweet of the
    pressures. The tweet was re-drawn as a code ('Rear Left Tire: 98 PSI' beside tires of 40); a text a person
    wrote is no code, and its numbers follow the state's (the 30 the gallons moved to 40 moved the tires too)."""
    tweet = "Front Left Tire: 32 PSI, Front Right Tire: 32 PSI, Rear Left Tire: 30 PSI, Rear Right Tire: 30 PSI"
    state = {"car": {"front": 32.0, "rear": 30.0, "fuel": 10.0}}
    touched = touched_values(state, [30.0, tweet], "top it up with an additional 30 gallons")
    assert 30.0 in touched and tweet not in touched
    mapping = {("n", 30.0): 40.0, ("n", 10.0): 10.0}
    assert numbers_followed(tweet, mapping) == tweet.replace("30 PSI", "40 PSI")
    # only whole numbers of the text: not a part of a code, a word or a longer number
    assert numbers_followed("order A30 of 30.5 kg, 130 left, 30.", mapping) == "order A30 of 30.5 kg, 130 left, 40."


def test_a_number_the_calls_pass_for_another_thing_stays_in_the_state_and_is_re_drawn_in_the_calls():
    """The BFCL read of draw 1414: "I filled up with 30 gallons" (gallon_to_liter(gallon=30)) beside rear tires of
    30 PSI; mapped by value, the tires became 40 and 20 PSI beside a tweet that the pressures were optimal. A
    number held only in fields named unlike the parameters it is passed to is the state's own."""
    from rods.envs.calls import ToolCall

    state = {"car": {"rearTirePressure": 30.0, "fuelLevel": 10.0, "fuelCapacity": 30.0}}
    convert = [ToolCall("gallon_to_liter", {"gallon": 30.0})]
    assert coincident({"car": {"rearTirePressure": 30.0}}, convert) == {30.0}
    # a field named like the parameter holds it (the tank's capacity, filled by fuelAmount): the errand's
    assert coincident(state, [ToolCall("fillFuelTank", {"fuelAmount": 30.0})]) == frozenset()
    assert coincident(state, [ToolCall("fillFuelTank", {"fuelAmount": 10.0})]) == frozenset()


def test_a_recast_keeps_the_tires_of_a_seed_that_converts_as_many_gallons():
    seed = next(t for t in load_split("test") if t.id == "multi_turn_base_53")
    tires = {k: v for k, v in seed.initial_config["VehicleControlAPI"].items() if k.endswith("TirePressure")}
    assert 30.0 in tires.values()
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=3, workers=1, seed=5, recast=1.0))
    variants = pipeline([seed])
    assert variants
    for variant in variants:
        state = variant.initial_config["VehicleControlAPI"]
        assert {k: state[k] for k in tires} == tires
        gallons = re.search(r"gallon_to_liter\(gallon=([\d.]+)\)", variant.ground_truth[0][0])
        assert gallons and float(gallons.group(1)) != 30.0  # the errand's number is re-drawn


def test_a_date_told_by_its_place_in_its_month_stays():
    """The BFCL read of draw 1414: "on the last day of October 2026", moved a week, became "the last day of November
    2026" booked for November 7th. Such a seed's dates stay; its other values are recast."""
    assert placed_in_month("a flight on the last day of October") and placed_in_month("the First Day of May")
    assert not placed_in_month("the last days of summer") and not placed_in_month("on October 31st")
    # draw 1818, both readers: "the 15th of the year 2026's eleventh month" moved three weeks into October
    assert placed_in_month("on the 15th of the year 2026's eleventh month") and placed_in_month("the 3rd month")
    assert not placed_in_month("in a month or two") and not placed_in_month("this month 5 people came")
    # the allotment society's seeds: "the October walkround", "back in March" stayed, their dates moved a month on,
    # and every such recast was refused for the month left in its words
    assert placed_in_month("just back from the October walkround") and placed_in_month("she put her name down in May")
    assert not placed_in_month("on 3 March") and not placed_in_month("October 12th") and not placed_in_month(
        "the 1st of October") and not placed_in_month("May I book it?") and not placed_in_month("March 2026")
    # the kennels read (both readers, 4 of 14 recasts): "Labor Day weekend, 2025-08-29 to 2025-09-02" booked for
    # late September; words that name a public holiday keep their dates too
    from rods.synth.recast import names_holiday

    assert names_holiday("on your waiting list for Labor Day weekend") and names_holiday("over the bank holiday")
    assert names_holiday("the day after Thanksgiving") and names_holiday("closed on Boxing Day")
    assert not names_holiday("book it for May 3") and not names_holiday("the labor costs")
    seed = next(t for t in load_split("test") if t.id == "multi_turn_miss_func_194")
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=2, workers=1, seed=5, recast=1.0))
    variants = pipeline([seed])
    assert variants
    for variant in variants:
        assert "travel_date='2026-10-31'" in variant.ground_truth[0][1]
        assert "last day of October 2026" in variant.question[0][0].content


def test_a_value_that_holds_a_re_drawn_id_s_digits_follows_the_id():
    """The BFCL reads of draws 1313 and 1414: a card recast as 'card_0982' kept its number ending 0064. What holds
    the id's run of digits follows it; a year, a shorter run, and a value whose own digits were re-drawn do not."""
    seed = {"cards": {"card_0064": {"number": "8293-1765-9823-0064", "note": "since 2024, pin 0064x"},
                      "gift_2024": {"number": "1111-2222-3333-4444", "code": "A-0064"}}}
    recast = {"cards": {"card_0982": {"number": "8293-1765-9823-0064", "note": "since 2024, pin 0064x"},
                        "gift_2025": {"number": "1111-2222-3333-4444", "code": "B-0311"}}}
    followed = follow_runs(seed, recast)["cards"]
    assert followed["card_0982"]["number"] == "8293-1765-9823-0982"
    assert followed["card_0982"]["note"] == "since 2024, pin 0064x"  # not a whole run of digits there
    assert followed["gift_2025"] == recast["cards"]["gift_2025"]  # a year is no id's run; a re-drawn code keeps its






def test_a_seed_of_the_environment_s_own_state_is_re_planned(kennel):
    """A state the class makes itself (tau2's database: the seed's config holds none) has nothing of the seed's to
    rename; its variants are re-planned (`recast_unavailable`)."""
    own = kennel_seed("kennel-2", SAID)
    seed = own.model_copy(update={"initial_config": {}})
    planner = Pipeline(make_backend("template"), SynthConfig(recast=1.0)).planner_for(seed.environment, [own])
    assert planner.can_recast(own) and not planner.can_recast(seed)


def test_a_tau2_seed_is_recast_for_a_counterpart_or_re_planned_never_recast_unchanged():
    """tau2's state is the domain's database, loaded by the class (the seed's config is empty): a recast would be its
    seed again. A seed whose errand has a counterpart (another customer of its shape: `rods.synth.counterparts`) is
    recast for one; the others' variants drawn as recasts are re-planned and counted."""
    pytest.importorskip("tau2.environment.toolkit")
    seeds = read_tasks(EXAMPLES / "tau2_airline" / "train.jsonl")[3:6]  # airline_5 and 9 have counterparts, 7 not
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=1, workers=1, seed=0, recast=1.0))
    planner = pipeline.planner_for(seeds[0].environment, seeds)
    has = {s.id: planner.has_counterparts(s) for s in seeds}
    assert 0 < sum(has.values()) < len(seeds), has  # both kinds in the draw
    accepted = pipeline(seeds)
    report = pipeline.report()
    assert report["recast_unavailable"] == sum(not h for h in has.values())
    assert report["strategies"]["recast"]["tried"] == sum(has.values())
    for task in accepted:
        assert task.provenance.strategy == ("recast" if has[task.provenance.parent_id] else "replan")
        assert task.initial_config == next(s for s in seeds if s.id == task.provenance.parent_id).initial_config


# ------------------------------------------------------------------------ populations of the examples


@pytest.fixture(scope="module")
def recasts():
    """Every example environment's seeds, one variant each, all recast (about 1 s an environment)."""
    out = {}
    for folder, key in EXAMPLE_ENVS.items():
        sys.path.insert(0, str(EXAMPLES / folder))
        seeds = read_tasks(EXAMPLES / folder / "seeds.jsonl")
        pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=1, workers=1, seed=5, recast=1.0))
        out[key] = (seeds, pipeline(seeds), pipeline.report())
    yield out
    for folder in EXAMPLE_ENVS:
        sys.path.remove(str(EXAMPLES / folder))


def _values(task: Task) -> list:
    calls = [c for turn in parse_ground_truth(task) for c in turn]
    return leaves(task.initial_config) + [v for c in calls for v in leaves([*c.args, *c.arguments.values()])]


def _value_words(task: Task) -> set[str]:
    """The words a message may say a value of `task` with: its values' own, a number's digits, a date's prose."""
    out = set()
    for value in _values(task):
        if isinstance(value, str):
            out |= {w.lower() for w in re.findall(r"[A-Za-z]+|\d+", value)}
            day = as_date(value)
            if day is not None:
                out |= {calendar.month_name[day.month].lower(), calendar.month_abbr[day.month].lower(),
                        str(day.day), f"{day.day}th", f"{day.day}st", f"{day.day}nd", f"{day.day}rd", str(day.year)}
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out |= set(re.findall(r"\d+", f"{value:,.2f} {value}"))
    return out


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]+|\d+(?:st|nd|rd|th)?", text.lower())


def _only_values_differ(before: Task, after: Task, seed: Task, variant: Task) -> None:
    """Each message of `after` is its counterpart in `before` but for words of values (of `seed`'s there, of
    `variant`'s here)."""
    olds, news = _value_words(seed), _value_words(variant)
    for turn0, turn1 in zip(before.question, after.question, strict=True):
        for m0, m1 in zip(turn0, turn1, strict=True):
            w0, w1 = _words(m0.content), _words(m1.content)
            for op, i0, i1, j0, j1 in difflib.SequenceMatcher(a=w0, b=w1, autojunk=False).get_opcodes():
                if op != "equal":
                    assert set(w0[i0:i1]) <= olds | {"s"} and set(w1[j0:j1]) <= news | {"s"}, \
                        (variant.id, w0[i0:i1], w1[j0:j1])


#: The populations take about 35 s: their tests share one worker, so the fixture is built once, not once per worker.
RECAST_POPULATIONS = pytest.mark.xdist_group("recast_populations")


@RECAST_POPULATIONS
@pytest.mark.parametrize("key", sorted(EXAMPLE_ENVS.values()))
def test_recasts_keep_their_seed_s_calls_and_words_and_change_its_values(recasts, key):
    seeds, accepted, report = recasts[key]
    by_id = {s.id: s for s in seeds}
    recast = [v for v in accepted if v.provenance.strategy == "recast"]
    assert recast, (key, report["rejections"])
    assert report["strategies"]["recast"]["accepted"] == len(recast)
    # a variant drawn as a recast is re-planned only where nothing of its seed's own could change
    assert len(accepted) - len(recast) <= report["recast_unavailable"]
    words = vocabulary_of(key)
    for variant in recast:
        seed = by_id[variant.provenance.parent_id]
        assert validate_task(variant) == []
        # another errand: its words or its calls differ from its seed's, not only the state around them
        assert (variant.question, variant.ground_truth) != (seed.question, seed.ground_truth), variant.id
        assert [c.name for t in parse_ground_truth(variant) for c in t] == [c.name for t in parse_ground_truth(seed)
                                                                             for c in t]
        assert profile_of(variant).matches(profile_of(seed)), variant.id
        # every argument keeps its type: a count of 3 never comes out as 3.0 (numbers are mapped by value)
        for before, after in zip([c for t in parse_ground_truth(seed) for c in t],
                                 [c for t in parse_ground_truth(variant) for c in t]):
            assert {p: type(v) for p, v in before.arguments.items()} == \
                {p: type(v) for p, v in after.arguments.items()}, (variant.id, before, after)
        # what it keeps of its seed is only the world around the task: nothing its calls pass or its words name
        seed_calls = [c for t in parse_ground_truth(seed) for c in t]
        touched = touched_values(seed.initial_config, said_values(seed_calls),
                                 message_text([[m.model_dump() for m in turn] for turn in seed.question]))
        # a number the words say that the state holds only for another thing: the state keeps it, the calls re-draw
        kept = coincident(seed.initial_config, seed_calls) & {v for v in touched if isinstance(v, (int, float))
                                                               and is_distinctive(v, frozenset())}
        copied = copied_values(seed, variant, returned_values(trace_task(variant)))
        assert not [v for v in copied if json.loads(v) in touched and json.loads(v) not in kept], variant.id
        for before, after in zip(seed_calls, [c for t in parse_ground_truth(variant) for c in t]):
            same = [p for p, v in before.arguments.items()
                    if isinstance(v, (int, float)) and v in kept and after.arguments.get(p) == v]
            assert not same, (variant.id, before, after)
        # no value of the seed that the variant changed is said in its messages
        changed = {old for old, new in paired(_values(seed), _values(variant))
                   if old != new and isinstance(old, str) and (is_distinctive(old, words) or as_date(old))}
        changed -= set(_values(variant))  # a date moved onto another of the seed's is the variant's own
        for turn in variant.question:
            for message in turn:
                said = [old for old in changed if re.search(rf"(?<!\w){re.escape(old)}(?!\w)", message.content)]
                assert not said, (variant.id, said, message.content)
        # ... and its messages are the seed's but for the words of values
        _only_values_differ(seed, variant, seed, variant)
        # a renamed person's old name is nowhere in the new world: not in an email, a company, a note
        left = _old_name_words(seed, variant)
        assert not left, (variant.id, left)


def _old_name_words(seed: Task, variant: Task) -> list[tuple[str, str]]:
    """(word, value) where a word of a person the recast renamed is still in a value of its state or its calls (a new
    customer's email): capitalised in text, in any case inside an email or a handle."""
    renamed = {w0 for old, new in paired(seed.initial_config, variant.initial_config)
               if isinstance(old, str) and isinstance(new, str) and old != new and is_person_name(old)
               for w0, w1 in zip(old.split(), new.split()) if len(w0) >= 3 and w0 != w1}
    new_names = {v for _, v in paired(seed.initial_config, variant.initial_config) if isinstance(v, str)
                 and is_person_name(v)}
    out = []
    calls = [c for turn in parse_ground_truth(variant) for c in turn]
    for value in leaves(variant.initial_config) + [v for c in calls for v in leaves([*c.args, *c.arguments.values()])]:
        if not isinstance(value, str) or value in new_names:
            continue
        for token in value.split():
            runs = re.findall(r"[A-Za-z]+", token.lower()) if "@" in token else re.findall(r"[A-Z][a-z]+", token)
            out += [(w, value) for w in renamed if w.lower() in {r.lower() for r in runs}]
    return out


def test_the_template_backend_recasts_by_default_and_a_set_share_is_kept():
    """Re-planned requests put together by the template backend read coherent in no blind read (0 of 25): it
    recasts whatever it can unless told otherwise; a seed with nothing of its own to change is re-planned."""
    assert Pipeline(make_backend("template"), SynthConfig()).recast_share == 1.0
    assert Pipeline(make_backend("template"), SynthConfig(recast=0.25)).recast_share == 0.25
    assert Pipeline(make_backend("template"), SynthConfig(recast=0)).recast_share == 0


def test_recast_zero_leaves_the_pipeline_as_it_was_and_re_planned_variants_unmoved():
    """With recast 0 no variant is a recast; with 0.5 each re-planned variant is the one recast 0 makes there (the
    draw is taken beside the variant's random stream, not from it)."""
    sys.path.insert(0, str(EXAMPLES / "byo_env"))
    try:
        seeds = read_tasks(EXAMPLES / "byo_env" / "seeds.jsonl")
        runs = {}
        for share in (0.0, 0.5):
            pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=1, workers=1, seed=1, recast=share))
            runs[share] = (pipeline(seeds), pipeline.report())
    finally:
        sys.path.remove(str(EXAMPLES / "byo_env"))
    plain, report = runs[0.0]
    assert {t.provenance.strategy for t in plain} == {"replan"} and set(report["strategies"]) == {"replan"}
    mixed, report = runs[0.5]
    assert set(report["strategies"]) == {"replan", "recast"}
    replanned = {t.provenance.parent_id: t for t in mixed if t.provenance.strategy == "replan"}
    assert replanned
    for task in plain:
        if task.provenance.parent_id in replanned:
            assert replanned[task.provenance.parent_id].model_dump() == task.model_dump()


@RECAST_POPULATIONS
def test_stats_and_provenance_record_the_strategy(recasts, tmp_path):
    seeds, accepted, report = recasts["box_office:BoxOffice"]
    rows = report["strategies"]
    assert rows["recast"]["tried"] == report["variants"] and rows["recast"]["accepted"] == report["accepted"]
    assert rows["recast"]["acceptance_rate"] == report["accepted"] / report["variants"]
    assert all(r.startswith("recast:") for r in report["rejections"])
    assert report["attempts"]["recast"] >= report["passed"]["recast"] >= report["accepted"]
    write_tasks(tmp_path / "variants.jsonl", accepted)
    assert [t.provenance.strategy for t in read_tasks(tmp_path / "variants.jsonl")] == ["recast"] * len(accepted)
    old = seeds[0].model_dump(mode="json")
    old["provenance"].pop("strategy")  # a task file written before strategies loads as it was
    assert Task.model_validate(old).provenance.strategy is None


def test_a_slice_s_recast_is_that_turn_of_a_recast_episode():
    sys.path.insert(0, str(EXAMPLES / "box_office"))
    try:
        seeds = read_tasks(EXAMPLES / "box_office" / "seeds.jsonl")
        slices = [p for s in seeds for p in task_slices(s) if p.provenance.slice_turn == 1]
        pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=1, workers=1, seed=5, recast=1.0))
        accepted = pipeline(slices)
    finally:
        sys.path.remove(str(EXAMPLES / "box_office"))
    assert accepted, pipeline.report()["rejections"]
    by_id = {s.id: s for s in slices}
    for piece in accepted:
        seed = by_id[piece.provenance.parent_id]
        assert piece.provenance.strategy == "recast" and piece.provenance.slice_turn == 1
        assert [m.role for m in piece.question[0]] == [m.role for m in seed.question[0]]
        episode, seed_episode = slice_source(piece), slice_source(seed)
        assert episode is not None and seed_episode is not None
        # the slice is the last turn of its episode, and that episode is a recast of the seed slice's episode
        assert piece.ground_truth[0] == episode.ground_truth[-1]
        assert piece.question[0][-1].content == episode.question[-1][-1].content
        _only_values_differ(seed_episode, episode, seed_episode, episode)
        assert [c.name for t in parse_ground_truth(episode) for c in t] == [
            c.name for t in parse_ground_truth(seed_episode) for c in t]


def test_a_phrase_the_messages_tell_stays_and_a_fraction_is_no_code():
    """The maintenance read: a work order for a grinding fan took another seed's description of a dripping sink,
    and a '1/2 HP' disposal came out as '9/1 HP'."""
    import random

    from rods.synth.recast import tells_of
    from rods.synth.values import ValueRemapper

    told = "Samuel says his bathroom fan has started making an awful grinding noise whenever it runs."
    assert tells_of(told, "Bathroom exhaust fan makes a grinding noise when it runs", frozenset())
    assert not tells_of(told, "Pipe under the kitchen sink drips steadily into a bucket", frozenset())
    remapper = ValueRemapper(random.Random(0), frozenset(), [])
    note = remapper._renumbered("Fitted a new 1/2 HP unit at 1428 Larch Street, 3/4 inch pipe", every=True)
    assert "1/2 HP" in note and "3/4 inch" in note and "1428" not in note
    # a postal code goes with the city the words keep
    address = remapper._renumbered("123 Pine St, San Francisco, CA 94016", every=True)
    assert address.endswith("San Francisco, CA 94016") and not address.startswith("123 ")
    assert remapper._renumbered("notes_2024.txt", every=True) in ("notes_2023.txt", "notes_2025.txt")
    assert " 2024 report " in remapper._renumbered("Q3 2024 report 118", every=True)  # a year beside others stays
    assert remapper._renumbered("card 4111 exp 12/26", every=True).endswith("exp 12/26")
    assert remapper._renumbered("12/2028", every=True) == "12/2028"  # draw 2020: "December 2028" was '47/2028'
    # the held-out restaurant, both readers: a UK mobile '07911 204887' came out as '06...' and '03...'
    assert remapper._renumbered("07911 204887", every=False).startswith("07")
    for phone in ("509-555-0178", "(509) 555-0178"):
        new = remapper._renumbered(phone, every=False)
        assert new != phone and new.startswith(phone[:5]) and len(new) == len(phone), new
    # one digit is an ordinal more often than not: it stays one of 1-4 (not 'Quarter6_Reports')
    for seed in range(20):
        renamed = ValueRemapper(random.Random(seed), frozenset(), [])._renumbered("Quarter1_Reports", every=True)
        assert renamed != "Quarter1_Reports" and renamed[7] in "234", renamed


@pytest.mark.parametrize("seed_id", ["multi_turn_base_63", "multi_turn_miss_func_90"])
def test_an_amount_worked_out_from_a_result_follows_the_recast_s_own_result(train_tasks, seed_id):
    """The BFCL 8484 read: 148 litres asked for, 43.85 gallons filled, the figure of the seed's 166 litres. The seed
    filled the conversion's result rounded (to hundredths; to a whole number, 40.0 of 39.63): so does the recast."""
    seed = next(t for t in train_tasks if t.id == seed_id)
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=3, workers=1, seed=4, recast=1.0))
    variants = [v for v in pipeline([seed]) if v.provenance.strategy == "recast"]
    assert variants, pipeline.report()["rejections"]
    places = 2 if seed_id.endswith("63") else 0
    for variant in variants:
        calls = [c for turn in parse_ground_truth(variant) for c in turn]
        litres = next(c for c in calls if c.name == "liter_to_gallon").arguments["liter"]
        filled = next(c for c in calls if c.name == "fillFuelTank").arguments["fuelAmount"]
        assert filled == round(litres * 0.264172, places), (litres, filled)
        assert validate_task(variant) == []


def test_a_number_written_as_a_threshold_stays_and_a_quoted_username_follows_its_rename():
    """The BFCL 9595 read: "if any tire is under 35 PSI" became "under 30 PSI" beside tires of 30 and 32 (a state
    number of 35 elsewhere made 35 a value of the task); a user who logs in as 'john' named the account's new
    username in the call while the words still said 'john' (a word the environment's vocabulary holds)."""
    from rods.synth.mentions import Mentions
    from rods.synth.value_kinds import vocabulary_of

    text = "If any tire pressure is under 35 PSI, find a shop. Also move my 35 photos."
    assert touched_values({"humidity": 35.0}, [], "If any tire pressure is under 35 PSI, find a shop.") == frozenset()
    assert touched_values({"humidity": 35.0}, [], text) == frozenset({35.0})  # said as a value too
    words = vocabulary_of("TwitterAPI")
    assert not is_distinctive("john", words)  # why the words kept it
    said = "Post it from my account with username 'john' and password 'john1234'."
    mentions = Mentions.of([("john", "michael_t"), ("john1234", "john1141")], {}, words, said)
    assert mentions.apply(said)[0] == "Post it from my account with username 'michael_t' and password 'john1141'."


CELLAR = textwrap.dedent('''
    from rods.envs import tool

    class Cellar:
        """A restaurant's private room, for 10 to 24 guests."""

        def __init__(self, events: dict | None = None):
            self.events = events or {}

        @tool("write")
        def book_event(self, host: str, covers: int) -> dict:
            """Book the private room for a party."""
            if not 10 <= covers <= 24:
                raise ValueError(f"The room takes 10 to 24 guests; {covers} does not fit.")
            event_id = f"EV-{301 + len(self.events)}"
            self.events[event_id] = {"host": host, "covers": covers}
            return {"event_id": event_id, "covers": covers}
''')


def test_a_recast_the_environment_refuses_is_drawn_again(tmp_path):
    """The held-out restaurant (draw 2222): "There'll be 20 of us" drawn as 40 in a room for 10 to 24 failed both
    variants of the seed. A draw the environment refuses when run is drawn again (`RECAST_TRIES`); a seed whose
    draws the room always refuses still fails, counted as its refusal."""
    from rods.synth.pipeline import RECAST_TRIES

    (tmp_path / "rc_cellar.py").write_text(CELLAR)
    sys.path.insert(0, str(tmp_path))
    try:
        def seed(covers: int) -> Task:
            return Task.model_validate({
                "id": f"cellar-{covers}", "category": "base", "environment": "rc_cellar:Cellar",
                "question": [[{"role": "user", "content": f"Book the room for Henrik Lindqvist, {covers} of us."}]],
                "ground_truth": [[f"book_event(host='Henrik Lindqvist', covers={covers})"]],
                "initial_config": {"rc_cellar:Cellar": {"events": {"EV-300": {"host": "Ana Reyes", "covers": 12}}}}})

        pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=12, workers=1, seed=3, recast=1.0))
        accepted = pipeline([seed(20)])
        report = pipeline.report()
        assert RECAST_TRIES > 1 and report["attempts"]["execute"] > report["strategies"]["recast"]["tried"]
        assert len(accepted) >= 9, report["rejections"]  # one draw each: 4 of 12 (only 10 of 10 or 30 fits)
        assert report["rejections"].get("recast:execution:book_event", 0) == 12 - len(accepted)
        for variant in accepted:
            covers = parse_ground_truth(variant)[0][0].arguments["covers"]
            assert 10 <= covers <= 24 and covers != 20 and f"{covers} of us" in variant.question[0][0].content
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("rc_cellar", None)


def test_a_day_of_the_month_said_with_its_weekday_is_that_date_s():
    """The driving school read (both readers): "this Saturday (the 17th)" of a lesson on Saturday 2025-05-17 became
    "the 8th": a payment on Thursday 2025-04-17 shared the form "the 17th" and was mapped first."""
    from rods.synth.mentions import Mentions

    text = "I've got my lesson this Saturday (the 17th) at 10, could we move it to Thursday 2025-05-22?"
    pairs = [("2025-04-17", "2025-05-08"), ("2025-05-17", "2025-06-07"), ("2025-05-22", "2025-06-12")]
    new, left = Mentions.of(pairs, {}, frozenset(), text).apply(text)
    assert "this Saturday (the 7th)" in new and "Thursday 2025-06-12" in new and not left
