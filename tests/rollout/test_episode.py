"""The agent loop: every category, reveal turns, the step cap, bad output, records.

The replies are scripted: they are the loop's input, so the loop's logic
(turns, tools, scoring) is what is under test.
"""

import json

import pytest

from rods.rollout import PARSE_ERROR_PREFIX, Episode, EpisodeDone, EpisodeOptions, Trajectory, run_episodes
from rods.tasks import CATEGORIES, REVEAL_MESSAGE


@pytest.fixture(scope="module")
def test_tasks():
    from rods.tasks import load_split

    return load_split("test")


def first_of(tasks, category, pred=lambda t: True):
    return next(t for t in tasks if t.category == category and pred(t))


def hermes(calls: list[str]) -> str:
    """Ground-truth call strings as Hermes blocks (via the pythonic parser)."""
    from rods.envs.calls import parse_calls

    blocks = []
    for call in parse_calls("[" + ", ".join(calls) + "]"):
        assert not call.args, "this helper writes keyword calls only"
        blocks.append("<tool_call>\n" + json.dumps({"name": call.name, "arguments": call.arguments}) + "\n</tool_call>")
    return "\n".join(blocks)


def play_gold(episode, fmt):
    """Answer every turn with its ground truth in one step, then a text answer."""
    while not episode.done:
        gt = episode.task.ground_truth[episode.turn]
        if gt:
            episode.advance("[" + ", ".join(gt) + "]" if fmt == "pythonic" else hermes(gt))
        episode.advance("Done.")
    return episode.trajectory()


@pytest.mark.parametrize("category", CATEGORIES)
@pytest.mark.parametrize("fmt", ["pythonic", "hermes"])
def test_gold_replies_score_one_in_every_category(test_tasks, category, fmt):
    # positional calls (a few gold answers use them) cannot be written as Hermes JSON
    task = first_of(test_tasks, category, lambda t: fmt == "pythonic" or "('" not in json.dumps(t.ground_truth))
    traj = play_gold(Episode(task, EpisodeOptions(tool_format=fmt)), fmt)
    assert traj.progress == 1.0 and traj.binary == 1
    assert all(t.end == "answer" and t.passed for t in traj.turns)
    assert len(traj.decoded) == task.num_turns
    assert sum(len(s) for turn in traj.decoded for s in turn) == sum(len(g) for g in task.ground_truth)


def test_reveal_turn_adds_held_out_tools_and_bfcl_message(test_tasks):
    task = first_of(test_tasks, "miss_func")
    (reveal_turn, names), = task.reveal_turns().items()
    episode = Episode(task, EpisodeOptions(tool_format="hermes"))  # native tools: the message is BFCL's FC text
    seen_tools = []
    while not episode.done:
        seen_tools.append({t["function"]["name"] for t in episode.tools})
        new = episode.advance("Nothing to do.")
        if not episode.done and episode.turn == reveal_turn:
            assert new == [{"role": "user", "content": REVEAL_MESSAGE}]
    for turn, tools in enumerate(seen_tools):
        assert set(names) <= tools if turn >= reveal_turn else not (set(names) & tools), turn
    traj = episode.trajectory()
    assert traj.turns[reveal_turn].revealed == names
    assert traj.binary == 0  # checked turns without calls fail


def test_reveal_in_prompt_lists_the_new_functions(test_tasks):
    task = first_of(test_tasks, "miss_func")
    (reveal_turn, names), = task.reveal_turns().items()
    episode = Episode(task, EpisodeOptions(tool_format="pythonic"))
    assert not any(f'"name": "{n}"' in episode.messages[0]["content"] for n in names)
    while episode.turn < reveal_turn:
        new = episode.advance("ok")
    assert new[-1]["content"].endswith(REVEAL_MESSAGE)
    assert all(f'"name": "{n}"' in new[-1]["content"] for n in names)


def test_miss_param_turn_with_empty_ground_truth_passes_on_a_text_answer(test_tasks):
    task = first_of(test_tasks, "miss_param")
    empty = [i for i, gt in enumerate(task.ground_truth) if not gt]
    assert empty
    traj = play_gold(Episode(task, EpisodeOptions(tool_format="pythonic")), "pythonic")
    assert all(traj.turns[i].steps == [] and traj.turns[i].passed for i in empty)
    assert traj.binary == 1


def test_step_cap_ends_each_turn_of_a_model_that_never_stops(test_tasks):
    task = first_of(test_tasks, "base")
    episode = Episode(task, EpisodeOptions(max_steps_per_turn=3))
    replies = 0
    while not episode.done:
        episode.advance('<tool_call>{"name": "ls", "arguments": {}}</tool_call>')
        replies += 1
        assert replies <= 3 * task.num_turns
    traj = episode.trajectory()
    assert replies == 3 * task.num_turns
    assert all(t.end == "step_cap" and len(t.steps) == 3 for t in traj.turns)
    assert not traj.force_quit


def test_step_cap_force_quit_stops_the_episode_like_bfcl(test_tasks):
    task = first_of(test_tasks, "base", lambda t: t.num_turns > 1)
    episode = Episode(task, EpisodeOptions(max_steps_per_turn=2, on_step_cap="force_quit"))
    episode.advance("[ls()]")
    assert not episode.done
    episode.advance("[ls()]")
    assert episode.done
    traj = episode.trajectory()
    assert traj.force_quit and traj.binary == 0
    assert traj.turns[0].end == "force_quit" and traj.turns[1].end == "not_reached"
    assert len(traj.decoded) == 1  # BFCL: fewer turns than the ground truth -> entry fails
    with pytest.raises(EpisodeDone):
        episode.advance("more")


def test_bad_output_becomes_error_tool_results_not_a_crash(test_tasks):
    task = first_of(test_tasks, "base")
    episode = Episode(task)
    garbage = [
        '<tool_call>{"name": "cd", "arguments": {"folder": </tool_call>',
        "<tool_call>not json at all",
        "[cd(folder=open('x'))]",
        '<tool_call>{"name": "no_such_function", "arguments": {}}</tool_call>',
        '<tool_call>{"name": "cd", "arguments": {"wrong_param": 1}}</tool_call>',
        "\x00\ufffd<tool_call>[]</tool_call>",
    ]
    for text in garbage:
        new = episode.advance(text)
        assert new and all(m["role"] == "tool" for m in new), text
        assert all("Error" in m["content"] for m in new), (text, new)
    assert episode.turn == 0 and not episode.done
    parse_errors = [m for m in episode.messages if m["role"] == "tool" and m["content"].startswith(PARSE_ERROR_PREFIX)]
    assert len(parse_errors) == 4
    episode.advance("I could not do it.")
    traj = episode.trajectory()
    assert traj.turns[0].end == "answer" and traj.turns[0].steps.count([]) == 4
    assert traj.decoded[0] == [["no_such_function()"], ["cd(wrong_param=1)"]]
    assert traj.num_parse_errors == 4


def test_native_messages_pair_tool_calls_with_results(test_tasks):
    task = first_of(test_tasks, "base")
    episode = Episode(task, EpisodeOptions(tool_format="hermes"))
    assert episode.messages[0]["role"] == "system" and episode.messages[1]["role"] == "user"
    assert "<tools>" not in episode.messages[0]["content"] and episode.tools
    new = episode.advance(
        'Sure.<tool_call>{"name": "pwd", "arguments": {}}</tool_call>'
        '<tool_call>{"name": "ls", "arguments": {}}</tool_call>'
    )
    assistant = episode.messages[-3]
    assert assistant["content"] == "Sure."
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["pwd", "ls"]
    assert [m["tool_call_id"] for m in new] == [c["id"] for c in assistant["tool_calls"]]
    assert "current_working_directory" in new[0]["content"]


def test_tools_in_prompt_keeps_messages_self_contained(test_tasks):
    task = first_of(test_tasks, "base")
    episode = Episode(task, EpisodeOptions(tool_format="hermes", tools_in_prompt=True))
    assert "<tools>" in episode.messages[0]["content"] and '"name": "pwd"' in episode.messages[0]["content"]
    text = '<tool_call>{"name": "pwd", "arguments": {}}</tool_call>'
    episode.advance(text)
    assert episode.messages[-2] == {"role": "assistant", "content": text}


def test_run_episodes_k_rollouts_task_major_and_json_round_trip(test_tasks):
    tasks = [first_of(test_tasks, c) for c in CATEGORIES]

    class Scripted:
        """First reply of each turn calls pwd(), the second answers."""

        native_tools = True

        def generate(self, batch):
            return [
                "Done." if msgs[-1]["role"] == "tool" else '<tool_call>{"name": "pwd", "arguments": {}}</tool_call>'
                for msgs, _ in batch
            ]

    seen = []
    trajs = run_episodes(tasks, Scripted(), k=2, progress=lambda done, total: seen.append((done, total)))
    assert [(t.task_id, t.sample_index) for t in trajs] == [(task.id, i) for task in tasks for i in range(2)]
    assert seen[-1] == (8, 8)
    for traj in trajs:
        assert all(len(turn.steps) == 1 and turn.end == "answer" for turn in traj.turns)
        again = Trajectory.from_json(traj.to_json())
        assert again == traj and again.decoded == traj.decoded


def test_compact_tool_docs_are_signatures_with_the_tool_description(test_tasks):
    task = first_of(test_tasks, "base", lambda t: "GorillaFileSystem" in t.involved_classes)
    full = Episode(task, EpisodeOptions(tools_in_prompt=True)).messages[0]["content"]
    compact = Episode(task, EpisodeOptions(tools_in_prompt=True, tool_docs="compact")).messages[0]["content"]
    assert "cd(folder: string) - Change the current working directory to the specified folder." in compact
    assert "ls(a: boolean = ...) - " in compact and "This tool belongs to" not in compact
    assert len(compact) < len(full) / 2


def test_signatures_prompt_lists_available_tools_only_and_reveals_the_rest_bare(test_tasks):
    import re

    from rods.rollout.prompt import SIGNATURES_SYSTEM_PROMPT, signature
    from rods.tasks import REVEAL_MESSAGE

    for mf in [t for t in test_tasks if t.category == "miss_func"][:10]:
        hidden = mf.held_out_functions(0)
        episode = Episode(mf, EpisodeOptions(tools_in_prompt=True, tool_docs="signatures"))
        prompt = episode.messages[0]["content"]
        assert prompt.startswith(SIGNATURES_SYSTEM_PROMPT.split("{signatures}")[0]) and "<tool_call>" in prompt
        assert not any(f"\n{name}(" in prompt for name in hidden)
        reveal_turn = min(int(k) for k in mf.missed_function)
        appended: list[dict] = []
        for _ in range(reveal_turn):
            appended = episode.advance("Done.")
        listed = appended[-1]["content"].removesuffix(REVEAL_MESSAGE).strip().splitlines()
        assert sorted(line.split("(")[0] for line in listed) == sorted(hidden)
        assert all(re.fullmatch(r"\w+\(.*\)", line) for line in listed), listed
    doc = {
        "name": "mv",
        "description": "Move a file. Then more.",
        "parameters": {"properties": {"source": {"type": "string"}, "n": {"type": "integer"}}, "required": ["source"]},
    }
    assert signature(doc, describe=False) == "mv(source: string, n: integer = ...)"
    assert signature({"type": "function", "function": doc}) == "mv(source: string, n: integer = ...) - Move a file."


@pytest.mark.parametrize(
    "bad", [{"tool_format": "xml"}, {"max_steps_per_turn": 0}, {"on_step_cap": "stop"}, {"tool_docs": "short"}]
)
def test_bad_episode_options_name_the_option(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        EpisodeOptions(**bad)


def test_episode_options_put_tools_in_the_prompt_unless_the_policy_takes_them(test_tasks):
    task = test_tasks[0]
    assert EpisodeOptions().for_policy(native_tools=True).tools_in_prompt is False
    assert EpisodeOptions().for_policy(native_tools=False).tools_in_prompt is True
    assert EpisodeOptions(tools_in_prompt=False).for_policy(native_tools=False).tools_in_prompt is False
    in_prompt = Episode(task, EpisodeOptions().for_policy(native_tools=False)).messages[0]["content"]
    native = Episode(task, EpisodeOptions().for_policy(native_tools=True)).messages[0]["content"]
    assert "<tools>" in in_prompt and "<tools>" not in native
