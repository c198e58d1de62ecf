"""The multi-turn agent loop as a TRL `rollout_func`, at the token level.

TRL's own tool loop cannot add further *user* turns, so GRPO on BFCL tasks uses
``GRPOTrainer(rollout_func=...)``. For each rollout this module plays one
`rods.rollout.Episode` with the trainer's model and returns:

* ``prompt_ids``: the first prompt (system + first user turn, generation prompt);
* ``completion_ids``: everything after it, exactly the tokens the model was
  conditioned on and produced: its replies, then the template's closing tokens,
  tool results and later user turns, then its next reply, ...;
* ``env_mask``: 1 on tokens the model generated, 0 on everything the
  environment or the chat template inserted (left out of the loss);
* ``logprobs``: None with HF generate (TRL recomputes them); with a vLLM
  server generating (``generator``, `rods.integrations.trl.vllm_server`) the
  sampler's log-probability of each generated token, 0.0 on masked tokens,
  for TRL's importance-ratio correction;
* ``progress`` / ``binary`` / ``num_calls`` / ``parse_errors``: per-rollout
  extras, which reach the reward functions as columns.

The model is always fed the exact token ids accumulated so far (never a
re-tokenization of decoded text), so the loss is computed on what was sampled.
The tokens between two replies come from rendering the chat template twice
with the last assistant message replaced by a marker and taking the
difference, which works for any append-only template (ChatML, Qwen).

The prompt of a dataset row is the task id itself (TRL passes only prompts to
a rollout_func); `lookup(task_id)` returns the task.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from rods.rollout import Episode, EpisodeOptions
from rods.rollout.settings import RolloutSettings
from rods.tasks import Task

log = logging.getLogger(__name__)

#: Stands in for the last assistant message when rendering template deltas.
_MARKER = "\u2063RODS-ASSISTANT\u2063"


@dataclass
class TokenEpisode:
    """One rollout's token stream next to its `Episode`."""

    episode: Episode
    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)  # the sampler's, per completion token (vLLM only)
    truncated: bool = False  # stopped by the completion-token budget

    @property
    def finished(self) -> bool:
        return self.episode.done or self.truncated


class MultiTurnRollout:
    """Plays K episodes per task with a causal LM and returns TRL's rollout dict.

    Args:
        lookup: task id -> `Task` (the engine's `task`, or a dict's `__getitem__`).
        tokenizer: the policy's tokenizer (with a chat template).
        settings: rollout settings (caps, sampling, tool description).
        options: how episodes talk to the policy (`EpisodeOptions`); the step
            cap and tool description come from `settings`, and `tools_in_prompt`
            None means: unless the chat template takes tools.
        chat_template_kwargs: extra chat-template variables.
        generator: a `VLLMServerGenerator` (``grpo.generation: vllm_server``):
            replies come from that server, with log-probabilities; None: the
            trainer's model generates (HF ``generate``).
    """

    def __init__(
        self,
        lookup: Callable[[str], Task],
        tokenizer: Any,
        settings: RolloutSettings | None = None,
        *,
        options: EpisodeOptions | None = None,
        chat_template_kwargs: dict[str, Any] | None = None,
        generator: Any = None,
    ) -> None:
        self.lookup = lookup
        self.generator = generator
        self.tokenizer = tokenizer
        self.settings = settings or RolloutSettings()
        self.native_tools = "tools" in (getattr(tokenizer, "chat_template", None) or "")
        options = (options or EpisodeOptions()).for_policy(self.native_tools)
        #: Whether the chat template is given the tools (native) or the messages carry them.
        self.tools_in_prompt = bool(options.tools_in_prompt)
        signatures = self.settings.tool_docs == "signatures"  # the tools are in that system prompt
        self.options = replace(
            options,
            max_steps_per_turn=self.settings.max_steps_per_turn,
            tool_docs=self.settings.tool_docs,
            tools_in_prompt=False if signatures else options.tools_in_prompt,
        )
        self.chat_template_kwargs = dict(chat_template_kwargs or {})
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.last_trajectories: list = []
        self.seconds = 0.0

    # -- TRL entry point ----------------------------------------------------------

    def __call__(self, prompts: Sequence[Any], trainer: Any) -> dict[str, Any]:
        """`rollout_func(prompts, trainer)`: prompts are task ids, each repeated K times in a row."""
        from trl.models.utils import unwrap_model_for_generation

        task_ids = [self._task_id(p) for p in prompts]
        if self.generator is not None:  # the server generates; the trainer's model is not needed
            return self.rollout(None, [self.lookup(t) for t in task_ids])
        kwargs = {}
        if getattr(trainer.args, "ds3_gather_for_generation", None) is not None:
            kwargs["gather_deepspeed3_params"] = trainer.args.ds3_gather_for_generation
        with unwrap_model_for_generation(trainer.model_wrapped, trainer.accelerator, **kwargs) as model:
            was_training = model.training
            model.eval()
            try:
                return self.rollout(model, [self.lookup(t) for t in task_ids])
            finally:
                if was_training:
                    model.train()

    @staticmethod
    def _task_id(prompt: Any) -> str:
        if isinstance(prompt, str):
            return prompt
        if isinstance(prompt, list) and prompt and isinstance(prompt[-1], dict):  # conversational fallback
            return str(prompt[-1].get("task_id") or prompt[-1]["content"])
        raise ValueError(f"rollout prompts must be task ids, got {type(prompt).__name__}")

    # -- the loop -------------------------------------------------------------------

    def new_episode(self, task: Task, index: int = 0) -> Episode:
        return Episode(task, self.options, sample_index=index)

    def rollout(self, model: Any, tasks: Sequence[Task]) -> dict[str, Any]:
        """Play one episode per entry of `tasks` and return TRL's rollout dict."""
        start = time.perf_counter()
        streams = []
        for i, task in enumerate(tasks):
            episode = self.new_episode(task, i)
            text = self._render(episode.messages, episode.tools, generation_prompt=True)
            streams.append(TokenEpisode(episode, self._encode(text)))
        rounds = 0
        while active := [s for s in streams if not s.finished]:
            self._step(model, active)
            rounds += 1
        trajectories = [s.episode.trajectory() for s in streams]
        self.last_trajectories = trajectories
        self.seconds += time.perf_counter() - start
        log.debug("%d episodes in %d rounds, %.1fs", len(streams), rounds, time.perf_counter() - start)
        return {
            "prompt_ids": [s.prompt_ids for s in streams],
            "completion_ids": [s.completion_ids for s in streams],
            "env_mask": [s.env_mask for s in streams],
            "logprobs": [s.logprobs for s in streams] if self.generator is not None else None,
            "progress": [t.progress for t in trajectories],
            "binary": [float(t.binary) for t in trajectories],
            "num_calls": [t.num_calls for t in trajectories],
            "parse_errors": [t.num_parse_errors for t in trajectories],
        }

    def _step(self, model: Any, active: list[TokenEpisode]) -> None:
        """One reply for every active episode (batched), then the environment's answer."""
        size = self.settings.generation_batch_size
        order = sorted(active, key=lambda s: len(s.prompt_ids) + len(s.completion_ids))
        for lo in range(0, len(order), size):
            chunk = order[lo : lo + size]
            budgets = [self.settings.max_completion_tokens - len(s.completion_ids) for s in chunk]
            contexts = [s.prompt_ids + s.completion_ids for s in chunk]
            if self.generator is not None:
                made = self.generator.generate(
                    contexts, max(1, min(self.settings.max_reply_tokens, max(budgets))),
                    temperature=self.settings.temperature, top_p=self.settings.top_p,
                    stop_token_ids=sorted(self._eos_ids()))
                replies, logps = [r.token_ids for r in made], [r.logprobs for r in made]
            else:
                replies, logps = self._generate(model, contexts, max(budgets)), [[] for _ in chunk]
            for stream, reply, logp, budget in zip(chunk, replies, logps, budgets):
                keep = max(budget, 0)
                self._take_reply(stream, reply[:keep], logp[:keep])

    def _take_reply(self, stream: TokenEpisode, reply: list[int], logprobs: list[float] | None = None) -> None:
        stream.completion_ids += reply
        stream.env_mask += [1] * len(reply)
        stream.logprobs += list(logprobs) if logprobs else [0.0] * len(reply)
        text = self.tokenizer.decode(reply, skip_special_tokens=True)
        episode = stream.episode
        n_before = len(episode.messages)
        episode.advance(text)
        if episode.done:
            return
        # Tokens the template and environment add before the next reply.
        messages = [dict(m) for m in episode.messages]
        messages[n_before] = {"role": "assistant", "content": _MARKER}
        upto = self._render(messages[: n_before + 1], episode.tools, generation_prompt=False)
        full = self._render(messages, episode.tools, generation_prompt=True)
        if not full.startswith(upto):
            raise RuntimeError("the chat template is not append-only; multi-turn token masking needs it")
        closing = upto[upto.index(_MARKER) + len(_MARKER) :]
        eos = self.tokenizer.eos_token or ""
        if eos and reply and reply[-1] in self._eos_ids() and closing.startswith(eos):
            closing = closing[len(eos) :]  # the model already wrote the end-of-message token
        added = self._encode(closing + full[len(upto) :])
        stream.completion_ids += added
        stream.env_mask += [0] * len(added)
        stream.logprobs += [0.0] * len(added)
        if len(stream.completion_ids) >= self.settings.max_completion_tokens:
            stream.truncated = True

    # -- model and template --------------------------------------------------------------

    def _render(self, messages: list[dict], tools: list[dict], *, generation_prompt: bool) -> str:
        return self.tokenizer.apply_chat_template(
            messages,
            tools=(tools or None) if (self.native_tools and not self.tools_in_prompt) else None,
            add_generation_prompt=generation_prompt,
            tokenize=False,
            **self.chat_template_kwargs,
        )

    def _encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _eos_ids(self) -> set[int]:
        ids = {self.tokenizer.eos_token_id}
        return {i for i in ids if i is not None}

    def _generate(self, model: Any, contexts: list[list[int]], max_new_tokens: int) -> list[list[int]]:
        """Sample one reply per context (left padding); each ends at its first end-of-message token."""
        import torch

        pad = self.tokenizer.pad_token_id
        eos = self._eos_ids() | set(_as_list(getattr(model.generation_config, "eos_token_id", None)))
        width = max(len(c) for c in contexts)
        input_ids = torch.full((len(contexts), width), pad, dtype=torch.long)
        attention = torch.zeros((len(contexts), width), dtype=torch.long)
        for row, ids in enumerate(contexts):
            input_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
            attention[row, width - len(ids) :] = 1
        device = next(model.parameters()).device
        sampling: dict[str, Any] = {"do_sample": False}
        if self.settings.temperature > 0:
            sampling = {"do_sample": True, "temperature": self.settings.temperature, "top_p": self.settings.top_p,
                        "top_k": 0}
        with torch.no_grad():
            out = model.generate(
                input_ids=input_ids.to(device),
                attention_mask=attention.to(device),
                max_new_tokens=max(1, min(self.settings.max_reply_tokens, max_new_tokens)),
                pad_token_id=pad,
                eos_token_id=sorted(eos),
                **sampling,
            )
        replies = []
        for row in out[:, width:].tolist():
            reply = []
            for token in row:
                reply.append(token)
                if token in eos:
                    break
            replies.append(reply)
        return replies


def _as_list(value: Any) -> list[int]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]
