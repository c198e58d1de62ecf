"""Policies: batched local generation (tiny random model) and the OpenAI endpoint path."""

import json

import pytest

from rods.llm import LLMError
from rods.rollout import Episode, EpisodeOptions, OpenAIPolicy, TransformersPolicy, run_episodes, to_openai_messages
from rods.tasks import Task, load_split

from servers.openai_scripted import answer_in_groups_of

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

#: A chat template that renders the tool names it is given (a "native tools" template).
TOOLS_TEMPLATE = (
    "{% if tools %}<|im_start|>tools\n{% for t in tools %}{{ t.function.name }} {% endfor %}<|im_end|>\n{% endif %}"
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
#: SmolLM2's template: no tools.
PLAIN_TEMPLATE = TOOLS_TEMPLATE.split("{% endif %}", 1)[1]


def byte_tokenizer(template):
    """A byte-level tokenizer built offline (no merges), with ChatML specials."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {ch: i for i, ch in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    for special in ("<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>"):
        vocab[special] = len(vocab)
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(["<|im_start|>", "<|im_end|>"])
    tok.add_tokens(["<tool_call>", "</tool_call>"])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|im_end|>")
    fast.chat_template = template
    return fast


@pytest.fixture(scope="module")
def tiny_model():
    torch.manual_seed(0)
    config = transformers.LlamaConfig(
        vocab_size=260, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2, max_position_embeddings=16384, eos_token_id=257, pad_token_id=257, bos_token_id=256,
    )
    return transformers.LlamaForCausalLM(config).eval()


@pytest.fixture(scope="module")
def small_tasks():
    """Two-turn MathAPI tasks: short prompts for a byte-level tokenizer on a busy CPU."""
    return [
        Task(
            id=f"tiny_math_{i}",
            category="base",
            question=[
                [{"role": "user", "content": f"Mean of {i} and 3?"}],
                [{"role": "user", "content": "And of 2, 4?"}],
            ],
            involved_classes=["MathAPI"],
            ground_truth=[[f"mean(numbers=[{i}, 3])"], ["mean(numbers=[2, 4])"]],
        )
        for i in range(3)
    ]


SHORT = "Call the tools you need, then answer."


def test_batched_left_padded_generation_equals_one_at_a_time(tiny_model, small_tasks):
    policy = TransformersPolicy(
        tiny_model, byte_tokenizer(PLAIN_TEMPLATE), max_new_tokens=8, batch_size=4, prefix_cache=False
    )
    assert not policy.native_tools
    options = EpisodeOptions(tools_in_prompt=True, tool_docs="compact", system_prompt=SHORT)
    episodes = [Episode(t, options) for t in small_tasks]
    episodes[1].advance("[mean(numbers=[1, 3])]")  # make the prompts differ in length
    episodes[2].advance("The mean is 2.")
    batch = [(e.messages, e.tools) for e in episodes]
    lengths = {len(policy.render(m, t)) for m, t in batch}
    assert len(lengths) == 3
    together = policy.generate(batch)
    alone = [policy.generate([item])[0] for item in batch]
    assert together == alone
    assert all(isinstance(r, str) and r for r in together)
    assert policy.stats.completion_tokens > 0 and policy.stats.requests == 6


def test_prefix_cache_gives_the_same_replies_and_skips_the_history(tiny_model, small_tasks):
    tok = byte_tokenizer(PLAIN_TEMPLATE)
    cached = TransformersPolicy(tiny_model, tok, max_new_tokens=6, prefix_cache=True)
    plain = TransformersPolicy(tiny_model, tok, max_new_tokens=6, prefix_cache=False)
    options = EpisodeOptions(tools_in_prompt=True, tool_docs="compact", system_prompt=SHORT)
    episodes = [Episode(t, options) for t in small_tasks[:2]]
    for round_ in range(3):
        batch = [(e.messages, e.tools) for e in episodes]
        replies = cached.generate(batch)
        assert replies == plain.generate(batch), round_
        for episode in episodes:  # scripted continuation: a call, then a text answer
            episode.advance("[mean(numbers=[1, 2])]" if round_ % 2 == 0 else "ok")
    assert cached.stats.prompt_tokens == plain.stats.prompt_tokens
    # rounds 2 and 3 only prefilled what was appended since the previous round
    assert cached.stats.cached_prompt_tokens > 0.6 * cached.stats.prompt_tokens


def test_native_tools_go_through_the_chat_template(tiny_model, small_tasks):
    policy = TransformersPolicy(tiny_model, byte_tokenizer(TOOLS_TEMPLATE), max_new_tokens=4)
    assert policy.native_tools
    episode = Episode(small_tasks[0])
    prompt = policy.render(episode.messages, episode.tools)
    assert "standard_deviation" in prompt.split("<|im_end|>")[0]
    assert "standard_deviation" not in episode.messages[0]["content"]


def test_run_episodes_with_a_local_model_k_rollouts(tiny_model, small_tasks):
    policy = TransformersPolicy(
        tiny_model, byte_tokenizer(PLAIN_TEMPLATE), max_new_tokens=4, temperature=1.0, batch_size=8
    )
    torch.manual_seed(1)
    tasks = small_tasks[:2]
    options = EpisodeOptions(max_steps_per_turn=1, tool_docs="compact", system_prompt=SHORT)
    trajs = run_episodes(tasks, policy, k=2, options=options)
    assert [(t.task_id, t.sample_index) for t in trajs] == [(task.id, i) for task in tasks for i in range(2)]
    for traj, task in zip(trajs, [t for t in tasks for _ in range(2)]):
        assert len(traj.turns) == task.num_turns and all(turn.replies for turn in traj.turns)
        assert 0.0 <= traj.progress <= 1.0
        assert "<tools>" in traj.messages[0]["content"]  # the template has no tools: described in the prompt


def test_long_prompts_keep_their_end(tiny_model, small_tasks, caplog):
    policy = TransformersPolicy(tiny_model, byte_tokenizer(PLAIN_TEMPLATE), max_new_tokens=3, max_prompt_tokens=64)
    episode = Episode(small_tasks[0], EpisodeOptions(tools_in_prompt=True, system_prompt=SHORT))
    with caplog.at_level("WARNING"):
        (reply,) = policy.generate([(episode.messages, episode.tools)])
    assert isinstance(reply, str)
    assert "cut to its last 64" in caplog.text


# -- the endpoint path -----------------------------------------------------------------


def test_openai_policy_reads_native_and_text_tool_calls(scripted_openai_server):
    scripted_openai_server.script([
        {"content": "Checking.", "tool_calls": [{"name": "get_current_time", "arguments": {}},
                                               {"name": "get_stock_info", "arguments": {"symbol": "NVDA"}}]},
        {"content": '<tool_call>{"name": "get_order_history", "arguments": {}}</tool_call>'},
        {"content": None, "tool_calls": [{"name": "cancel_order", "arguments": "{not json"}]},
    ])
    policy = OpenAIPolicy(scripted_openai_server.base_url, "m", concurrency=1)
    task = load_split("test")[0]
    episode = Episode(task)
    replies = policy.generate([(episode.messages, episode.tools)] * 3)
    from rods.rollout import parse_tool_calls

    first, second, third = (parse_tool_calls(r) for r in replies)
    assert first.content == "Checking." and [c.name for c in first.calls] == ["get_current_time", "get_stock_info"]
    assert first.calls[1].arguments == {"symbol": "NVDA"}
    assert [c.name for c in second.calls] == ["get_order_history"]
    assert third.calls == [] and len(third.errors) == 1
    body = scripted_openai_server.requests[0]
    assert body["tools"] == episode.tools and body["temperature"] == 0.0
    assert policy.stats.requests == 3 and policy.stats.prompt_tokens == 30


def test_openai_messages_pair_results_and_wrap_orphans():
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": {"a": True}}}]},
        {"role": "tool", "name": "ls", "content": "r1", "tool_call_id": "call_1"},
        {"role": "tool", "name": "error", "content": "Error during parsing: bad"},
        {"role": "assistant", "content": "[ls()]"},
        {"role": "tool", "name": "ls", "content": "r2"},
    ]
    out = to_openai_messages(messages)
    assert out[2]["tool_calls"][0]["function"]["arguments"] == json.dumps({"a": True})
    assert out[3] == {"role": "tool", "tool_call_id": "call_1", "content": "r1"}
    assert out[4]["role"] == "user" and "Error during parsing" in out[4]["content"]
    assert out[6] == {"role": "user", "content": "<tool_response>\nr2\n</tool_response>"}


def test_openai_policy_runs_requests_concurrently(scripted_openai_server):
    scripted_openai_server.script([], default=answer_in_groups_of(4))
    policy = OpenAIPolicy(scripted_openai_server.base_url, "m", concurrency=4)
    task = load_split("test")[0]
    episode = Episode(task)
    assert policy.generate([(episode.messages, episode.tools)] * 8) == ["ok"] * 8
    assert scripted_openai_server.max_in_flight == 4  # reached (the barrier), never passed


@pytest.mark.slow
def test_rods_eval_against_a_real_llama_cpp_server(llama_server, tmp_path):
    """The endpoint path end to end: llama.cpp serving the embedded GGUF, official re-check.

    One miss_func task (a reveal turn goes over the wire), one tool-calling
    reply per turn, short replies: llama.cpp's portable build on 2 cores is
    slow, and one conversation at a time lets the server reuse its prefix.
    """
    from rods.cli import main as rods_main

    from servers.fixtures import MODEL_ALIAS

    out = tmp_path / "run"
    code = rods_main(
        [
            "eval",
            "--base-url",
            llama_server,
            "--model",
            MODEL_ALIAS,
            "--limit",
            "1",
            "--categories",
            "miss_func",
            "--tools-in-prompt",
            "--tool-docs",
            "compact",
            "--max-new-tokens",
            "24",
            "--max-steps",
            "1",
            "--step-cap",
            "end_turn",
            "--concurrency",
            "1",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert report["n_tasks"] == 1 and set(report["categories"]) == {"miss_func"}
    assert report["official"]["agree"] == report["official"]["total"] == 1
    assert report["generation"]["completion_tokens"] > 0
    trajs = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    revealed = [turn["revealed"] for t in trajs for turn in t["turns"] if turn["revealed"]]
    assert revealed, "the miss_func task's reveal turn was played"


def test_openai_policy_retries_a_transient_failure_like_every_backend(scripted_openai_server):
    scripted_openai_server.script([{"status": 503}, {"content": "fine"}])
    policy = OpenAIPolicy(scripted_openai_server.base_url, "m", concurrency=1, max_retries=1)
    policy.backend.config = policy.backend.config.model_copy(update={"backoff_s": 0.0})
    episode = Episode(load_split("test")[0])
    assert policy.generate([(episode.messages, episode.tools)]) == ["fine"]
    assert len(scripted_openai_server.requests) == 2
    scripted_openai_server.script([{"status": 400}])
    with pytest.raises(LLMError, match="HTTP 400"):  # not transient: no retry
        policy.generate([(episode.messages, episode.tools)])


@pytest.mark.slow
def test_endpoint_policy_with_native_tool_calls_on_vllm(vllm_server):
    """The native tool-call loop against vLLM: tools go with each request, vLLM's hermes parser returns
    structured calls, their results go back as `tool` messages, and the episode decodes them.

    SmolLM2's chat template has no tools, so they are described in the prompt too; a regular
    expression (vLLM's structured output, passed through `extra_body`) makes the weak model
    write one `pwd` call per reply, so the loop is exercised whatever the model would say.
    """
    force_pwd = {"structured_outputs": {"regex": r'<tool_call>\n\{"name": "pwd", "arguments": \{\}\}\n</tool_call>'}}
    policy = OpenAIPolicy(vllm_server, native_tools=True, max_tokens=100, extra_body=force_pwd, timeout=300)
    task = min((t for t in load_split("test") if t.category == "base" and "GorillaFileSystem" in t.involved_classes),
               key=lambda t: t.num_turns)
    raw = policy.backend.chat([{"role": "user", "content": "Where am I?"}], tools=Episode(task).tools)
    assert raw.text == "" and [c["name"] for c in raw.tool_calls] == ["pwd"]  # parsed by the server, not by us
    options = EpisodeOptions(tools_in_prompt=True, max_steps_per_turn=1, on_step_cap="end_turn", tool_docs="compact")
    (trajectory,) = run_episodes([task], policy, options=options)
    assert trajectory.num_calls == trajectory.num_replies == task.num_turns and trajectory.num_parse_errors == 0
    results = [m["content"] for m in trajectory.messages if m["role"] == "tool"]
    assert len(results) == task.num_turns and all('"current_working_directory"' in r for r in results)
    policy.close()


@pytest.mark.slow
def test_rods_eval_against_a_real_vllm_server(vllm_server, tmp_path):
    """`rods eval --base-url` on vLLM without --model (the server's first), official re-check agrees."""
    from rods.cli import main as rods_main

    from servers.fixtures import VLLM_MODEL_NAME

    out = tmp_path / "run"
    code = rods_main(["eval", "--base-url", vllm_server, "--limit", "2", "--categories", "base,miss_func",
                      "--tools-in-prompt", "--tool-docs", "compact", "--max-new-tokens", "48", "--max-steps", "1",
                      "--step-cap", "end_turn", "--concurrency", "2", "--out", str(out)])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert report["model"] == VLLM_MODEL_NAME and report["n_tasks"] == 2
    assert report["official"]["agree"] == report["official"]["total"] == 2
    assert report["generation"]["completion_tokens"] > 0
