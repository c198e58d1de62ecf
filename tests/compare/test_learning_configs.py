"""The learning experiment's arms (configs/learning/, docs/results/learning.md) resolve and each runs one step.

The experiment itself runs for hours outside `make test`; this checks that its
three configs still load, differ only where the design says (the pool, the
dynamic sampling, the synthesis) and train one GRPO step each, with the policy
swapped for the tiny random model and the group shrunk to fit a test.
"""

import json
from pathlib import Path

import pytest

from rods.train import load_config
from rods.train.load import apply_overrides, config_from_dict

pytestmark = pytest.mark.slow

LEARNING = Path(__file__).resolve().parents[2] / "configs" / "learning"
ARMS = ["static", "dynamic_sampling", "rods"]


def _arm(name: str):
    return load_config(LEARNING / f"{name}.yaml")


def test_the_arms_share_everything_but_what_the_design_varies():
    static, dynamic, rods = (_arm(a).model_dump(mode="json") for a in ARMS)
    assert static["data"]["classes"] == ["GorillaFileSystem"] and static["data"]["max_slices"] == 16
    assert static["grpo"]["num_generations"] == static["engine"]["K"] == 8
    assert static["grpo"]["max_steps"] >= 80
    for arm in (dynamic, rods):
        for section in ("model", "data", "rollout", "warm_start"):
            assert arm[section] == static[section], section
        for key in ("num_generations", "tasks_per_step", "max_steps", "learning_rate", "seed"):
            assert arm["grpo"][key] == static["grpo"][key], key
    assert dynamic["grpo"]["dynamic_sampling"]["enabled"] and not static["grpo"]["dynamic_sampling"]["enabled"]
    assert rods["synthesis"]["enabled"] and not static["synthesis"]["enabled"] and not dynamic["synthesis"]["enabled"]
    assert static["engine"]["capacity"] == dynamic["engine"]["capacity"] == 0 < rods["engine"]["capacity"]


@pytest.mark.parametrize("arm", ARMS)
def test_each_arm_trains_one_step(arm, tiny_model_dir, tmp_path):
    from rods.train.run import train

    shrunk = apply_overrides(_arm(arm).model_dump(mode="json"), [
        f"model.name_or_path={tiny_model_dir}", f"output_dir={tmp_path / arm}", "data.max_slices=2",
        "grpo.num_generations=2", "engine.K=2", "engine.min_observations=2", "engine.burn_in_rollouts=2",
        "grpo.max_steps=1", "grpo.save_steps=1", "warm_start.max_steps=1", "warm_start.eval_tasks=1",
        "rollout.max_reply_tokens=4",
    ])
    summary = train(config_from_dict(shrunk, f"configs/learning/{arm}.yaml (shrunk)"))
    assert summary.steps == 1 and summary.seeds == 2
    assert summary.warm_start is not None
    done = json.loads((tmp_path / arm / "summary.json").read_text())
    assert done["steps"] == 1
