"""The comparison summary on synthetic run directories (no model): figures read back, aggregated, written."""

import json
import random
import statistics

import pytest
from hypothesis import given, settings, strategies as st

from rods.compare.arms import load_arms, plan_runs
from rods.compare.summary import ZONES, read_run, spread, summarize_comparison


def _jsonl(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def fake_run(run_dir, rng, steps, *, injected=0, replay_step=None, heldout=True):
    """A run directory as a finished job leaves it; returns the numbers it holds."""
    run_dir.mkdir(parents=True)
    fractions = {s: rng.choice([None, rng.random()]) if s == 1 else rng.random() for s in range(1, steps + 1)}
    zones = {z: rng.randrange(10) for z in ZONES}
    metrics = [{"step": s, "epoch": 0, "zones": {z: 0 for z in ZONES}, "informative_fraction": f,
                "total_accepted": 0, "total_injected": 0} for s, f in fractions.items()]
    if replay_step is not None:  # a resumed run logs a replayed step again: the last record wins
        metrics.insert(replay_step, {**metrics[replay_step - 1], "informative_fraction": 0.123456})
        metrics[replay_step - 1] = {**metrics[replay_step - 1], "informative_fraction": 0.999}
    metrics.append({"step": steps, "epoch": 1, "epoch_end": True, "zones": zones, "informative_fraction": None,
                    "total_accepted": injected + 3 * bool(injected), "total_injected": injected})
    _jsonl(run_dir / "metrics.jsonl", metrics)
    if replay_step is not None:
        fractions[replay_step] = 0.123456
    rewards = {s: rng.random() for s in range(1, steps + 1)}
    _jsonl(run_dir / "trainer_log.jsonl", [{"step": s, "reward": r, "loss": 0.1} for s, r in rewards.items()]
           + [{"step": steps, "train_runtime": 1.0}])
    seconds = [round(rng.uniform(1, 50), 2) for _ in range(rng.randint(1, 3))]
    _jsonl(run_dir / "attempts.jsonl", [rec for s in seconds for rec in
                                        ({"event": "start"}, {"event": "end", "seconds": s, "code": 0})])
    scores = {}
    if heldout:
        for when in ("before", "after"):
            (run_dir / f"heldout_{when}").mkdir()
            scores[when] = (rng.random(), rng.random())
            (run_dir / f"heldout_{when}" / "report.json").write_text(json.dumps(
                {"overall_progress": scores[when][0], "overall_accuracy": scores[when][1]}))
    (run_dir / "done.json").write_text(json.dumps({"steps": steps, "seconds": 1.0}))
    late = [f for s, f in fractions.items() if s > steps / 2 and f is not None]
    return {"late": sum(late) / len(late), "reward": sum(rewards.values()) / steps, "zones": zones,
            "injected": injected, "seconds": sum(seconds), "scores": scores}


@pytest.mark.parametrize("seed", range(12))
def test_read_run_matches_what_the_run_logged(tmp_path, seed):
    rng = random.Random(seed)
    steps = rng.randint(2, 12)
    expected = fake_run(tmp_path / "run", rng, steps, injected=rng.randrange(5), replay_step=rng.randint(1, steps))
    run = read_run("rods", 3, tmp_path / "run")
    assert run["steps"] == steps and run["seed"] == 3 and run["attempts"] >= 1
    assert run["informative_fraction_late"] == pytest.approx(expected["late"])
    assert run["mean_reward"] == pytest.approx(expected["reward"])
    assert run["zones_end"] == expected["zones"]
    assert run["injected"] == expected["injected"]
    assert run["wall_seconds"] == pytest.approx(expected["seconds"])
    assert run["heldout_progress_before"] == expected["scores"]["before"][0]
    assert run["heldout_accuracy_after"] == expected["scores"]["after"][1]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(-1e6, 1e6)), max_size=8))
def test_spread_is_mean_std_min_max_of_the_values_present(values):
    xs = [v for v in values if v is not None]
    s = spread(values)
    assert s["n"] == len(xs)
    if not xs:
        assert s["mean"] is None and s["std"] is None
        return
    assert s["mean"] == pytest.approx(statistics.fmean(xs), abs=1e-6)
    assert s["std"] == pytest.approx(statistics.stdev(xs) if len(xs) > 1 else 0.0, abs=1e-6)
    assert (s["min"], s["max"]) == (min(xs), max(xs))


def test_summary_writes_json_table_and_figures_consistent_with_the_runs(tmp_path):
    rng = random.Random(7)
    runs, expected = [], {}
    for arm, injected in (("static", 0), ("rods", 4)):
        for seed in range(3):
            run_dir = tmp_path / "runs" / arm / f"seed-{seed}"
            expected[(arm, seed)] = fake_run(run_dir, rng, 8, injected=injected)
            runs.append((arm, seed, run_dir))
    result = summarize_comparison(tmp_path, runs, arms={"static": "s.yaml", "rods": "r.yaml"})
    on_disk = json.loads((tmp_path / "comparison.json").read_text())
    assert on_disk["arms"] == json.loads(json.dumps(result["arms"]))
    assert list(on_disk["arms"]) == ["static", "rods"] and on_disk["steps"] == 8
    for arm in ("static", "rods"):
        lates = [expected[(arm, s)]["late"] for s in range(3)]
        entry = on_disk["arms"][arm]
        assert entry["seeds"] == [0, 1, 2]
        assert entry["informative_fraction_late"]["mean"] == pytest.approx(statistics.fmean(lates))
        assert entry["informative_fraction_late"]["std"] == pytest.approx(statistics.stdev(lates))
        assert entry["informative_fraction_late"]["max"] == pytest.approx(max(lates))
        after = [expected[(arm, s)]["scores"]["after"][0] for s in range(3)]
        assert entry["heldout_progress_after"]["mean"] == pytest.approx(statistics.fmean(after))
        assert entry["zones_end"]["boundary"]["mean"] == pytest.approx(
            statistics.fmean(expected[(arm, s)]["zones"]["boundary"] for s in range(3)))
    assert on_disk["arms"]["rods"]["injected"]["mean"] == 4 and on_disk["arms"]["static"]["injected"]["max"] == 0
    table = (tmp_path / "table.md").read_text()
    rows = [line for line in table.splitlines() if line.startswith(("| static", "| rods"))]
    assert len(rows) == 2
    mean = on_disk["arms"]["rods"]["informative_fraction_late"]["mean"]
    assert f"{mean:.3f}" in rows[1]
    for png in ("informative_fraction.png", "heldout.png"):
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_run_without_heldout_evaluation_reports_none(tmp_path):
    fake_run(tmp_path / "run", random.Random(1), 4, heldout=False)
    run = read_run("a", 0, tmp_path / "run")
    assert run["heldout_progress_before"] is None and run["heldout_accuracy_after"] is None


def _arm(path, base, **changes):
    data = {"base": base.name, **changes}
    path.write_text(json.dumps(data))  # JSON is YAML
    return path


@pytest.fixture()
def base(tmp_path):
    path = tmp_path / "base.yaml"
    path.write_text(json.dumps({"data": {"seeds": "train", "max_slices": 5, "task_mix": "turn_slices"},
                                "grpo": {"max_steps": 10}, "synthesis": {"enabled": False}}))
    return path


def test_arms_must_share_seeds_and_steps(tmp_path, base):
    a = _arm(tmp_path / "a.yaml", base)
    b = _arm(tmp_path / "b.yaml", base, grpo={"max_steps": 20})
    with pytest.raises(ValueError, match="different step budgets"):
        load_arms([a, b])
    assert [x.config.grpo.max_steps for x in load_arms([a, b], steps=3)] == [3, 3]
    both = load_arms([a, b], steps=3, overrides=["grpo.learning_rate=0.5", "grpo.max_steps=7"])
    assert [(x.config.grpo.learning_rate, x.config.grpo.max_steps) for x in both] == [(0.5, 3), (0.5, 3)]
    c = _arm(tmp_path / "c.yaml", base, data={"max_slices": 6})
    with pytest.raises(ValueError, match=r"arm c .* other seed tasks than a"):
        load_arms([a, c])
    (tmp_path / "sub").mkdir()
    twin = _arm(tmp_path / "sub" / "a.yaml", tmp_path / "sub" / "base.yaml")
    (tmp_path / "sub" / "base.yaml").write_text(base.read_text())
    with pytest.raises(ValueError, match="two arms are named"):
        load_arms([a, twin])


def test_each_run_overrides_only_seed_and_directory(tmp_path, base):
    arms = load_arms([_arm(tmp_path / "a.yaml", base), _arm(tmp_path / "b.yaml", base)])
    runs = plan_runs(arms, 3, tmp_path / "out")
    assert [(r.arm, r.seed) for r in runs] == [("a", 0), ("b", 0), ("a", 1), ("b", 1), ("a", 2), ("b", 2)]
    for run in runs:
        assert run.run_dir == tmp_path / "out" / "runs" / run.arm / f"seed-{run.seed}"
        assert run.config.grpo.seed == run.seed and run.config.run_dir == str(run.run_dir)
        original = arms[0].config.model_dump()
        changed = run.config.model_dump()
        original["grpo"].pop("seed"), changed["grpo"].pop("seed")
        original.pop("output_dir"), changed.pop("output_dir")
        assert changed == original
    with pytest.raises(ValueError, match="--seeds must be >= 1"):
        plan_runs(arms, 0, tmp_path / "out")


def test_a_rerun_with_another_heldout_size_is_refused(tmp_path, base):
    from rods.compare.runner import run_comparison

    out = tmp_path / "out"
    out.mkdir()
    (out / "compare.json").write_text(json.dumps({"heldout": 16}))
    with pytest.raises(ValueError, match="started with --heldout 16"):
        run_comparison([_arm(tmp_path / "a.yaml", base)], out, seeds=1, heldout=4)


def test_a_summary_of_the_runs_so_far_names_the_unfinished_and_runs_nothing(tmp_path, base):
    """`rods compare --summarize`: a comparison that spans sessions shows its whole runs; a run without its done
    marker (one a session ended in) is left out and named, and nothing is started."""
    from rods.cli import main
    from rods.compare.runner import summarize_finished

    arms = [_arm(tmp_path / "a.yaml", base), _arm(tmp_path / "b.yaml", base)]
    out = tmp_path / "out"
    rng = random.Random(3)
    for arm, seed in (("a", 0), ("b", 0), ("a", 1)):
        fake_run(out / "runs" / arm / f"seed-{seed}", rng, 10)
    (out / "runs" / "b" / "seed-1").mkdir(parents=True)  # started, no done.json
    summary, pending = summarize_finished(arms, out, seeds=2)
    assert [(r.arm, r.seed) for r in pending] == [("b", 1)]
    assert summary["unfinished"] == ["b/seed-1"] and len(summary["runs"]) == 3
    assert summary["arms"]["a"]["seeds"] == [0, 1] and summary["arms"]["b"]["seeds"] == [0]
    assert "not yet finished, so not in the table: b/seed-1" in (out / "table.md").read_text()
    assert not any((out / "runs" / "b" / "seed-1").iterdir())  # nothing ran there
    assert main(["compare", "--arms", *map(str, arms), "--seeds", "2", "--out", str(out), "--summarize"]) == 0
    with pytest.raises(ValueError, match="no finished run"):
        summarize_finished(arms, tmp_path / "empty", seeds=2)
