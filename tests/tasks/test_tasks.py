"""Tasks: the BFCL loader, the committed split, task files and their errors."""

import json
from collections import Counter

import pytest

from rods.tasks import CATEGORIES, REVEAL_MESSAGE, Task, TaskFileError, load_split, read_tasks, write_tasks
from rods.tasks.bfcl import committed_split, compute_split


def test_bfcl_has_800_tasks_200_per_category(bfcl_tasks):
    assert Counter(t.category for t in bfcl_tasks) == {c: 200 for c in CATEGORIES}
    assert len({t.id for t in bfcl_tasks}) == 800
    assert all(t.long_context == (t.category == "long_context") for t in bfcl_tasks)


def test_split_is_fixed_stratified_and_disjoint():
    split = committed_split()
    assert split == compute_split(), "the committed split no longer matches its seeded draw"
    train, test = load_split("train"), load_split("test")
    assert len(train) == len(test) == 400
    assert Counter(t.category for t in train) == {c: 100 for c in CATEGORIES}
    assert not {t.id for t in train} & {t.id for t in test}
    assert len(load_split("all")) == 800
    with pytest.raises(ValueError):
        load_split("dev")  # type: ignore[arg-type]


def test_miss_func_structure(bfcl_tasks):
    task = next(t for t in bfcl_tasks if t.category == "miss_func")
    (turn, names), = task.reveal_turns().items()
    assert task.question[turn] == []
    assert set(names) <= task.held_out_functions(turn - 1)
    assert not task.held_out_functions(turn)
    assert task.task_type == "miss_func" and REVEAL_MESSAGE.startswith("I have updated")


def test_jsonl_round_trip(tmp_path, bfcl_tasks):
    path = tmp_path / "tasks.jsonl"
    assert write_tasks(path, bfcl_tasks[:5]) == 5
    assert read_tasks(path) == bfcl_tasks[:5]


def _write(path, rows):
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")


def test_malformed_files_name_file_line_and_field(tmp_path, bfcl_tasks):
    good = bfcl_tasks[0].model_dump(mode="json")
    path = tmp_path / "bad.jsonl"

    _write(path, [good, "{not json"])
    with pytest.raises(TaskFileError, match=r"bad.jsonl, line 2: invalid JSON"):
        read_tasks(path)

    _write(path, [good, dict(good, id="x", involved_classes=["Nope"])])
    with pytest.raises(TaskFileError, match=r"line 2: field 'involved_classes'") as err:
        read_tasks(path)
    assert err.value.line == 2 and err.value.field == "involved_classes"

    _write(path, [dict(good, ground_truth=good["ground_truth"][:-1])])
    with pytest.raises(TaskFileError, match=r"line 1: .*turns"):
        read_tasks(path)

    _write(path, [good, good])
    with pytest.raises(TaskFileError, match=r"field 'id'.*duplicate"):
        read_tasks(path)

    _write(path, [dict(good, category="other")])
    with pytest.raises(TaskFileError, match=r"field 'category'"):
        read_tasks(path)

    with pytest.raises(TaskFileError, match="no such file"):
        read_tasks(tmp_path / "missing.jsonl")


def test_bfcl_entry_round_trip(bfcl_tasks):
    task = next(t for t in bfcl_tasks if t.missed_function)
    entry = task.to_bfcl_entry()
    assert entry["id"] == task.id and "missed_function" in entry
    assert "provenance" not in entry and "ground_truth" not in entry
    assert Task.model_validate(dict(entry, category=task.category, ground_truth=task.ground_truth)) == task


def test_task_records_match_validated_tasks(bfcl_tasks):
    """`rods reward` scores BFCL tasks as pydantic-free records: they must read the same."""
    from rods.reward import score
    from rods.reward.perturb import perturb
    from rods.tasks import bfcl_record, bfcl_task_ids

    assert bfcl_task_ids() == [t.id for t in bfcl_tasks]
    for task in bfcl_tasks:
        record = bfcl_record(task.id)
        assert (record.category, record.initial_config, record.involved_classes, record.ground_truth) == (
            task.category, task.initial_config, task.involved_classes, task.ground_truth)
        assert (record.num_turns, record.long_context) == (task.num_turns, task.long_context)
    for task in bfcl_tasks[::50]:
        steps = perturb(task, "dropped")
        assert score(bfcl_record(task.id), steps) == score(task, steps)


def test_light_imports_do_not_pull_pydantic():
    import subprocess
    import sys

    code = (
        "import sys; from rods.tasks import CATEGORIES, bfcl_record; bfcl_record('multi_turn_base_0'); "
        "assert 'pydantic' not in sys.modules"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def test_parquet_task_files(tmp_path, bfcl_tasks):
    """Parquet task files (JSON-string columns for the per-class shapes) read back to equal tasks."""
    datasets = pytest.importorskip("datasets")
    tasks = bfcl_tasks[:2] + [t for t in bfcl_tasks if t.missed_function][:1]
    rows = []
    for task in tasks:
        row = task.model_dump(mode="json")
        for key in ("initial_config", "provenance", "missed_function", "expected_errors"):
            row[key] = json.dumps(row[key])
        rows.append(row)
    path = tmp_path / "tasks.parquet"
    datasets.Dataset.from_list(rows).to_parquet(str(path))
    assert read_tasks(path) == tasks


def test_content_hash_ignores_id_and_provenance_and_sees_content(bfcl_tasks):
    from rods.tasks import content_hash

    hashes = {content_hash(t) for t in bfcl_tasks}
    assert len(hashes) == len({t.model_dump_json(exclude={"id", "provenance"}) for t in bfcl_tasks})
    for task in bfcl_tasks[::40]:
        renamed = task.model_copy(update={"id": task.id + "-copy"}, deep=True)
        renamed.provenance.origin = "synthetic"
        assert content_hash(renamed) == content_hash(task)
        changed = task.model_copy(deep=True)
        changed.ground_truth[-1] = [*changed.ground_truth[-1], "ls()"]
        assert content_hash(changed) != content_hash(task)


def test_a_task_source_is_a_split_or_a_file(tmp_path):
    from rods.envs.seeds import DataSettings, load_seeds
    from rods.tasks import TaskFileError, read_task_source, write_tasks

    test = read_task_source("test")
    assert [t.id for t in read_task_source("bfcl:test")] == [t.id for t in test] and len(test) == 400
    path = tmp_path / "few.jsonl"
    write_tasks(path, test[:3])
    assert [t.id for t in read_task_source(path)] == [t.id for t in test[:3]]
    with pytest.raises(ValueError, match="unknown BFCL split 'dev'"):
        read_task_source("bfcl:dev")
    with pytest.raises(TaskFileError, match="nope.jsonl: no such file"):
        read_task_source(tmp_path / "nope.jsonl")
    with pytest.raises(ValueError, match=r"data.seeds: .*nope.jsonl: no such file"):
        load_seeds(DataSettings(seeds=str(tmp_path / "nope.jsonl")))


def test_json_errors_give_the_column_where_they_are(tmp_path):
    path = tmp_path / "cols.jsonl"
    path.write_text('{"id": "x"\n')  # the error is at the end of the line: column 11, not line 2 column 1
    with pytest.raises(TaskFileError, match=r"line 1: invalid JSON \(Expecting ',' delimiter at column 11\)"):
        read_tasks(path)
    path.write_text('\n{"id": "x", oops}\r\n')
    with pytest.raises(TaskFileError, match=r"line 2: invalid JSON \(.* at column 13\)"):
        read_tasks(path)


def test_a_directory_or_a_missing_file_is_one_clear_error(tmp_path):
    with pytest.raises(TaskFileError, match=r"^\S+: is a directory, not a task file$"):
        read_tasks(tmp_path)
    with pytest.raises(TaskFileError, match=r"nope.jsonl: no such file$"):
        read_tasks(tmp_path / "nope.jsonl")
    with pytest.raises(IsADirectoryError, match="is a directory, not a file to write"):
        write_tasks(tmp_path, [])


def test_a_reader_goes_on_past_bad_lines_with_their_numbers(tmp_path, bfcl_tasks):
    from rods.tasks.task_files import read_numbered_tasks, task_lines

    good = bfcl_tasks[0].model_dump(mode="json")
    path = tmp_path / "mixed.jsonl"
    _write(path, [good, "{oops", "", dict(good, id="b", category="nope"), dict(good, id="c")])
    lines = [(n, t.id if isinstance(t, Task) else type(t).__name__) for n, t in task_lines(path)]
    assert lines == [(1, good["id"]), (2, "TaskFileError"), (4, "TaskFileError"), (5, "c")]
    _write(path, [good, dict(good, id="c"), "", dict(good, id="c")])
    with pytest.raises(TaskFileError, match="line 4: field 'id': duplicate task id 'c' \\(first at line 2\\)"):
        read_numbered_tasks(path)


def test_expected_errors_name_turns_and_gold_calls_of_the_task(bfcl_tasks):
    from rods.tasks import content_hash
    from rods.tasks.task_files import dump_task, parse_task

    task = bfcl_tasks[0]
    body = task.model_dump(mode="json")
    marked = Task.model_validate({**body, "expected_errors": {"1": [0]}})
    assert marked.expected_error_calls() == {(1, 0)}
    assert content_hash(marked) == content_hash(task)  # how the gold behaves, not what the task is
    assert "expected_errors" not in marked.to_bfcl_entry()
    assert "expected_errors" not in json.loads(dump_task(task))  # files written before the field read alike
    assert parse_task(json.loads(dump_task(marked))) == marked
    for bad, message in [({"9": [0]}, "key '9' is not a turn index"), ({"x": [0]}, "key 'x' is not a turn index"),
                         ({"1": [5]}, r"expected_errors\['1'\] = \[5\] must list distinct indices"),
                         ({"1": [0, 0]}, "distinct indices"), ({"1": [-1]}, "distinct indices")]:
        with pytest.raises(ValueError, match=message):
            Task.model_validate({**body, "expected_errors": bad})
