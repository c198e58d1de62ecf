"""The "Bring your own environment" guide's Python class, run as written (docs/design.md §4.8).

The commands are read from the guide's code block (docs/guides/environments.md, "A Python
class"), so the test fails when the guide and the code drift apart. They run in a scratch copy of the example and
its config; `rods` is this checkout's (`python -m rods`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rods.reward import score
from rods.synth.profile import profile_of
from rods.tasks import read_tasks

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "guides" / "environments.md"


def guide_commands() -> list[str]:
    """The command lines of the guide's bash block (comments dropped)."""
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("\n## A Python class\n", 1)[1].split("\n## ", 1)[0]
    block = re.findall(r"```bash\n(.*?)```", section, flags=re.S)[0]
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def run_guide(tmp_path: Path, commands: list[str], timeout: float) -> subprocess.CompletedProcess:
    shutil.copytree(ROOT / "examples" / "byo_env", tmp_path / "examples" / "byo_env")
    (tmp_path / "configs").mkdir()
    shutil.copy(ROOT / "configs" / "byo_env.yaml", tmp_path / "configs")
    script = "set -e\n" + f'rods() {{ "{sys.executable}" -m rods "$@"; }}\n' + "\n".join(commands)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_the_guide_has_the_four_steps():
    commands = guide_commands()
    assert commands[0].startswith("export PYTHONPATH=")
    assert [c.split()[:2] for c in commands[1:]] == [["rods", "tasks"], ["rods", "synth"], ["rods", "train"]]
    assert "--llm template" in commands[2]


def test_class_to_validated_seeds_to_verified_variants(tmp_path, monkeypatch):
    commands = [c for c in guide_commands() if not c.startswith("rods train")]
    done = run_guide(tmp_path, commands, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "4/4 tasks pass" in done.stdout + done.stderr
    monkeypatch.syspath_prepend(str(tmp_path / "examples" / "byo_env"))  # as the guide's export does
    seeds = {t.id: t for t in read_tasks(tmp_path / "examples" / "byo_env" / "seeds.jsonl")}
    variants = read_tasks(tmp_path / "runs" / "byo_env" / "variants.jsonl")
    assert len({v.provenance.parent_id for v in variants}) >= 3  # at least 3 of the 4 seeds yield variants
    for task in variants:
        seed = seeds[task.provenance.parent_id]
        assert task.environment == "library:Library"
        result = score(task, [[list(turn)] if turn else [] for turn in task.ground_truth])
        assert (result.progress, result.binary) == (1.0, 1)
        assert profile_of(task).matches(profile_of(seed))
        assert task.ground_truth != seed.ground_truth


@pytest.mark.slow
@pytest.mark.timeout(2400)  # the embedded model's rollouts on two shared cores
def test_the_guide_runs_to_a_short_training_run(tmp_path):
    commands = guide_commands()
    train = commands.index(next(c for c in commands if c.startswith("rods train")))
    # one step of one group, shorter replies: the guide's run as written, cut to what shows it trains
    commands[train] += (" --set grpo.max_steps=1 --set grpo.save_steps=1 --set grpo.tasks_per_step=1"
                        " --set rollout.max_reply_tokens=16")
    done = run_guide(tmp_path, commands, timeout=2300)
    assert done.returncode == 0, done.stderr[-3000:]
    run = tmp_path / "runs" / "byo_env"
    assert any(run.rglob("*.json*")), sorted(p.name for p in run.iterdir())
