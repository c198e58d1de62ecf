"""`rods envs check` (`rods.envs.check`): it passes every shipped environment and fails each broken one
(`tests/broken_envs.py`) with the check and reason its mistake deserves."""

from __future__ import annotations

import datetime
import json
import random
from pathlib import Path

import pytest
from mcp_envs import in_memory_sqlite

from rods.envs.check import check_environment
from rods.envs.check.probes import StateValues, draw_arguments, error_words, first_difference, not_json
from rods.tasks import Task, read_tasks

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def fails(report) -> dict[str, list[str]]:
    """Check name -> the reasons of its FAIL findings."""
    found: dict[str, list[str]] = {}
    for finding in report.findings:
        if finding.status == "FAIL":
            found.setdefault(finding.check, []).append(finding.reason)
    return found


def statuses(report, check: str) -> set[str]:
    return {f.status for f in report.findings if f.check == check}


def seeds(environment: str, config: dict, *gold: str) -> list[Task]:
    """One seed task of an environment: its initial config and one turn of gold calls."""
    return [Task.model_validate({"id": "s0", "category": "base", "environment": environment,
                                 "question": [[{"role": "user", "content": "please"}]],
                                 "initial_config": {environment: config}, "ground_truth": [list(gold)]})]


def moved(tasks: list[Task], environment: str) -> list[Task]:
    """Tasks re-keyed to another name of their environment (an MCP manifest written elsewhere)."""
    out = []
    for task in tasks:
        body = task.model_dump()
        body["initial_config"] = {environment: body["initial_config"].get(task.environment, {})}
        body["environment"], body["involved_classes"] = environment, [environment]
        out.append(Task.model_validate(body))
    return out


# -- the shipped environments pass --------------------------------------------------------------------------


def assert_passes(report, *, forks: bool = True) -> None:
    assert not report.failed, "\n".join(f.line() for f in report.findings if f.status == "FAIL")
    for check in ("tools", "reset", "replay", "json", "read-tools", "errors", "error-convention", "constructor"):
        assert "PASS" in statuses(report, check), check
    if forks:
        assert statuses(report, "fork") == {"PASS"}


def test_bfcl_passes_with_and_without_seeds(bfcl_tasks):
    report = check_environment("bfcl", bfcl_tasks[::50])
    assert_passes(report)
    assert report.gold_calls > 50 and report.drawn_calls > 128 * 3
    assert statuses(report, "tools") == {"PASS", "WARN"}  # BFCL's tools declare no effect
    assert_passes(check_environment("bfcl"))


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_tau2_passes(domain):
    environment = f"rods.envs.tau2:Tau2{domain.title()}Env"
    report = check_environment(environment, read_tasks(EXAMPLES / f"tau2_{domain}" / "train.jsonl")[:3])
    assert_passes(report)
    assert statuses(report, "read-tools") == {"PASS"}


def test_the_library_example_passes(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES / "byo_env"))  # as the guide's PYTHONPATH does
    report = check_environment("library:Library", read_tasks(EXAMPLES / "byo_env" / "seeds.jsonl"))
    assert_passes(report)
    assert statuses(report, "write-tools") == {"PASS"} and statuses(report, "read-tools") == {"PASS"}


def test_the_sqlite_example_passes_in_memory(tmp_path):
    key = in_memory_sqlite(tmp_path / "sqlite")
    tasks = moved(read_tasks(EXAMPLES / "mcp_sqlite" / "seeds.jsonl"), key)
    report = check_environment(key, tasks)
    assert_passes(report)
    assert statuses(report, "write-tools") == {"PASS"}


@pytest.mark.slow
@pytest.mark.parametrize("example", ["mcp_git", "mcp_sqlite"])
def test_the_mcp_examples_pass_on_their_servers(example, monkeypatch):
    monkeypatch.chdir(ROOT)  # the seeds name the manifest by its path from the repository root
    manifest = f"examples/{example}/manifest.yaml"
    report = check_environment(manifest, read_tasks(EXAMPLES / example / "seeds.jsonl"))
    assert_passes(report)


def test_the_controls_pass():
    report = check_environment("broken_envs:Library", seeds(
        "broken_envs:Library", {"books": {"bk-1": {"title": "T", "author": "A", "lent_to": None}}},
        "book_details(book_id='bk-1')", "lend_book(book_id='bk-1', member='Ann')"))
    assert_passes(report)
    counters = "broken_envs:Counters"  # a protocol environment, hosted by replay
    assert_passes(check_environment(counters, seeds(counters, {"counts": {"a": 1}}, "increment(name='a')")))
    catalogue = "broken_envs:Catalogue"  # built by its constructor, which derives an index and a counter
    report = check_environment(catalogue, seeds(catalogue, BOOKS, "add_book(title='Dune', author='Frank Herbert')"))
    assert_passes(report)
    assert any("1 constructor-built instance(s) keep" in f.reason for f in report.findings if f.check == "constructor")


# -- each broken environment fails with its reason ----------------------------------------------------------

BOOKS = {"books": {"bk-1": {"title": "The Salt Road", "author": "Ines Moreau", "lent_to": None},
                   "bk-2": {"title": "Tidal Clocks", "author": "Kofi Mensah", "lent_to": None}}}
LIBRARY_GOLD = ("book_details(book_id='bk-1')", "lend_book(book_id='bk-2', member='Ann')")

BROKEN = [
    # (class, gold calls or None for no seeds, failing check, words of its reason)
    ("ReadThatWrites", LIBRARY_GOLD, "read-tools", "book_details is marked read but"),
    ("DatedLoans", LIBRARY_GOLD, "json", "a date (the snapshot holds only its repr)"),
    ("Ratings", None, "json", "is nan, not a JSON number"),
    ("SharedCounter", ("increment(name='a')",), "fork", "forks share state"),
    ("Singleton", LIBRARY_GOLD, "fork", "forks share state"),
    ("Reminders", LIBRARY_GOLD, "state", "reading or copying the state failed after lend_book(book_id='bk-2'"),
    ("LuckyDraw", None, "reset", "a non-deterministic reset"),
    ("RandomIds", ("add_member(name='Ann')",), "replay", "gives another result when replayed from the same config"),
    ("QuietMisses", LIBRARY_GOLD, "error-convention", "undetected error convention"),
    ("PrivateLoans", LIBRARY_GOLD, "write-tools", "lend_book is marked write but changed nothing"),
    ("ResetCatalogue", ("add_book(title='Dune', author='Frank Herbert')",), "constructor",
     "state the constructor derives is lost"),
    ("Forgiving", None, "errors", "(missing argument) returned '1', which is no error"),
    ("StringSchema", None, "tools", "note: its parameters have type 'string', not 'object'"),
]


@pytest.mark.parametrize(("name", "gold", "check", "reason"), BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_environment_fails_with_its_reason(name, gold, check, reason):
    environment = f"broken_envs:{name}"
    config = {"counts": {"a": 1}} if name == "SharedCounter" else {} if name == "RandomIds" else BOOKS
    report = check_environment(environment, seeds(environment, config, *gold) if gold is not None else [])
    assert report.failed
    found = fails(report)
    assert check in found, "\n".join(f.line() for f in report.findings)
    assert any(reason in why for why in found[check]), found[check]


def test_shared_state_is_also_seen_by_the_reset_check():
    environment = "broken_envs:SharedCounter"
    report = check_environment(environment, seeds(environment, {"counts": {"a": 1}}, "increment(name='a')"))
    assert any("loading an environment changed one already running" in why for why in fails(report)["reset"])


def test_the_undetected_errors_are_named_per_tool():
    environment = "broken_envs:QuietMisses"
    reasons = fails(check_environment(environment, seeds(environment, BOOKS, *LIBRARY_GOLD)))["error-convention"]
    assert len(reasons) == 2
    assert any("'not found'" in r and r.startswith("undetected error convention: book_details(") for r in reasons)
    assert any("'Error'" in r and "lend_book(" in r for r in reasons)


def test_drawn_calls_are_seeded():
    environment = "broken_envs:QuietMisses"
    first, again = (check_environment(environment, seeds(environment, BOOKS, *LIBRARY_GOLD), seed=3)
                    for _ in range(2))
    assert [f.line() for f in first.findings] == [f.line() for f in again.findings]


def test_seeds_of_another_environment_are_refused():
    with pytest.raises(ValueError, match="is a task of 'broken_envs:Library', not of 'broken_envs:Ratings'"):
        check_environment("broken_envs:Ratings", seeds("broken_envs:Library", BOOKS, *LIBRARY_GOLD))


# -- the probes ---------------------------------------------------------------------------------------------


def test_error_words_skip_echoed_data_and_data_fields():
    assert error_words("Book bk-9 not found.") == "not found"
    assert error_words('{"status": "failed", "detail": "out of stock"}') == "failed"
    assert error_words('{"error_message": "Invalid id"}') == "Invalid"
    assert error_words("['Error: log in first']") == "Error"
    assert error_words("Book 'Errors of Youth' lent", echoed={"Errors of Youth"}) is None  # a title it echoes
    assert error_words('{"title": "Errors of Youth"}') is None  # a data field, not a message
    assert error_words('{"verification_status": false, "verification_failure": "too young"}') is None
    assert error_words("A long manual. " * 10 + "It cannot be undone.") is None  # past the lead of a message


def test_state_values_feed_parameters_from_fields_and_id_maps():
    values = StateValues.of({"lib": {"books": {"bk-1": {"author": "Ann", "year": 1999}}, "owner": "Bo"}})
    assert values.for_parameter("book_id", "string") == ["bk-1"]
    assert values.for_parameter("author", "string") == ["Ann"]
    assert values.for_parameter("year", "integer") == [1999]
    schema = {"type": "object", "properties": {"book_id": {"type": "string"}, "kind": {"enum": ["a", "b"]}},
              "required": ["book_id", "kind"]}
    drawn = draw_arguments(schema, random.Random(0), values, fresh=False)
    assert drawn["book_id"] == "bk-1" and drawn["kind"] in ("a", "b")
    assert draw_arguments(schema, random.Random(0), values, fresh=True)["book_id"].startswith("probe-")


def test_not_json_names_what_the_snapshot_cannot_hold():
    assert not_json({"a": [1, 2.5, "x", None, {"b": (1, 2)}], "s": {1, 2}}) == []
    assert not_json({"when": datetime.date(2024, 1, 1)}) == [("/when", "a date (the snapshot holds only its repr)")]
    assert not_json({"x": float("inf")}) == [("/x", "inf, not a JSON number")]
    assert not_json({(1, 2): "pair"})[0][1] == "a tuple key"


def test_first_difference_walks_to_the_change():
    before = {"books": {"bk-1": {"lent_to": None}, "bk-2": {"lent_to": "Bo"}}}
    after = json.loads(json.dumps(before))
    after["books"]["bk-2"]["lent_to"] = "Ann"
    assert first_difference(before, after) == ("/books/bk-2/lent_to", "Bo", "Ann")
    assert first_difference(before, before) is None
