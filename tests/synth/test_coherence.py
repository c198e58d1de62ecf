"""The coherence rules (rods.synth.coherence): each detector fails on a hand-made bad task, human seeds mostly pass,
and no variant the pipeline accepts breaks one."""

import json

import pytest
from synth.conftest import stratified

from rods.llm import make_backend
from rods.synth.coherence import KINDS, Coherence
from rods.synth.pipeline import Pipeline
from rods.synth.profile import trace_task
from rods.synth.retelling import retelling, retellings, retold_shape
from rods.synth.settings import SynthConfig
from rods.tasks import Task
from rods.tasks.bfcl import API_CLASSES

LIBRARY = "validation_envs:Desk"


@pytest.fixture(scope="module")
def bfcl_rules(api_graph):
    return Coherence("bfcl", list(API_CLASSES), api_graph.flows)


def bfcl_task(calls: list[list[str]], config: dict, classes: list[str], questions: list[str] | None = None) -> Task:
    questions = questions or [f"Please do step {t}." for t in range(len(calls))]
    return Task.model_validate({"id": "hand-made", "category": "base", "involved_classes": classes,
                                "initial_config": config, "ground_truth": calls,
                                "question": [[{"role": "user", "content": q}] for q in questions]})


FS = {"GorillaFileSystem": {"root": {"alex": {"type": "directory", "contents": {
    "notes.txt": {"type": "file", "content": "Quarterly plan for the Lisbon office"},
    "drafts": {"type": "directory", "contents": {}}}}}}}
CAR = {"VehicleControlAPI": {"fuelLevel": 10.0, "batteryVoltage": 12.6, "engine_state": "stopped"}}


def kinds(rules, task, seed=None):
    return {v.kind for v in rules.violations(task, seed=seed)}


def test_a_placeholder_and_a_field_name_as_values_are_degenerate(bfcl_rules):
    task = bfcl_task([["set_navigation(destination='None')"]], CAR, ["VehicleControlAPI"])
    assert "degenerate_value" in kinds(bfcl_rules, task)
    named = bfcl_task([["set_navigation(destination='fuelLevel')"]], CAR, ["VehicleControlAPI"])
    assert "degenerate_value" in kinds(bfcl_rules, named)
    zeros = bfcl_task([["set_navigation(destination='00000')"]], CAR, ["VehicleControlAPI"])
    assert "degenerate_value" in kinds(bfcl_rules, zeros)
    refund = bfcl_task([["fillFuelTank(fuelAmount=-12.5)"]], CAR, ["VehicleControlAPI"])
    assert "degenerate_value" in kinds(bfcl_rules, refund)  # an amount below zero
    fine = bfcl_task([["set_navigation(destination='2107 Channing Way, Berkeley, CA')"]], CAR, ["VehicleControlAPI"])
    assert "degenerate_value" not in kinds(bfcl_rules, fine)


def test_a_number_no_one_types_is_flagged_unless_a_call_produced_it(bfcl_rules):
    typed = bfcl_task([["liter_to_gallon(liter=35.795306000000004)"]], CAR, ["VehicleControlAPI"])
    assert "precision" in kinds(bfcl_rules, typed)
    plain = bfcl_task([["liter_to_gallon(liter=35.8)"]], CAR, ["VehicleControlAPI"])
    assert "precision" not in kinds(bfcl_rules, plain)


def test_a_result_fed_into_a_parameter_of_another_role_is_a_mismatch(bfcl_rules):
    # a gallon count fed in as a temperature: typed right, meaning wrong
    task = bfcl_task([["liter_to_gallon(liter=135.5)", "adjustClimateControl(temperature=35.795306000000004)"]],
                     CAR, ["VehicleControlAPI"])
    found = [v for v in bfcl_rules.violations(task) if v.kind == "role_mismatch_flow"]
    assert found and found[0].call == 1, bfcl_rules.violations(task)
    # a folder made, then entered: the same role on both sides
    fine = bfcl_task([["mkdir(dir_name='reports')", "cd(folder='reports')"]], FS, ["GorillaFileSystem"])
    assert "role_mismatch_flow" not in kinds(bfcl_rules, fine)


def test_a_write_undone_later_is_superfluous(bfcl_rules):
    task = bfcl_task([["activateParkingBrake(mode='engage')", "activateParkingBrake(mode='release')",
                       "activateParkingBrake(mode='engage')"]], CAR, ["VehicleControlAPI"])
    assert "superfluous_write" in kinds(bfcl_rules, task)
    once = bfcl_task([["activateParkingBrake(mode='engage')"]], CAR, ["VehicleControlAPI"])
    assert "superfluous_write" not in kinds(bfcl_rules, once)


def test_a_write_asked_again_is_superfluous_though_each_changes_the_state():
    # every cancellation of one reservation refunds again, so each changes the state: still no one asks for it
    rules = Coherence(LIBRARY, [LIBRARY])
    desk = {LIBRARY: {"books": {}, "members": {}}}
    twice = Task.model_validate({"id": "desk", "category": "base", "environment": LIBRARY, "initial_config": desk,
                                 "ground_truth": [["add_member(name='Hana Sato')", "add_member(name='Hana Sato')"]],
                                 "question": [[{"role": "user", "content": "Add Hana Sato as a member."}]]})
    found = [v for v in rules.violations(twice) if v.kind == "superfluous_write"]
    assert [v.call for v in found] == [1], rules.violations(twice)
    two = twice.model_copy(update={"ground_truth": [["add_member(name='Hana Sato')", "add_member(name='Omar Rossi')"]]})
    assert "superfluous_write" not in kinds(rules, two)


def test_a_write_to_what_an_earlier_call_removed_is_superfluous(bfcl_rules):
    task = bfcl_task([["rm(file_name='notes.txt')", "touch(file_name='notes.txt')"]], FS, ["GorillaFileSystem"])
    found = [v for v in bfcl_rules.violations(task) if v.kind == "superfluous_write"]
    assert [v.call for v in found] == [1] and "rm ended" in found[0].detail, found
    # removing a stock from the watchlist ends the entry, not the stock: an order for it stays a new thing
    trading = {"TradingBot": {"authenticated": True, "watch_list": ["NVDA"], "orders": {}, "balance": 10000.0,
                              "stocks": {"NVDA": {"price": 220.34, "percent_change": 0.34, "volume": 1.234,
                                                  "MA(5)": 220.45, "MA(20)": 220.67}}}}
    kept = bfcl_task([["remove_stock_from_watchlist(symbol='NVDA')",
                       "place_order(order_type='Buy', symbol='NVDA', price=220.34, amount=10)"]], trading,
                     ["TradingBot"])
    assert "superfluous_write" not in kinds(bfcl_rules, kept), bfcl_rules.violations(kept)


def test_one_more_made_beside_one_a_later_call_uses_is_superfluous(bfcl_rules):
    """Two contacts added and one messaged (the thirteenth blind reader: "an extra unexplained contact"); each add
    changes the state, so only the use of its twin's result tells that this one serves nothing."""
    messages = {"MessageAPI": {"generated_ids": [], "user_count": 4, "current_user": "USR001",
                               "user_map": {"Ana": "USR001", "Ben": "USR002", "Cleo": "USR003", "Dev": "USR004"},
                               "inbox": [], "message_count": 0}}
    extra = bfcl_task([["add_contact(user_name='Helka Weber')", "add_contact(user_name='Ines Yilmaz')",
                        "send_message(receiver_id='USR006', message='Report is out.')"]], messages, ["MessageAPI"])
    found = [v for v in bfcl_rules.violations(extra) if v.kind == "superfluous_write"]
    assert [v.call for v in found] == [0] and "nothing uses" in found[0].detail, bfcl_rules.violations(extra)
    both = bfcl_task([["add_contact(user_name='Helka Weber')", "add_contact(user_name='Ines Yilmaz')",
                       "send_message(receiver_id='USR005', message='Report is out.')",
                       "send_message(receiver_id='USR006', message='Report is out.')"]], messages, ["MessageAPI"])
    assert "superfluous_write" not in kinds(bfcl_rules, both), bfcl_rules.violations(both)
    alone = bfcl_task([["add_contact(user_name='Helka Weber')", "add_contact(user_name='Ines Yilmaz')"]], messages,
                      ["MessageAPI"])
    assert "superfluous_write" not in kinds(bfcl_rules, alone), bfcl_rules.violations(alone)


def test_a_read_asked_again_or_used_by_no_one_is_unused(bfcl_rules):
    again = bfcl_task([["ls()", "ls()"]], FS, ["GorillaFileSystem"], ["Show me what is here."])
    assert "unused_read" in kinds(bfcl_rules, again)
    unasked = bfcl_task([["pwd()", "mkdir(dir_name='reports')"]], FS, ["GorillaFileSystem"],
                        ["Make a folder called reports."])
    assert "unused_read" in kinds(bfcl_rules, unasked)
    asked = bfcl_task([["pwd()", "mkdir(dir_name='reports')"]], FS, ["GorillaFileSystem"],
                      ["Which directory am I in? And make a folder called reports."])
    assert "unused_read" not in kinds(bfcl_rules, asked)


def test_an_id_given_as_a_name_is_flagged(tmp_path):
    rules = Coherence(LIBRARY, [LIBRARY])
    task = Task.model_validate({"id": "desk", "category": "base", "environment": LIBRARY,
                                "initial_config": {LIBRARY: {"books": {}, "members": {}}},
                                "ground_truth": [["add_member(name='M102')"]],
                                "question": [[{"role": "user", "content": "Add M102."}]]})
    assert "id_as_name" in kinds(rules, task)
    person = task.model_copy(update={"ground_truth": [["add_member(name='Hana Sato')"]]})
    assert "id_as_name" not in kinds(rules, person)


def test_calls_that_share_nothing_have_no_common_goal(bfcl_rules):
    apart = bfcl_task([["du()"], ["max_value(numbers=[473.08, 118.49, 433])"]], FS, ["GorillaFileSystem", "MathAPI"])
    assert "no_goal" in kinds(bfcl_rules, apart)
    joined = bfcl_task([["wc(file_name='notes.txt', mode='c')"], ["mean(numbers=[36])"]], FS,
                       ["GorillaFileSystem", "MathAPI"])
    assert "no_goal" not in kinds(bfcl_rules, joined)  # the character count feeds the mean
    # judged beside its seed: a seed that does two unrelated things lets its variant do so too
    assert "no_goal" not in kinds(bfcl_rules, apart, seed=apart)


def test_a_turn_that_shares_nothing_with_the_others_has_no_common_goal(bfcl_rules):
    # one class, two goals: a disk-usage check, then a copy that neither uses nor sets up anything of it
    apart = bfcl_task([["du(human_readable=True)"], ["cp(source='notes.txt', destination='drafts')"]], FS,
                      ["GorillaFileSystem"])
    found = [v for v in bfcl_rules.violations(apart) if v.kind == "no_goal"]
    assert found and found[0].call == 1, bfcl_rules.violations(apart)
    # joined by state: the file is made where the first turn went; by a value: the folder made, then filled
    by_state = bfcl_task([["cd(folder='drafts')"], ["touch(file_name='a.txt')"]], FS, ["GorillaFileSystem"])
    by_value = bfcl_task([["mkdir(dir_name='reports')"], ["cp(source='notes.txt', destination='reports')"]], FS,
                         ["GorillaFileSystem"])
    assert "no_goal" not in kinds(bfcl_rules, by_state) | kinds(bfcl_rules, by_value)
    assert "no_goal" not in kinds(bfcl_rules, apart, seed=apart)  # its seed has such a turn too


def test_a_read_that_shares_nothing_with_the_other_calls_serves_no_goal(bfcl_rules):
    # a disk-usage check beside a copy and a look at the copied file: asked for, yet about nothing else asked
    stray = bfcl_task([["du(human_readable=True)", "cp(source='notes.txt', destination='drafts')"],
                       ["cd(folder='drafts')", "cat(file_name='notes.txt')"]], FS, ["GorillaFileSystem"])
    found = [v for v in bfcl_rules.violations(stray) if v.kind == "no_goal"]
    assert found and found[0].call == 0 and not found[0].turn, bfcl_rules.violations(stray)
    # the same place, read for a reason: its listing names the file the copy takes
    listed = bfcl_task([["ls()", "cp(source='notes.txt', destination='drafts')"],
                        ["cd(folder='drafts')", "cat(file_name='notes.txt')"]], FS, ["GorillaFileSystem"])
    assert "no_goal" not in kinds(bfcl_rules, listed)
    assert "no_goal" not in kinds(bfcl_rules, stray, seed=stray)  # its seed has such a read too
    # the task's closing question is its goal, not a stray read
    closing = bfcl_task([["cp(source='notes.txt', destination='drafts')"], ["du(human_readable=True)"]], FS,
                        ["GorillaFileSystem"])
    assert not bfcl_rules.stray_reads(closing, trace_task(closing), [])


def test_a_read_whose_answer_is_already_known_is_pointless_beside_a_seed_without_one(bfcl_rules):
    # the end of a file whose whole text was just shown, against a seed that counts the file's lines instead
    shown = bfcl_task([["cat(file_name='notes.txt')"], ["tail(file_name='notes.txt', lines=1)"]], FS,
                      ["GorillaFileSystem"])
    counted = bfcl_task([["cat(file_name='notes.txt')"], ["wc(file_name='notes.txt', mode='l')"]], FS,
                        ["GorillaFileSystem"])
    found = [v for v in bfcl_rules.violations(shown, seed=counted) if v.kind == "unused_read"]
    assert [v.call for v in found] == [1] and "already known" in found[0].detail, found
    assert "unused_read" not in kinds(bfcl_rules, counted, seed=counted)  # a count is news
    assert "unused_read" not in kinds(bfcl_rules, shown, seed=shown)  # its seed asks for what it knows too
    # an acknowledgement that repeats the call's own argument is no answer: a `cd` into a folder just listed
    moved = bfcl_task([["ls()"], ["cd(folder='drafts')", "touch(file_name='a.txt')"]], FS, ["GorillaFileSystem"])
    assert not bfcl_rules.known_reads(moved, trace_task(moved))


def test_a_retelling_mentions_its_result_without_being_one_of_its_values(bfcl_rules):
    told = retelling('{"file_content": "Quarterly plan for the Lisbon office\\nBudget: 12"}')
    assert told == "Update: Quarterly plan for the Lisbon office"  # whole, not cut short, and not the value itself
    assert retelling('{"matches": ["a.txt", "b.txt"]}') == "a.txt, b.txt"
    # how each was made, for the query that asks for it; a text that retells nothing is the user's own words
    assert retold_shape(told, '{"file_content": "Quarterly plan for the Lisbon office\\nBudget: 12"}') == \
        {"prefix": "Update:", "part": "first line"}  # of a text of several lines: said so
    assert retold_shape("Update: Plan for Lisbon", '{"file_content": "Plan for Lisbon"}') == {"prefix": "Update:"}
    assert retold_shape("a.txt, b.txt", '{"matches": ["a.txt", "b.txt"]}') == {"joined": ", "}
    many = json.dumps({"matches": [f"f{i}.txt" for i in range(8)]})
    assert retold_shape(retelling(many), many) == {"joined": ", ", "first": "6"}  # six of eight: said so
    assert retold_shape("About archive", '{"ok": true}') == {"said": "About archive"}
    assert retold_shape("Update: something else", '{"file_content": "Quarterly plan"}') == \
        {"said": "Update: something else"}
    task = bfcl_task([["cat(file_name='notes.txt')"], ["post_tweet(content='Quarterly plan for the Lisbon')"]],
                     {**FS, "TwitterAPI": {"username": "alex", "authenticated": True}},
                     ["GorillaFileSystem", "TwitterAPI"])
    assert retellings(trace_task(task), bfcl_rules.params, bfcl_rules.words) == {(1, "content"): 0}
    assert "no_goal" not in kinds(bfcl_rules, task)


def test_most_human_seeds_break_no_rule(bfcl_tasks, bfcl_rules):
    """The rules are calibrated on what people ask: at least 85% of BFCL's tasks break none (but `no_goal`,
    which is judged against a variant's own seed)."""
    seeds = bfcl_tasks[::8]
    clean = sum(not [v for v in bfcl_rules.violations(s) if v.kind != "no_goal"] for s in seeds)
    assert clean >= 0.85 * len(seeds)


def test_no_accepted_variant_breaks_a_rule(seeds_by_category, api_graph, bfcl_rules):
    """A property over variants of 20 seeds of all four categories: the pipeline holds every one to every rule; a
    recast (the seed's own calls, rods.synth.recast) to every rule its seed does not break itself."""
    seeds = stratified(seeds_by_category, 5)
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=2, workers=2, seed=3), graph=api_graph)
    accepted = pipeline(seeds)
    by_id = {s.id: s for s in seeds}
    assert len(accepted) >= 0.4 * 2 * len(seeds), pipeline.report()["rejections"]
    assert {t.provenance.strategy for t in accepted} == {"replan", "recast"}
    for task in accepted:
        seed = by_id[task.provenance.parent_id]
        found = bfcl_rules.violations(task, seed=seed)
        if task.provenance.strategy == "recast":
            own = {(v.kind, v.call) for v in bfcl_rules.violations(seed, seed=seed)}
            found = [v for v in found if (v.kind, v.call) not in own]
        assert not found, (task.id, [str(v) for v in found])
    assert set(KINDS) >= {r.split(":")[-1] for r in pipeline.stats.rejections if "coherence" in r}


def test_a_lookup_on_the_way_to_something_else_serves_no_goal():
    """Issue 39: "get order 'SO-2927', get order 'SO-0686', and then adjust the stock ...": reads about something,
    but nothing the task goes on to do. Values a record of a list passes on (`lines=[{'sku': ...}]`) join calls."""
    import sys
    from pathlib import Path

    from rods.tasks.task_files import read_tasks

    folder = Path(__file__).resolve().parents[2] / "examples" / "warehouse"
    sys.path.insert(0, str(folder))
    try:
        seeds = read_tasks(folder / "seeds.jsonl")
        rules = Coherence.learned(seeds)
        seed = seeds[0]  # finds two products, then orders them: lines=[{'sku': <found>, 'qty': 5}, ...]
        assert rules.seed_groups(seed).stray_reads == 0 and "no_goal" not in kinds(rules, seed, seed=seed)
        detour = Task.model_validate({**seed.model_dump(), "ground_truth": [
            ["get_order(order_id='SO-5510')", *seed.ground_truth[0]], seed.ground_truth[1]]})
        found = [v for v in rules.violations(detour, seed=seed) if v.kind == "no_goal"]
        assert found and found[0].call == 0, rules.violations(detour, seed=seed)
    finally:
        sys.path.remove(str(folder))
