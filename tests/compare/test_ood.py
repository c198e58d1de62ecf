"""`rods.compare.ood`: the suites a comparison scores each run on, and the figures it reads back."""

import json

import pytest

from rods.compare.ood import Suite, headline, read_run_ood
from rods.compare.summary import aggregate, markdown_table, ood_column


def test_a_suite_is_its_name_and_the_eval_arguments_it_passes_on():
    suite = Suite.parse("tau2: --domain airline --user-base-url 'http://h:1/v1'")
    assert suite == Suite("tau2", ("--domain", "airline", "--user-base-url", "http://h:1/v1"))
    assert Suite.parse(suite.spec()) == suite and Suite.parse("bfcl_v4") == Suite("bfcl_v4")
    with pytest.raises(ValueError, match="unknown suite 'bfcl_v5'.*bfcl_v4"):
        Suite.parse("bfcl_v5")
    with pytest.raises(ValueError, match="comparison's to set"):
        Suite.parse("bfcl_v4: --out elsewhere")


def test_the_headline_figures_of_each_suite():
    v4 = {"categories": {"simple_python": {"accuracy": 0.5}, "multiple": {"accuracy": 0.25},
                         "irrelevance": {"accuracy": 1.0}, "format_sensitivity": {"accuracy": 0.0}}}
    assert headline("bfcl_v4", v4) == {"accuracy": 0.375, "irrelevance": 1.0}
    tau2 = {"domains": {"airline": {"pass_hat_k": {"pass^1": 0.2, "pass^2": 0.1}, "avg_reward": 0.3},
                        "retail": {"pass_hat_k": {"pass^1": 0.4, "pass^2": 0.2}, "avg_reward": 0.5}}}
    assert headline("tau2", tau2) == pytest.approx({"pass^1": 0.3, "avg_reward": 0.4})
    assert headline("multi_turn", {"overall_accuracy": 0.1, "overall_progress": 0.2}) == {"accuracy": 0.1,
                                                                                          "progress": 0.2}


def test_figures_read_back_aggregate_per_arm_and_show_in_the_table(tmp_path):
    runs = []
    for seed, accuracy in enumerate((0.25, 0.75)):
        folder = tmp_path / f"seed-{seed}" / "ood" / "bfcl_v4"
        folder.mkdir(parents=True)
        (folder / "report.json").write_text(json.dumps({"categories": {"simple_python": {"accuracy": accuracy}}}))
        (tmp_path / f"seed-{seed}" / "ood" / "tau2.partial").mkdir()  # an interrupted suite counts for nothing
        ood = read_run_ood(tmp_path / f"seed-{seed}")
        assert ood == {"ood/bfcl_v4/accuracy": accuracy, "ood/bfcl_v4/irrelevance": None}
        runs.append({"arm": "rods", "seed": seed, "zones_end": dict.fromkeys(("new", "hard", "boundary",
                                                                              "mastered"), 0), "ood": ood,
                     **dict.fromkeys(("informative_fraction_late", "mean_reward", "synthesized", "injected",
                                      "wall_seconds", "heldout_progress_before", "heldout_progress_after",
                                      "heldout_accuracy_before", "heldout_accuracy_after"), 0.0)})
    arms = aggregate(runs)
    assert arms["rods"]["ood/bfcl_v4/accuracy"]["mean"] == pytest.approx(0.5)
    table = markdown_table({"arms": arms, "steps": 4})
    assert ood_column("ood/bfcl_v4/accuracy") == "bfcl_v4 accuracy (OOD)" in table
    assert "0.500" in table.splitlines()[2]
