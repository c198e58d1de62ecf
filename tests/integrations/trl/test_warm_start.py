"""SFT warm-start examples: gold first turns rendered exactly as the rollout prompts them."""

import json

from rods.envs.slices import turn_slices
from rods.integrations.trl.rollout import MultiTurnRollout
from rods.integrations.trl.warm_start import hermes_calls, sft_examples
from rods.rollout import parse_tool_calls
from rods.rollout.settings import RolloutSettings
from rods.tasks import load_split


def test_hermes_calls_round_trip_through_the_parser():
    text = hermes_calls(["cd(folder='document')", "mkdir(dir_name='temp')"])
    calls = parse_tool_calls(text).calls
    assert [(c.name, c.arguments) for c in calls] == [("cd", {"folder": "document"}), ("mkdir", {"dir_name": "temp"})]
    assert json.loads(text.split("\n")[1])["name"] == "cd"
    assert hermes_calls(["sort('final_report.pdf')"]) is None  # positional: no faithful JSON form
    assert hermes_calls(["not a call("]) is None


def test_sft_examples_match_rollout_prompts(tiny_tokenizer):
    tasks = turn_slices(load_split("train"), max_calls=2)[:6]
    rollout = MultiTurnRollout({t.id: t for t in tasks}.__getitem__, tiny_tokenizer,
                               RolloutSettings(tool_docs="signatures"))
    examples = sft_examples(tasks, rollout)
    assert len(examples) >= 4
    episode = rollout.new_episode(tasks[0])
    assert examples[0]["prompt"] == rollout._render(episode.messages, episode.tools, generation_prompt=True)
    assert examples[0]["prompt"].endswith("<|im_start|>assistant\n")
    assert "<tool_call>" in examples[0]["completion"]
