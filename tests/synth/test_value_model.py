"""The value model (rods.synth.value_model): what a value of an environment may be, inferred from the environment.

A hotel class written here (nobody's example) shows each source of inference; the populations of every example
environment show that accepted variants stay in their domain (the forms the blind reads failed: a category value
outside its set, a person named with words for things, a day far from today, a plan that undoes its own write).
"""

from __future__ import annotations

import random
import re
import sys
import textwrap
from pathlib import Path

import pytest

from rods.llm import make_backend
from rods.synth.api_graph import function_docs, graph_for
from rods.synth.coherence import Coherence
from rods.synth.declared import class_source
from rods.synth.people import is_person_name
from rods.synth.pipeline import Pipeline
from rods.synth.profile import trace_task
from rods.synth.settings import SynthConfig
from rods.synth.value_kinds import leaves, vocabulary_of
from rods.synth.value_model import ValueModel, slot_paths
from rods.synth.values import ValueRemapper
from rods.tasks import Task, read_tasks

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

HOTEL = textwrap.dedent('''
    from typing import Literal
    from rods.envs import tool

    DISCOUNTS = {"standard": 0.0, "silver": 0.05, "gold": 0.1}

    class Hotel:
        def __init__(self, today: int = 1, rooms: dict | None = None, guests: dict | None = None,
                     stays: dict | None = None) -> None:
            self.today = today
            self.rooms = rooms or {}
            self.guests = guests or {}
            self.stays = stays or {}

        @tool("read")
        def find_rooms(self, room_type: Literal["single", "double", "twin", "suite"], nights: int) -> list:
            """Free rooms of a type.

            Args:
                room_type: the kind of room.
                nights: how many nights.
            """
            return sorted(r for r, v in self.rooms.items() if v["type"] == room_type and not v["taken"])

        @tool("write")
        def book(self, room: str, guest: str, day: int, nights: int, board: str = "none") -> str:
            """Book a room for a guest.

            Args:
                room: the room number.
                guest: the guest's id.
                day: the day of arrival.
                nights: how many nights.
                board: meals, one of 'none', 'breakfast' or 'half'.
            """
            if board not in {"none", "breakfast", "half"}:
                raise ValueError("no such board")
            if day < self.today:
                raise ValueError("in the past")
            self.rooms[room]["taken"] = True
            key = f"S{len(self.stays) + 101}"
            off = DISCOUNTS[self.guests[guest]["tier"]]
            self.stays[key] = {"room": room, "guest": guest, "day": day, "nights": nights, "board": board,
                               "price": round(self.rooms[room]["rate"] * nights * (1 - off), 2)}
            return key

        @tool("write")
        def cancel_stay(self, stay_id: str) -> str:
            """Cancel a stay."""
            self.rooms[self.stays[stay_id]["room"]]["taken"] = False
            del self.stays[stay_id]
            return f"{stay_id} cancelled"

        @tool("read")
        def guest_record(self, guest: str) -> dict:
            """A guest's record."""
            return self.guests[guest]
''')


@pytest.fixture(scope="module")
def hotel(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hotel")
    (folder / "vm_hotel.py").write_text(HOTEL)
    sys.path.insert(0, str(folder))
    state = {"today": 12,
             "rooms": {"101": {"type": "single", "rate": 80.0, "taken": False},
                       "102": {"type": "double", "rate": 120.0, "taken": True},
                       "103": {"type": "double", "rate": 125.0, "taken": False},
                       "201": {"type": "suite", "rate": 310.0, "taken": False}},
             "guests": {"G-17": {"name": "Amelia Kowalski", "tier": "gold"},
                        "G-23": {"name": "Tomas Herrera", "tier": "standard"},
                        "G-31": {"name": "Yuki Tanaka", "tier": "silver"}},
             "stays": {"S100": {"room": "102", "guest": "G-23", "day": 11, "nights": 3, "board": "breakfast",
                                "price": 360.0}}}
    seeds = [Task.model_validate({
        "id": f"hotel-{i}", "category": "base", "environment": "vm_hotel:Hotel",
        "question": [[{"role": "user", "content": q}] for q in questions],
        "ground_truth": truth, "initial_config": {"vm_hotel:Hotel": state}})
        for i, (questions, truth) in enumerate([
            (["Any double rooms free for two nights?", "Book it for G-17 from day 14, breakfast included."],
             [["find_rooms(room_type='double', nights=2)"],
              ["book(room='103', guest='G-17', day=14, nights=2, board='breakfast')"]]),
            (["What does Yuki Tanaka's record say?", "Put G-31 in the suite for 4 nights from day 15."],
             [["guest_record(guest='G-31')"], ["book(room='201', guest='G-31', day=15, nights=4)"]]),
        ])]
    yield "vm_hotel:Hotel", seeds
    sys.path.remove(str(folder))
    sys.modules.pop("vm_hotel", None)


def model_of(key: str, seeds: list[Task]) -> ValueModel:
    return ValueModel.infer(seeds, function_docs([key]), {key: class_source(key)})


def test_categories_come_from_hints_docstrings_code_and_repeats(hotel):
    key, seeds = hotel
    model = model_of(key, seeds)
    # a Literal hint
    assert model.parameter("find_rooms", "room_type").members == {"single", "double", "twin", "suite"}
    # the field the seeds' values flow from takes the hint's set too: a twin room is a room type
    assert model.links["find_rooms.room_type"] == f"{key}/rooms/*/type"
    assert model.field(f"{key}/rooms/*/type").kind == "category"
    assert "twin" in model.field(f"{key}/rooms/*/type").members
    # a set the docstring lists, and the one the code compares against
    assert model.parameter("book", "board").members == {"none", "breakfast", "half"}
    # a dict of the module the code looks a field up in: the loyalty tiers
    tiers = model.field(f"{key}/guests/*/tier")
    assert tiers.kind == "category" and tiers.members >= {"standard", "silver", "gold"}


def test_people_dates_and_quantities_are_told_apart(hotel):
    key, seeds = hotel
    model = model_of(key, seeds)
    assert model.field(f"{key}/guests/*/name").kind == "person"
    assert model.today == {key: f"{key}/today"}
    day = model.field(f"{key}/stays/*/day")
    assert day.kind == "date" and day.offsets == (-1, -1)
    assert model.parameter("book", "day").kind == "date" and model.parameter("book", "day").offsets == (2, 3)
    rate = model.field(f"{key}/rooms/*/rate")
    assert rate.kind == "quantity" and (rate.low, rate.high) == (80.0, 310.0)
    assert model.field(f"{key}/rooms/#key").kind == "identifier"


def test_the_seeds_themselves_break_nothing_and_the_forms_that_left_the_domain_are_caught(hotel):
    key, seeds = hotel
    model = model_of(key, seeds)
    assert [model.violations(s) for s in seeds] == [[], []]
    broken = seeds[0].model_copy(deep=True)
    state = broken.initial_config[key]
    state["rooms"]["101"]["type"] = "worksheets"
    state["guests"]["G-17"]["name"] = "Newsletters Quotes"
    state["guests"]["G-17"]["tier"] = "timesheets"
    broken.ground_truth[1] = ["book(room='103', guest='G-17', day=131, nights=2, board='breakfast')"]
    found = "\n".join(model.violations(broken))
    assert "'worksheets' is none of" in found and "'timesheets' is none of" in found
    assert "'Newsletters Quotes' is no person's name" in found
    assert "131" in found and "days from today" in found


def test_a_remapped_state_keeps_categories_people_and_its_distances_from_today(hotel):
    key, seeds = hotel
    model = model_of(key, seeds)
    state = seeds[0].initial_config[key]
    for seed in range(10):
        remapper = ValueRemapper(random.Random(seed), vocabulary_of(key), model=model)
        new = remapper.remap(state, key)
        assert sorted(r["type"] for r in new["rooms"].values()) == sorted(r["type"] for r in state["rooms"].values())
        assert {g["tier"] for g in new["guests"].values()} == {"gold", "standard", "silver"}
        assert all(is_person_name(g["name"]) for g in new["guests"].values())
        assert {g["name"] for g in new["guests"].values()}.isdisjoint({g["name"] for g in state["guests"].values()})
        stay = next(iter(new["stays"].values()))
        assert stay["day"] - new["today"] == -1  # as far from today as in the seed
        assert new["today"] != state["today"]


def test_no_human_seed_of_any_shipped_environment_leaves_its_model():
    """The model is learned from the seeds and must admit every one of them: BFCL's 800 tasks (the model of its
    train split), tau2's airline and retail tasks, every example's seeds. A family name alone ('Johnson', a
    last-name parameter) is a name; a people search for a team ('Platform') makes that parameter no person's."""
    from rods.synth.api_graph import reference_graph
    from rods.tasks import load_split

    bfcl = reference_graph("bfcl").values
    assert [v for task in load_split("all") for v in bfcl.violations(task)] == []
    folders = {"tau2_airline": ("train.jsonl", "test.jsonl"), "tau2_retail": ("train.jsonl", "test.jsonl"),
               **{folder: ("seeds.jsonl",) for folder in EXAMPLE_ENVS}}
    for folder, files in folders.items():
        sys.path.insert(0, str(EXAMPLES / folder))
        try:
            seeds = [t for name in files for t in read_tasks(EXAMPLES / folder / name)]
            model = graph_for(seeds[0].environment, seeds).values
            assert {s.id: model.violations(s) for s in seeds} == {s.id: [] for s in seeds}, folder
        finally:
            sys.path.remove(str(EXAMPLES / folder))


# ------------------------------------------------------------------------ populations of the examples


EXAMPLE_ENVS = {"clinic": "clinic:Clinic", "warehouse": "warehouse:Warehouse",
                "calendar_invites": "team_calendar:TeamCalendar", "byo_env": "library:Library",
                "bikeshare": "bikeshare:BikeShare", "car_rental": "car_rental:CarRental"}


#: The populations fixture takes about 100 s: its tests share one worker, so it is built once, not once per worker.
EXAMPLE_POPULATIONS = pytest.mark.xdist_group("example_populations")


@pytest.fixture(scope="module")
def populations():
    out = {}
    for folder, key in EXAMPLE_ENVS.items():
        sys.path.insert(0, str(EXAMPLES / folder))
        seeds = read_tasks(EXAMPLES / folder / "seeds.jsonl")
        pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=2, workers=2, seed=5))
        out[key] = (seeds, pipeline(seeds))
    yield out
    for folder in EXAMPLE_ENVS:
        sys.path.remove(str(EXAMPLES / folder))


@EXAMPLE_POPULATIONS
@pytest.mark.parametrize("key", sorted(EXAMPLE_ENVS.values()))
def test_accepted_variants_of_every_example_stay_in_their_domain(populations, key):
    seeds, accepted = populations[key]
    assert accepted, f"{key}: no variant accepted"
    model = graph_for(key, seeds).values
    assert {v.id: model.violations(v) for v in accepted} == {v.id: [] for v in accepted}
    people = [p for p, slot in model.fields.items() if slot.kind == "person"]
    assert people, f"{key}: no field of people found"
    seed_people = model.people
    for variant in accepted:
        for path, value in _values_at(variant, people):
            assert is_person_name(value, seed_people), (variant.id, path, value)  # a first name of its seeds too


@EXAMPLE_POPULATIONS
@pytest.mark.parametrize("key", sorted(EXAMPLE_ENVS.values()))
def test_no_accepted_variant_undoes_its_own_write_more_than_its_seed(populations, key):
    seeds, accepted = populations[key]
    by_id = {s.id: s for s in seeds}
    rules = Coherence.learned(seeds)
    for variant in accepted:
        seed = by_id[variant.provenance.parent_id]
        assert len(rules.undone_writes(trace_task(variant))) <= len(rules.undone_writes(trace_task(seed))), variant.id


@EXAMPLE_POPULATIONS
def test_a_branch_named_for_its_city_stays_in_that_city(populations):
    """The car-rental read: 'Hartford Logan Airport' in Boston. A name's word that is its record's city stays."""
    seeds, accepted = populations["car_rental:CarRental"]
    cities = {b["city"] for s in seeds for b in s.initial_config["car_rental:CarRental"]["branches"].values()}
    for variant in accepted:
        for branch in variant.initial_config["car_rental:CarRental"]["branches"].values():
            named = [w for w in branch["name"].split() if w in cities]
            assert named in ([], [branch["city"]]), (variant.id, branch)


def _values_at(task: Task, paths: list[str]):
    for owner, state in task.initial_config.items():
        for path, value in slot_paths(owner, state):
            if path in paths:
                yield path, value


def test_the_letters_that_open_ids_of_one_kind_are_the_kind_and_stay():
    """The school-bus read: student STU-40263 came back as ZRW-94304. Letters that open two or more ids name the
    kind of record; a remapped id keeps them and takes new digits."""
    from rods.synth.values import ValueRemapper

    sys.path.insert(0, str(EXAMPLES / "school_bus"))
    try:
        seeds = read_tasks(EXAMPLES / "school_bus" / "seeds.jsonl")
        model = graph_for(seeds[0].environment, seeds).values
        assert {"STU", "BUS", "DRV"} <= model.id_letters
        remapper = ValueRemapper(random.Random(3), frozenset(), avoid=["STU-40263"], model=model)
        new = remapper.text("STU-40263")
        assert re.fullmatch(r"STU-\d{5}", new) and new != "STU-40263", new
    finally:
        sys.path.remove(str(EXAMPLES / "school_bus"))


def test_people_whose_first_names_no_generator_knows_are_people_by_their_names_shape():
    """The self-storage read: tenants named Kwame Mensah, Aroha Ngata, Mei-Ling Chen, Sofía Castillo (12 of 27 first
    names unknown to Faker) made the field 'other', and their names came back as 'Orders Proofsć'."""
    tenants = ["Kwame Mensah", "Aroha Ngata", "Mei-Ling Chen", "Sofía Castillo", "Carlos Mendoza", "Hannah Goldberg",
               "Lukas Becker", "Yuki Tanaka", "Olusegun Adeyemi"]
    state = {"tenants": {f"T-{1000 + i}": {"name": n, "unit": f"A-{10 + i}"} for i, n in enumerate(tenants)}}
    task = Task.model_validate({"id": "t-0", "category": "base", "environment": "st:Storage",
                                "question": [[{"role": "user", "content": "hi"}]], "ground_truth": [[]],
                                "initial_config": {"st:Storage": state}})
    model = ValueModel.infer([task], {})
    assert model.field("st:Storage/tenants/*/name").kind == "person"
    titles = {"tenants": {f"T-{i}": {"name": t} for i, t in enumerate(
        ["Harbor Trip", "Garden Plan", "Winter Reading", "Tax Receipts"])}}
    task = task.model_copy(update={"initial_config": {"st:Storage": titles}})
    assert ValueModel.infer([task], {}).field("st:Storage/tenants/*/name").kind != "person"


def test_years_stay_years():
    """The youth-league read: a division's birth years [2014, 2015] came back as [2015, 2020], over the next one's."""
    import random

    from rods.synth.values import ValueRemapper

    state = {"divisions": {"U10": {"birth_years": [2016, 2017], "fee": 120}, "U12": {"birth_years": [2014, 2015],
                                                                                    "fee": 150}}}
    task = Task.model_validate({"id": "y-0", "category": "base", "environment": "yl:League",
                                "question": [[{"role": "user", "content": "hi"}]], "ground_truth": [[]],
                                "initial_config": {"yl:League": state}})
    model = ValueModel.infer([task], {})
    assert model.field("yl:League/divisions/*/birth_years/[]").year
    assert not model.field("yl:League/divisions/*/fee").year
    for seed in range(10):
        remapper = ValueRemapper(random.Random(seed), frozenset(), avoid=[2014, 2015, 2016, 2017, 120, 150],
                                 model=model)
        new = remapper.remap(state, "yl:League")
        assert [d["birth_years"] for d in new["divisions"].values()] == [[2016, 2017], [2014, 2015]]


def test_a_calendar_the_seeds_share_stays_where_it_is_and_records_dates_move():
    """The permit-office read: holidays keyed by date moved by weeks (Memorial Day on May 4). A map keyed by dates
    that two different seed states share a date of is a calendar; a record's date (an inspection) still moves."""
    import random

    from rods.synth.values import ValueRemapper

    def state(today: str, holidays: dict, inspection: str) -> dict:
        return {"today": today, "holidays": holidays, "inspections": {"IN-1": {"date": inspection}}}

    spring = {"2026-05-25": "Memorial Day", "2026-07-03": "Independence Day (observed)"}
    states = [state("2026-05-19", spring, "2026-05-27"), state("2026-06-02", {**spring, "2026-06-19": "Juneteenth"},
                                                                "2026-06-04")]
    tasks = [Task.model_validate({"id": f"p-{i}", "category": "base", "environment": "po:Office",
                                  "question": [[{"role": "user", "content": "hi"}]], "ground_truth": [[]],
                                  "initial_config": {"po:Office": s}}) for i, s in enumerate(states)]
    model = ValueModel.infer(tasks, {})
    assert model.fixed_dates == {"2026-05-25", "2026-07-03", "2026-06-19"}
    remapper = ValueRemapper(random.Random(0), frozenset(), model=model)
    new = remapper.remap(states[1], "po:Office")
    assert new["holidays"] == states[1]["holidays"]
    assert new["today"] != "2026-06-02" and new["inspections"]["IN-1"]["date"] != "2026-06-04"


def test_places_the_code_declares_are_a_category_and_its_rates_stay():
    """The allotment society's read: its sites 'Canal Bank', 'Hollins Lane' look like people's names and were
    renamed 'Leopoldo Quero' (every recast that named one failed to run), and a full plot's rent of £96, the class's
    own table, was re-drawn as £87 beside a concession's £48."""
    import random

    source = textwrap.dedent('''
        SITES = ("Hollins Lane", "Rookery Field", "Canal Bank")
        RENT = {"full": 96.0, "half": 52.0}

        class Society:
            def vacant(self, site):
                if site not in SITES:
                    raise ValueError(site)
    ''')
    plots = {f"{s[0]}-{i:02d}": {"site": s, "size": "full" if i % 2 else "half", "tenant": n}
             for i, (s, n) in enumerate(zip(["Hollins Lane", "Canal Bank", "Rookery Field", "Canal Bank"] * 2,
                                            ["Gary Pollard", "Li Wei", "Ana Reyes", "Tom Hebden"] * 2))}
    state = {"plots": plots, "invoices": {"INV-0401": {"amount": 96.0}, "INV-0402": {"amount": 48.0}}}
    task = Task.model_validate({"id": "a-0", "category": "base", "environment": "al:Society",
                                "question": [[{"role": "user", "content": "hi"}]], "ground_truth": [[]],
                                "initial_config": {"al:Society": state}})
    model = ValueModel.infer([task], {}, {"al:Society": source})
    slot = model.field("al:Society/plots/*/site")
    assert slot.kind == "category" and slot.members == {"Hollins Lane", "Rookery Field", "Canal Bank"}
    assert model.rates == {96.0, 52.0}
    new = ValueRemapper(random.Random(3), frozenset(), avoid=[96.0, 48.0], model=model).remap(state, "al:Society")
    assert sorted(v["amount"] for v in new["invoices"].values())[1] == 96.0  # the table's rate; 48 is re-drawn
    assert {p["site"] for p in new["plots"].values()} <= slot.members


def test_a_list_of_holidays_is_the_calendar_s_and_a_house_number_follows_its_address():
    """The council's waste desk read: moved two weeks, its `bank_holidays` put Christmas on 8 January (one reader
    failed the variant for it)."""
    import random

    state = {"today": "2026-04-02", "bank_holidays": ["2025-12-25", "2026-04-03", "2026-04-06"],
             "properties": {"P-1": {"address": "31 Bridge Street", "due": "2026-04-09"}}}
    task = Task.model_validate({"id": "w-0", "category": "base", "environment": "ws:Desk",
                                "question": [[{"role": "user", "content": "hi"}]], "ground_truth": [[]],
                                "initial_config": {"ws:Desk": state}})
    model = ValueModel.infer([task], {})
    assert {"2025-12-25", "2026-04-03", "2026-04-06"} <= model.fixed_dates and "2026-04-09" not in model.fixed_dates
    remapper = ValueRemapper(random.Random(2), frozenset(), avoid=leaves(state), model=model)
    remapper.like_seed, remapper.touched, remapper.shift = True, frozenset({"31 Bridge Street", "31"}), 14
    new = remapper.remap(state, "ws:Desk")
    assert new["bank_holidays"] == state["bank_holidays"] and new["today"] == "2026-04-16"
    street = new["properties"]["P-1"]["address"]
    assert street != "31 Bridge Street" and remapper.text("31") == street.split()[0]  # the call's house follows
