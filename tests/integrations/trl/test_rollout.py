"""MultiTurnRollout: token streams, env masks and rewards of the agent loop at the token level."""

import pytest

from rods.envs import ToolEnvironment
from rods.envs.slices import turn_slices
from rods.integrations.trl.rollout import MultiTurnRollout, TokenEpisode
from rods.integrations.trl.warm_start import hermes_calls
from rods.rollout.settings import RolloutSettings
from rods.tasks import load_split


@pytest.fixture(scope="module")
def slices():
    return turn_slices(load_split("train"), max_calls=1)


def _stream(rollout, task):
    episode = rollout.new_episode(task)
    text = rollout._render(episode.messages, episode.tools, generation_prompt=True)
    return TokenEpisode(episode, rollout._encode(text))


def _reply(tok, text):
    return tok(text, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]


@pytest.mark.parametrize("tool_docs", ["signatures", "full"])
def test_scripted_gold_reply_scores_one_and_masks_env_tokens(tiny_tokenizer, slices, tool_docs):
    task = slices[0]
    rollout = MultiTurnRollout({task.id: task}.__getitem__, tiny_tokenizer,
                               RolloutSettings(max_steps_per_turn=3, tool_docs=tool_docs))
    stream = _stream(rollout, task)
    call = _reply(tiny_tokenizer, hermes_calls(task.ground_truth[0]))
    rollout._take_reply(stream, call)
    assert not stream.finished
    env_part = [t for t, m in zip(stream.completion_ids, stream.env_mask) if m == 0]
    env_text = tiny_tokenizer.decode(env_part)
    # The env tokens are the gold calls' results, each as a ChatML tool message (SmolLM2's template).
    tool_messages = [m for m in stream.episode.messages if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ToolEnvironment(task).execute_all(task.ground_truth[0])
    assert env_text.startswith("\n<|im_start|>tool\n")
    for message in tool_messages:
        assert f"<|im_start|>tool\n{message['content']}<|im_end|>" in env_text
    assert env_text.endswith("<|im_start|>assistant\n"), "env tokens end with the next generation prompt"
    done = _reply(tiny_tokenizer, "Done.")
    rollout._take_reply(stream, done)
    assert stream.episode.done
    # The model's own tokens are exactly its two replies, in order, with mask 1.
    own = [t for t, m in zip(stream.completion_ids, stream.env_mask) if m == 1]
    assert own == call + done
    assert len(stream.completion_ids) == len(stream.env_mask)
    # The whole stream decodes to the episode's chat with each assistant message as the model wrote it.
    replies = iter(r for turn in stream.episode.trajectory().turns for r in turn.replies)
    chat = [{"role": m["role"], "content": next(replies)} if m["role"] == "assistant" else m
            for m in stream.episode.messages]
    full = tiny_tokenizer.decode(stream.prompt_ids + stream.completion_ids)
    assert full == rollout._render(chat, stream.episode.tools, generation_prompt=False).rstrip("\n")
    trajectory = stream.episode.trajectory()
    assert trajectory.progress == 1.0 and trajectory.binary == 1


def test_multi_turn_task_with_reveal_turn(tiny_tokenizer):
    """A miss_func task: user turns and the reveal message come back as env tokens; unparseable replies don't crash."""
    task = next(t for t in load_split("train") if t.category == "miss_func")
    rollout = MultiTurnRollout({task.id: task}.__getitem__, tiny_tokenizer, RolloutSettings(max_steps_per_turn=2))
    stream = _stream(rollout, task)
    turns = 0
    while not stream.finished:
        rollout._take_reply(stream, _reply(tiny_tokenizer, "<tool_call>{not json</tool_call>"))
        turns += 1
    text = tiny_tokenizer.decode([t for t, m in zip(stream.completion_ids, stream.env_mask) if m == 0])
    assert "I have updated some more functions" in text
    assert "Error during parsing" in text
    assert turns == 2 * task.num_turns  # step cap 2 per turn, every turn reached
    assert stream.episode.trajectory().progress == 0.0


def test_completion_budget_stops_episode(tiny_tokenizer, slices):
    task = slices[1]
    rollout = MultiTurnRollout({task.id: task}.__getitem__, tiny_tokenizer,
                               RolloutSettings(max_steps_per_turn=20, max_completion_tokens=40))
    stream = _stream(rollout, task)
    while not stream.finished:
        rollout._take_reply(stream, _reply(tiny_tokenizer, hermes_calls(["ls()"])))
    assert stream.truncated and not stream.episode.done
    assert len(stream.completion_ids) >= 40


def test_rollout_with_a_model_returns_trl_shapes(tiny_model, tiny_tokenizer, slices):
    tasks = slices[:2]
    rollout = MultiTurnRollout({t.id: t for t in tasks}.__getitem__, tiny_tokenizer,
                               RolloutSettings(max_reply_tokens=6, max_steps_per_turn=2, tool_docs="signatures"))
    out = rollout.rollout(tiny_model, [tasks[0], tasks[0], tasks[1], tasks[1]])
    assert set(out) >= {"prompt_ids", "completion_ids", "logprobs", "env_mask", "progress", "binary"}
    assert len(out["prompt_ids"]) == 4
    for ids, mask in zip(out["completion_ids"], out["env_mask"]):
        assert len(ids) == len(mask) and 0 < sum(mask) <= 2 * 6
        assert mask[0] == 1, "the completion starts with the model's own reply"
    assert out["prompt_ids"][0] == out["prompt_ids"][1]
    assert all(0.0 <= p <= 1.0 for p in out["progress"])
