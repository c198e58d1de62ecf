"""A tiny policy for CPU tests of the verl integration, built offline in seconds.

`tiny_tokenizer()` trains a byte-level BPE on BFCL tool schemas and questions
and wraps it with a ChatML chat template (the Qwen layout, so verl's Qwen
Continuous Token builder applies). `tiny_model()` is a randomly initialised
2-layer Llama. `TinyServerManager` stands in for verl's async server manager
(`generate(request_id, *, prompt_ids, sampling_params) -> TokenOutput`) and
generates with that model; `GoldServerManager` answers each user turn with
the task's ground-truth calls (BFCL's pythonic `[f(a=1)]`, which the
episode reads whatever its tool format), then a text reply, so a test knows what reward to expect.
"""

from __future__ import annotations

import asyncio
import json

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
from verl.workers.rollout.replica import TokenOutput

from rods.envs import tool_schemas
from rods.envs.schemas import function_docs

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def tiny_tokenizer(tasks) -> PreTrainedTokenizerFast:
    """Byte-level BPE (vocab 2048) trained on the tools and questions of `tasks`."""
    classes = sorted({c for t in tasks for c in t.involved_classes})
    corpus = [json.dumps(s) for s in tool_schemas(classes)]
    corpus += [json.dumps(d) for docs in function_docs(classes).values() for d in docs]
    corpus += [m.content for t in tasks for turn in t.question for m in turn]
    corpus += ["<tool_call>\n{\"name\": \"cd\", \"arguments\": {}}\n</tool_call>"] * 20
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=2048, special_tokens=SPECIALS, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(corpus, trainer)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>", bos_token=None
    )
    tok.chat_template = CHATML
    return tok


def tiny_model(vocab_size: int) -> LlamaForCausalLM:
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=65536,
    )
    return LlamaForCausalLM(config).eval()


class TinyServerManager:
    """Stand-in for verl's server manager: samples from a tiny local model."""

    def __init__(self, tokenizer, model, max_new_tokens: int = 12) -> None:
        self.tokenizer, self.model, self.max_new_tokens = tokenizer, model, max_new_tokens
        self.calls = 0
        self._lock = asyncio.Lock()

    async def generate(self, request_id, *, prompt_ids, sampling_params, **_) -> TokenOutput:
        async with self._lock:  # one forward at a time, as one server would
            self.calls += 1
            ids = torch.tensor([prompt_ids])
            with torch.no_grad():
                out = self.model.generate(
                    ids,
                    attention_mask=torch.ones_like(ids),
                    do_sample=True,
                    temperature=float(sampling_params.get("temperature", 1.0) or 1.0),
                    max_new_tokens=self.max_new_tokens,
                    eos_token_id=self.tokenizer.eos_token_id,
                    pad_token_id=self.tokenizer.pad_token_id,
                )
        new = out[0, len(prompt_ids) :].tolist()
        if not new or new[-1] != self.tokenizer.eos_token_id:
            new.append(self.tokenizer.eos_token_id)  # a server ends a finished reply with EOS
        return TokenOutput(token_ids=new, log_probs=[-1.0] * len(new), stop_reason="completed")


class GoldServerManager:
    """Stand-in server that plays a task's ground truth: calls at each user turn, then a text answer."""

    def __init__(self, tokenizer, tasks) -> None:
        self.tokenizer = tokenizer
        self.by_question = {}
        for task in tasks:
            self.by_question[self._first_user(task)] = task

    @staticmethod
    def _first_user(task) -> str:
        return next(m.content for m in task.question[0] if m.role == "user")

    async def generate(self, request_id, *, prompt_ids, sampling_params, **_) -> TokenOutput:
        text = self.tokenizer.decode(prompt_ids)
        turns = text.split("<|im_start|>")
        users = [t for t in turns if t.startswith("user\n")]
        task = next(t for q, t in self.by_question.items() if q in users[0])
        last = turns[-2]  # the message before the generation prompt
        turn = len(users) - 1
        if last.startswith("tool\n") or not task.ground_truth[turn]:
            reply = "Done."
        else:
            reply = "[" + ", ".join(task.ground_truth[turn]) + "]"  # BFCL's pythonic call list
        ids = self.tokenizer.encode(reply, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        return TokenOutput(token_ids=ids, stop_reason="completed")


def save_tiny_checkpoint(tokenizer, path) -> None:
    """A model directory verl's `HFModelConfig` can load offline: the tokenizer and a tiny Qwen2 config."""
    from transformers import Qwen2Config

    tokenizer.save_pretrained(path)
    Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=65536,
        architectures=["Qwen2ForCausalLM"],
    ).save_pretrained(path)
