"""`rods reward`'s ground-truth disk cache: same verdicts, keyed by content and code, robust to bad files."""

import json

from rods.cli import main
from rods.reward import clear_ground_truth_cache, compute_ground_truth, score
from rods.reward.disk_cache import GroundTruthDiskCache, default_cache_dir
from rods.reward.ground_truth import disk_cache, ground_truth_for, task_fingerprint
from rods.reward.perturb import KINDS, perturb


def _trajectories(task):
    out = []
    for kind in KINDS:
        for seed in range(2):
            steps = perturb(task, kind, seed)
            if steps is not None:
                out.append(steps)
    return out


def test_a_stored_ground_truth_gives_the_same_verdicts(tmp_path, bfcl_tasks):
    cache = GroundTruthDiskCache(tmp_path)
    for task in bfcl_tasks[::57]:  # every category, long-context included
        key = f"{task.id}\n{task_fingerprint(task)}"
        assert cache.load(key) is None
        cache.store(key, compute_ground_truth(task))
        stored, fresh = cache.load(key), compute_ground_truth(task)
        assert stored is not None and stored.results == fresh.results and stored.needed == fresh.needed
        trajectories = _trajectories(task)
        assert trajectories
        for steps in trajectories:
            assert score(task, steps, stored) == score(task, steps, fresh)
    assert cache.hits == len(bfcl_tasks[::57]) and cache.misses == len(bfcl_tasks[::57])


def test_a_changed_task_misses_and_a_broken_file_is_recomputed(tmp_path, bfcl_tasks):
    task = bfcl_tasks[3]
    clear_ground_truth_cache()
    with disk_cache(tmp_path) as cache:
        first = ground_truth_for(task)
        assert (cache.hits, cache.misses) == (0, 1)
        clear_ground_truth_cache()
        assert ground_truth_for(task).results == first.results
        assert (cache.hits, cache.misses) == (1, 1)

        changed = task.model_copy(deep=True)
        changed.ground_truth[0] = changed.ground_truth[0][:-1]  # drop the first turn's last call
        clear_ground_truth_cache()
        assert ground_truth_for(changed).results[0] == first.results[0][:-1]
        assert cache.misses == 2

        files = sorted(tmp_path.rglob("*.pickle"))
        assert len(files) == 2
        for path in files:
            path.write_bytes(b"not a pickle")
        clear_ground_truth_cache()
        assert ground_truth_for(task).results == first.results
        assert cache.misses == 3
    clear_ground_truth_cache()


def test_rods_reward_reuses_its_cache_and_writes_the_same_lines(tmp_path, bfcl_tasks, capsys):
    tasks = bfcl_tasks[::100]
    traj = tmp_path / "traj.jsonl"
    rows = [{"task_id": t.id, "steps": s} for t in tasks for s in _trajectories(t)[:6]]
    rows += rows[:4]  # repeated trajectories are scored once and written every time
    traj.write_text("".join(json.dumps(r) + "\n" for r in rows))
    outs = []
    for i, flags in enumerate([[], [], ["--no-cache"]]):
        clear_ground_truth_cache()
        out = tmp_path / f"out{i}.jsonl"
        assert (
            main(["reward", "--trajectories", str(traj), "--out", str(out), "--cache-dir", str(tmp_path / "c"), *flags])
            == 0
        )
        outs.append(out.read_text())
    err = capsys.readouterr().err
    assert f"ground truths: 0 from the cache, {len(tasks)} computed" in err
    assert f"ground truths: {len(tasks)} from the cache, 0 computed" in err
    assert outs[0] == outs[1] == outs[2]
    by_id = {t.id: t for t in tasks}
    lines = [json.loads(line) for line in outs[0].splitlines()]
    assert len(lines) == len(rows)
    assert lines == [score(by_id[r["task_id"]], r["steps"]).to_json(r["task_id"]) for r in rows]


def test_the_default_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("RODS_CACHE_DIR", str(tmp_path / "x"))
    assert default_cache_dir() == tmp_path / "x" / "ground_truth"
    monkeypatch.delenv("RODS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "rods" / "ground_truth"
