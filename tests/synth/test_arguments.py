"""State-aware argument proposals: names from the current directory, ids from the state, fed values, enums."""

import random
import re
from pathlib import Path

from rods.envs.environment import ToolEnvironment
from rods.synth.arguments import ArgumentProposer, like, near, result_fields
from rods.synth.value_kinds import vocabulary_of
from rods.synth.values import ValueRemapper
from rods.tasks.bfcl import API_CLASSES

BFCL_WORDS = vocabulary_of("bfcl")

FS = {"GorillaFileSystem": {"root": {"ana": {"type": "directory", "contents": {
    "notes.txt": {"type": "file", "content": "hello"},
    "drafts": {"type": "directory", "contents": {}},
    "photos": {"type": "directory", "contents": {}}}}}}}


def _proposer(seed=0):
    rng = random.Random(seed)
    return ArgumentProposer(ValueRemapper(rng, BFCL_WORDS), rng, API_CLASSES)


def test_file_system_names_come_from_the_current_directory_by_kind():
    env = ToolEnvironment(FS, ["GorillaFileSystem"])
    folders, files = set(), set()
    for seed in range(30):
        proposer = _proposer(seed)
        folders |= {a["folder"] for a, _ in proposer.propose("cd", env, {}, limit=4, reading=True)}
        files |= {a["file_name"] for a, _ in proposer.propose("cat", env, {}, limit=4, reading=True)}
    assert {"drafts", "photos"} <= folders and "notes.txt" not in folders  # directories only for a folder
    assert "notes.txt" in files and not {"drafts", "photos"} & files  # files only for a file name


def test_a_new_file_or_folder_is_never_named_like_one_the_state_has():
    """touch's `file_name` is "the name of the new file": an existing name fails (the proposer offered one
    for 7 of 10 creating calls before)."""
    env = ToolEnvironment(FS, ["GorillaFileSystem"])
    existing = {"notes.txt", "drafts", "photos"}
    made = [a[p] for seed in range(30) for f, p in (("touch", "file_name"), ("mkdir", "dir_name"))
            for a, _ in _proposer(seed).propose(f, env, {}, limit=3)]
    assert len(set(made)) > 20 and not existing & set(made), made
    # a read of a file still takes the state's names
    assert "notes.txt" in {a["file_name"] for seed in range(10) for a, _ in _proposer(seed).propose("cat", env, {})}


def test_a_fed_value_no_required_parameter_takes_goes_to_an_optional_one():
    """echo's `content` is required, its `file_name` optional: the file an earlier call made is written into."""
    env = ToolEnvironment(FS, ["GorillaFileSystem"])
    proposals = list(_proposer().propose("echo", env, {0: [["notes.txt"]]}, limit=4,
                                         fits=lambda src, param, value: param != "content"))
    assert proposals and all(a["file_name"] == "notes.txt" and fed == {"file_name": 0} for a, fed in proposals)
    assert all(a["content"] != "notes.txt" for a, _ in proposals)
    assert all("file_name" not in a for a, _ in _proposer().propose("echo", env, {}, limit=4))  # unfed: left out


def test_a_parameter_its_description_calls_a_file_or_a_zipcode_never_takes_a_city():
    # cp's `destination` is "the destination name to copy the file or directory to": a name like the others
    env = ToolEnvironment(FS, ["GorillaFileSystem"])
    names = {a["destination"] for seed in range(40) for a, _ in _proposer(seed).propose("cp", env, {}, limit=3)}
    assert len(names) > 3 and all("." in n or n in ("drafts", "photos") for n in names), names
    assert "notes.txt" not in names  # into a folder or a new name: cp onto an existing file fails
    copies = [a for seed in range(40) for a, _ in _proposer(seed).propose("cp", env, {}, limit=3)
              if a["source"] == "notes.txt" and a["destination"] not in ("drafts", "photos")]
    assert copies and all(a["destination"].endswith(".txt") for a in copies), copies  # a copy keeps its kind
    # and is named after its file, as people name copies ('notes_backup.txt', not 'recipes.txt': the thirteenth
    # blind reader failed 'assignments_weddings.txt' copied to 'recipes.txt' as a meaningless pairing)
    assert all(re.fullmatch(r"notes_\w+\.txt", a["destination"]) for a in copies), copies
    env = ToolEnvironment({"VehicleControlAPI": {}}, ["VehicleControlAPI"])
    zips = {a["cityA"] for seed in range(20) for a, _ in _proposer(seed).propose("estimate_distance", env, {}, limit=2)}
    assert zips and all(z.isdigit() and len(z) == 5 for z in zips), zips


def test_the_seeds_optional_settings_are_kept_and_its_names_replaced():
    """Optional arguments the seed's call passed are passed too: a setting as it was (wc's mode, ls -a), a list
    of the seed's own names never copied."""
    env = ToolEnvironment(FS, ["GorillaFileSystem"])
    for seed in range(10):
        for arguments, _ in _proposer(seed).propose("wc", env, {}, limit=3, reading=True, optional={"mode": "w"}):
            assert arguments["mode"] == "w", arguments
    twitter = ToolEnvironment({"TwitterAPI": {"username": "ana", "tweets": {}}}, ["TwitterAPI"])
    posts = [a for seed in range(10) for a, _ in _proposer(seed).propose(
        "post_tweet", twitter, {}, limit=2, optional={"tags": ["#Quokka"], "mentions": ["@Zephyrine"]})]
    assert posts and all(a["tags"] and a["mentions"] for a in posts)
    assert not [a for a in posts if "#Quokka" in a["tags"] or "@Zephyrine" in a["mentions"]]
    assert all(len(set(a["tags"])) == len(a["tags"]) for a in posts)  # a list names each thing once


def test_ids_come_from_state_keys_that_look_like_the_parameter():
    config = {"TradingBot": {"orders": {"12446": {"symbol": "NVDA", "price": 10.5, "num_shares": 3,
                                                  "status": "Open"}}, "authenticated": True}}
    env = ToolEnvironment(config, ["TradingBot"])
    seen = {a["order_id"] for seed in range(10) for a, _ in _proposer(seed).propose("cancel_order", env, {}, limit=3)}
    assert seen and all(str(v) == "12446" for v in seen)  # an id is always taken from the state when it has one


def test_a_fed_parameter_takes_a_value_its_source_produced():
    env = ToolEnvironment(FS, ["GorillaFileSystem"])
    feeds = {2: [["report.md", "summary.md"], []]}
    for arguments, fed in _proposer().propose("cat", env, feeds, limit=6):
        assert fed == {"file_name": 2} and arguments["file_name"] in {"report.md", "summary.md"}
    # a source with nothing of the right type makes no proposal at all
    assert list(_proposer().propose("cat", env, {2: [[42, 7.5]]}, limit=3)) == []


def test_a_parameter_named_like_a_field_of_the_feeding_result_takes_that_fields_value():
    # an earlier order's details feed `place_order`: one value is the flow, the others of the same names follow it
    details = '{"id": 12446, "order_type": "Buy", "symbol": "NVDA", "price": 10.5, "amount": 3, "status": "Open"}'
    fields = result_fields([details])
    assert fields["symbol"] == ["NVDA"] and fields["amount"] == [3] and "id" in fields
    config = {"TradingBot": {"orders": {}, "authenticated": True, "stocks": {"AAPL": {"price": 227.16}}}}
    env = ToolEnvironment(config, ["TradingBot"])
    feeds = {0: [[12446, "Buy", "NVDA", 10.5, 3, "Open"]]}
    proposals = list(_proposer().propose("place_order", env, feeds, limit=6, fields=fields))
    assert proposals
    for arguments, _ in proposals:
        assert (arguments["order_type"], arguments["symbol"], arguments["price"], arguments["amount"]) == (
            "Buy", "NVDA", 10.5, 3), arguments
    # a list's items sit under the list's field: a reservation's payments
    # (a refund's negative amount is none a person asks for)
    assert result_fields(['{"payment_history": [{"payment_id": "gift_card_1", "amount": 50}, {"amount": -50}]}']) == {
        "payment_id": ["gift_card_1"], "amount": [50]}


def test_a_search_looks_for_words_the_state_holds_and_a_write_may_make_up_text():
    fs = {"GorillaFileSystem": {"root": {"ana": {"type": "directory", "contents": {
        "notes.txt": {"type": "file", "content": "Quarterly budget review for the Lisbon office"}}}}}}
    env = ToolEnvironment(fs, ["GorillaFileSystem"])
    text = "Quarterly budget review for the Lisbon office"
    patterns = [a["pattern"] for seed in range(10) for a, _ in _proposer(seed).propose("grep", env, {}, limit=2,
                                                                                       reading=True)]
    assert patterns and all(p in text for p in patterns), patterns
    written = [a["content"] for seed in range(10) for a, _ in _proposer(seed).propose("echo", env, {}, limit=2)]
    assert any(w not in text for w in written)  # a write says something new


def test_a_large_shared_database_gives_the_same_proposals_with_its_matches_remembered():
    """tau2 airline's loaded database is scanned once per parameter name (`arguments._MATCHES`), not per proposal."""
    from rods.synth import arguments
    from rods.tasks import read_tasks

    root = Path(__file__).resolve().parents[2]
    seed = read_tasks(root / "examples" / "tau2_airline" / "train.jsonl")[0]
    env = ToolEnvironment(seed)
    functions = ["get_reservation_details", "update_reservation_baggages"]

    def proposals(k):
        rng = random.Random(k)
        proposer = ArgumentProposer(ValueRemapper(rng, vocabulary_of(seed.environment)), rng, [seed.environment],
                                    seed.initial_config)
        return [list(proposer.propose(f, env, {}, limit=3, reading=True)) for f in functions]

    cold = []
    for k in range(3):
        arguments._MATCHES.clear()
        cold.append(proposals(k))
        assert arguments._MATCHES  # the loaded database's matches are remembered...
    warm = [proposals(k) for k in range(3)]
    assert warm == cold  # ...and give what a fresh scan gives
    reservations = set(env.instance(seed.environment).db.reservations)
    ids = {a["reservation_id"] for run in cold for a, _ in run[0]}
    assert ids & reservations  # ids are taken from the database's keys


def test_digits_asked_for_are_a_few():
    env = ToolEnvironment({"MathAPI": {}}, ["MathAPI"])
    digits = {a["precision"] for seed in range(20) for a, _ in _proposer(seed).propose("logarithm", env, {}, limit=2)}
    assert digits and digits <= {1, 2, 3, 4}, digits


def test_a_number_of_the_task_own_is_of_the_size_the_seed_gave_that_function():
    """A certificate of 150 in the seed is one of a few hundred in its variants (`Plan.scales`): the thirteenth
    blind reader failed a certificate of 18147 as absurd. The state's numbers of that size are preferred."""
    assert [like(150, random.Random(s)) % 10 for s in range(20)] == [0] * 20  # as round as the seed's
    assert all(near(like(v, random.Random(s), integer=isinstance(v, int)), v)
               for v in (150, 50, 7, 1000, 12.5, -20) for s in range(30))
    assert not near(18147, 150) and near(200, 150) and not near(-150, 150) and not near("150", 150)
    env = ToolEnvironment({"MathAPI": {}}, ["MathAPI"])
    sums = [a for seed in range(30) for a, _ in _proposer(seed).propose("add", env, {}, limit=2,
                                                                        scales={"a": 150, "b": 2.5})]
    assert sums and all(near(a["a"], 150) and near(a["b"], 2.5) for a in sums), sums
    free = [a for seed in range(30) for a, _ in _proposer(seed).propose("add", env, {}, limit=2)]
    assert not all(near(a["a"], 150) for a in free)  # without the seed's numbers: any size


def test_a_value_the_environment_refused_is_not_proposed_there_again():
    """The warehouse's searches spent their trials on one refusal ("'Norlin KG' is not a carrier we book", 500
    times 'found' with a negative delta): an error naming a value keeps that value from the function's draws."""
    from rods.envs.calls import ToolCall

    env = ToolEnvironment(FS, ["GorillaFileSystem"])
    proposer = _proposer(3)
    files = {a["file_name"] for a, _ in proposer.propose("cat", env, {}, limit=8, reading=True)}
    assert files == {"notes.txt"}
    proposer.refuse(ToolCall("cat", {"file_name": "notes.txt"}), "Error during execution: 'notes.txt' is locked")
    assert not list(proposer.propose("cat", env, {}, limit=8, reading=True))  # its only file was refused
    assert list(proposer.propose("tail", env, {}, limit=8, reading=True))  # another function may still take it
    proposer.refuse(ToolCall("tail", {"file_name": "notes.txt"}), "Error during execution: no such line")
    assert list(proposer.propose("tail", env, {}, limit=8, reading=True))  # an error that names no value: nothing
