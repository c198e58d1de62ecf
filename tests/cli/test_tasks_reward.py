"""`rods tasks export|slice|validate` and `rods reward`: I/O format, errors, and no torch at import."""

import json
import subprocess
import sys

import pytest

from rods.cli import main
from rods.reward import score
from rods.reward.perturb import perturb, replay
from rods.tasks import load_split, read_tasks, write_tasks


def test_export_splits(tmp_path):
    out = tmp_path / "train.jsonl"
    assert main(["tasks", "export", "--split", "train", "--out", str(out)]) == 0
    tasks = read_tasks(out)
    assert len(tasks) == 400
    assert main(["tasks", "validate", str(out)]) == 0


def test_slice_then_synthesize_gives_variants_with_their_own_history(tmp_path):
    source, pieces, variants = tmp_path / "tasks.jsonl", tmp_path / "slices.jsonl", tmp_path / "variants.jsonl"
    tasks = [t for t in load_split("train") if t.category == "base"][:3]
    write_tasks(source, tasks)
    assert main(["tasks", "slice", str(source), "--out", str(pieces), "--max-calls", "1"]) == 0
    slices = read_tasks(pieces)
    assert slices and all(len(p.ground_truth[0]) == 1 and p.provenance.slice_of in {t.id for t in tasks}
                          for p in slices)
    assert main(["tasks", "validate", str(pieces)]) == 0
    assert main(["synth", "--seeds", str(pieces), "--llm", "template", "--out", str(variants)]) == 0
    by_id = {p.id: p for p in slices}
    made = [v for v in read_tasks(variants) if by_id[v.provenance.parent_id].provenance.slice_turn > 0]
    assert made  # mid-episode slices keep a history of their shape, with new content
    for variant in made:
        seed = by_id[variant.provenance.parent_id]
        assert [m.role for m in variant.question[0]] == [m.role for m in seed.question[0]]
        if variant.provenance.strategy == "recast":  # the seed's words, its values (and only they) new
            assert variant.question[0] != seed.question[0] or variant.initial_config != seed.initial_config
        else:
            assert variant.question[0][0].content != seed.question[0][0].content


def _trajectories(tasks):
    rows = []
    for task in tasks:
        rows.append({"task_id": task.id, "steps": replay(task)})
        rows.append({"task_id": task.id, "steps": perturb(task, "dropped")})
        rows.append({"task_id": task.id, "steps": perturb(task, "empty_step_turn")})
    return rows


def test_reward_output_matches_score_line_by_line(tmp_path, bfcl_tasks):
    tasks = bfcl_tasks[::100]
    rows = _trajectories(tasks)
    traj, out = tmp_path / "traj.jsonl", tmp_path / "out.jsonl"
    traj.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["reward", "--trajectories", str(traj), "--out", str(out)]) == 0  # default: BFCL's tasks
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == len(rows)
    by_id = {t.id: t for t in tasks}
    for row, line in zip(rows, lines):
        assert set(line) == {"task_id", "state_pass", "exec_pass", "progress", "binary"}
        assert line == score(by_id[row["task_id"]], row["steps"]).to_json(row["task_id"])
    assert [line["binary"] for line in lines[::3]] == [1] * len(tasks)

    # an explicit task file gives the same answer
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text("".join(json.dumps(t.model_dump(mode="json")) + "\n" for t in tasks))
    out2 = tmp_path / "out2.jsonl"
    assert main(["reward", "--tasks", str(task_file), "--trajectories", str(traj), "--out", str(out2)]) == 0
    assert out2.read_text() == out.read_text()


@pytest.mark.parametrize(
    "line, fragment",
    [
        ("{oops", "line 2: invalid JSON"),
        ('["not", "an", "object"]', "line 2: expected a JSON object"),
        ('{"steps": []}', "line 2: field 'task_id'"),
        ('{"task_id": "no_such_task", "steps": []}', "line 2: field 'task_id': unknown task"),
        ('{"task_id": "multi_turn_base_0"}', "line 2: field 'steps': missing"),
        ('{"task_id": "multi_turn_base_0", "steps": [[["ls()", 3]]]}', "line 2: field 'steps[0][0][1]'"),
        ('{"task_id": "multi_turn_base_0", "steps": "ls()"}', "line 2: field 'steps'"),
        ('{"task_id": "multi_turn_base_0", "steps": [[], [], [], [], [], [], []]}', "line 2: field 'steps': 7 turns"),
    ],
)
def test_bad_trajectory_lines_are_named(tmp_path, capsys, bfcl_tasks, line, fragment):
    traj, out = tmp_path / "traj.jsonl", tmp_path / "out.jsonl"
    good = json.dumps({"task_id": bfcl_tasks[0].id, "steps": replay(bfcl_tasks[0])})
    traj.write_text(good + "\n" + line + "\n")
    assert main(["reward", "--trajectories", str(traj), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert str(traj) in err and fragment in err
    assert not out.exists()  # nothing half-written


def test_reward_never_imports_torch(tmp_path, bfcl_tasks):
    traj, out = tmp_path / "traj.jsonl", tmp_path / "out.jsonl"
    traj.write_text(json.dumps({"task_id": bfcl_tasks[0].id, "steps": replay(bfcl_tasks[0])}) + "\n")
    code = (
        "import sys; from rods.cli import main; "
        f"rc = main(['reward', '--trajectories', {str(traj)!r}, '--out', {str(out)!r}]); "
        "heavy = [m for m in ('torch', 'transformers', 'trl') if m in sys.modules]; "
        "assert rc == 0 and not heavy, (rc, heavy)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(out.read_text())["binary"] == 1
