"""tau2-bench's tasks as seeds: gold actions as ground truth, the committed files in sync, every seed replays."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rods.cli import main
from rods.envs.calls import parse_calls
from rods.envs.tau2 import ENVIRONMENTS
from rods.envs.tau2.tasks import convert, first_person, tau2_tasks
from rods.reward import score
from rods.reward.perturb import replay
from rods.tasks import read_tasks, write_tasks

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
#: The conversions (tau2 replays every task in its own environment) are kept per process: one worker runs them all.
pytestmark = pytest.mark.xdist_group("tau2_seeds")

#: tau2's task counts, and those with no gold action by the assistant (left out).
COUNTS = {"airline": (50, 7), "retail": (114, 2)}


@pytest.fixture(scope="module", params=["airline", "retail"])
def conversion(request):
    return convert(request.param, "all")


@pytest.mark.slow  # converts and replays every tau2 task: `make test` runs it
def test_every_task_is_a_seed_or_left_out_with_a_reason(conversion):
    total, without_actions = COUNTS[conversion.domain]
    assert len(conversion.tasks) + len(conversion.skipped) == total
    assert len(conversion.skipped) == without_actions
    assert all("no gold action" in reason for reason in conversion.skipped.values())


@pytest.mark.slow  # converts and replays every tau2 task: `make test` runs it
def test_ground_truth_is_the_assistants_gold_actions_in_order(conversion):
    originals = {f"tau2_{conversion.domain}_{t.id}": t for t in tau2_tasks(conversion.domain)}
    for task in conversion.tasks:
        gold = [a for a in originals[task.id].evaluation_criteria.actions if a.requestor == "assistant"]
        calls = [call for text in task.ground_truth[0] for call in parse_calls(text)]
        assert [(c.name, c.arguments) for c in calls] == [(a.name, a.arguments) for a in gold]
        assert task.environment == ENVIRONMENTS[conversion.domain]
        assert task.involved_classes == [task.environment]
        assert len(task.question) == 1 and task.question[0][0].role == "user"
        assert task.provenance.origin == "seed"


@pytest.mark.slow  # converts and replays every tau2 task: `make test` runs it
def test_seeds_round_trip_through_a_task_file(conversion, tmp_path):
    path = tmp_path / "seeds.jsonl"
    write_tasks(path, conversion.tasks)
    assert read_tasks(path) == conversion.tasks


@pytest.mark.slow  # exports a whole tau2 split: `make test` runs it
@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_committed_seed_files_are_a_fresh_export_of_tau2s_splits(domain):
    for split in ("train", "test"):
        committed = read_tasks(EXAMPLES / f"tau2_{domain}" / f"{split}.jsonl")
        assert committed == convert(domain, split).tasks, f"re-export examples/tau2_{domain}/{split}.jsonl"


@pytest.mark.slow  # converts and replays every tau2 task: `make test` runs it
def test_every_seed_replays_with_rp_1(conversion):
    failed = []
    for task in conversion.tasks:
        result = score(task, replay(task))
        if result.progress != 1.0 or result.binary != 1:
            failed.append(task.id)
    assert failed == []


@pytest.mark.slow  # converts and replays every tau2 task: `make test` runs it
def test_every_seed_passes_validation_with_tau2s_own_failing_actions_marked(conversion):
    """A gold action that fails in tau2's own environment is marked expected to fail; ours must fail there too,
    and nowhere else."""
    from rods.envs.validation import describe, validate_task

    lines = [describe(f, task.id) for task in conversion.tasks for f in validate_task(task)]
    assert lines == []
    marked = {t.id: t.expected_errors for t in conversion.tasks if t.expected_errors}
    if conversion.domain == "retail":  # a misremembered e-mail first, then the right one
        assert marked["tau2_retail_35"] == {"0": [0]}
        assert "aarav.santos8321" in next(t for t in conversion.tasks if t.id == "tau2_retail_35").ground_truth[0][0]
        assert len(marked) == 18
    else:
        assert marked == {}

@pytest.mark.slow  # exports a whole tau2 split: `make test` runs it

def test_export_command_writes_the_split_and_names_what_it_left_out(tmp_path, capsys):
    out = tmp_path / "retail_test.jsonl"
    assert main(["tasks", "export", "tau2:retail", "--split", "test", "--out", str(out)]) == 0
    assert read_tasks(out) == convert("retail", "test").tasks
    err = capsys.readouterr().err
    assert f"wrote {len(read_tasks(out))} tau2 retail seeds (test)" in err
    assert main(["tasks", "validate", str(out)]) == 0


@pytest.mark.parametrize(
    ("brief", "voice"),
    [
        ("You are Emma Kim.\nYour user id is emma_kim_9957.", "I am Emma Kim.\nMy user id is emma_kim_9957."),
        ("If the agent tells you it is not possible, say you were told otherwise.",
         "If the agent tells me it is not possible, say I was told otherwise."),
        ("You want to cancel. You're sure the agent can help you.",
         "I want to cancel. I'm sure the agent can help me."),
        ("It is yours, not theirs; admit it if the agent corrects you.",
         "It is mine, not theirs; admit it if the agent corrects me."),
    ],
)
def test_the_brief_is_put_in_the_customers_voice(brief, voice):
    assert first_person(brief) == voice


@pytest.mark.slow  # converts and replays every tau2 task: `make test` runs it
def test_no_second_person_is_left_in_any_seed(conversion):
    for task in conversion.tasks:
        text = task.question[0][0].content
        assert not re.search(r"\byou(r|rs|rself)?\b", text, re.IGNORECASE), task.id


def test_a_tasks_initial_state_becomes_the_seeds_database_update_and_the_rest_is_refused():
    from tau2.data_model.tasks import EnvFunctionCall, InitializationData, InitialState

    from rods.envs import ToolEnvironment
    from rods.envs.tau2.tasks import seed_task

    original = next(t for t in tau2_tasks("retail") if t.id == "1")
    user_id = "yusuf_rossi_9620"
    update = {"users": {user_id: {"email": "yusuf@example.com"}}}
    with_state = original.model_copy(update={
        "initial_state": InitialState(initialization_data=InitializationData(agent_data=update))
    })
    seed = seed_task("retail", with_state)
    assert seed.initial_config == {seed.environment: {"db": update}}
    env = ToolEnvironment(seed)
    assert '"yusuf@example.com"' in env.call("get_user_details", {"user_id": user_id})
    assert score(seed, replay(seed)).binary == 1

    scripted = original.model_copy(update={"initial_state": InitialState(initialization_actions=[
        EnvFunctionCall(env_type="assistant", func_name="get_user_details", arguments={"user_id": user_id})
    ])})
    with pytest.raises(ValueError, match="initialization actions"):
        seed_task("retail", scripted)
