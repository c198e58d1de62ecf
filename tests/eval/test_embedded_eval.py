"""`rods eval --limit 4` (one task a category) of the embedded SmolLM2-135M (local transformers), re-checked by BFCL.

Settings are cut for 2 CPU cores: compact tool docs, short replies and one
tool-calling reply per turn (each turn still ends and is scored; see
docs/results/evaluation.md for the figures at BFCL's settings).
"""

import json

import pytest

from rods.cli import main as rods_main
from rods.eval import rescore_file
from rods.rollout import Trajectory
from rods.tasks import CATEGORIES, load_split


@pytest.mark.slow
def test_embedded_model_eval_on_a_stratified_subset_matches_bfcl(tmp_path):
    out = tmp_path / "run"
    code = rods_main(["eval", "--model", "embedded", "--limit", "4", "--tool-docs", "compact", "--max-new-tokens", "12",
                      "--max-steps", "1", "--step-cap", "end_turn", "--threads", "1", "--out", str(out)])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert report["n_tasks"] == 4
    assert {name: c["n"] for name, c in report["categories"].items()} == dict.fromkeys(CATEGORIES, 1)
    assert report["settings"]["tools_in_prompt"] is True  # SmolLM2's template has no tools
    trajs = [Trajectory.from_json(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    tasks = {t.id: t for t in load_split("test")}
    for traj in trajs:
        assert len(traj.turns) == tasks[traj.task_id].num_turns
        assert all(turn.end in ("answer", "step_cap") and turn.replies for turn in traj.turns)
    # the official checker, run again on the written file, reproduces every verdict
    agreement = rescore_file(out / "decoded.jsonl", tasks.values())
    assert agreement.total == 4 and agreement.disagreements == []
    assert report["official"]["agree"] == 4
    accuracy = {name: c["accuracy"] for name, c in report["categories"].items()}
    assert report["overall_accuracy"] == pytest.approx(sum(accuracy.values()) / 4)
