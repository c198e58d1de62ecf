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
* ``logprobs``: None with HF generate (TRL recomputes them); with vLLM
  generating (``generator``: `rods.integrations.trl.policy_server` for a vLLM
  server, `rods.integrations.trl.trl_vllm` for TRL's own) the sampler's
  log-probability of each generated token, 0.0 on masked tokens, for TRL's
  importance-ratio correction;
* ``task_id`` / ``progress`` / ``binary`` / ``num_calls`` / ``parse_errors`` /
  ``policy_version`` / ``policy_lag``: per-rollout extras, which reach the reward
  functions as columns. The policy version is the optimizer step of the weights
  that sampled the rollout's replies (the oldest, if they differ); its lag is how
  many steps that trails the trainer's weights at generation.

A generator with a lag bound (`PolicyServer`) is asked to sync before each call;
groups whose replies still came from weights older than the bound are generated
again after a forced sync, so a group never trains on a policy older than
``grpo.max_policy_lag`` steps, unless the server is allowed to be stale.

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
    version: int | None = None  # the oldest policy version among its replies

    def sampled_by(self, version: int) -> None:
        self.version = version if self.version is None else min(self.version, version)

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
        generator: replies come from vLLM, with log-probabilities: a `PolicyServer`
            (``grpo.generation: vllm_server``), a TRL vLLM generator (``trl_vllm``)
            or a bare `VLLMServerGenerator`; None: the trainer's model generates
            (HF ``generate``).
        group_size: K, rollouts per task (groups are regenerated whole).
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
        group_size: int | None = None,
    ) -> None:
        self.lookup = lookup
        self.generator = generator
        self.group_size = group_size
        #: The trainer's optimizer step of the call being played (the policy version HF generate samples with).
        self.step = 0
        #: Groups generated again because their weights trailed the trainer by more than the lag bound.
        self.regenerated_groups = 0
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
        task_ids = [self._task_id(p) for p in prompts]
        self.step = trainer.state.global_step if trainer is not None else 0
        prepare = getattr(self.generator, "prepare", None)
        if prepare is not None:
            prepare(trainer)
        out = self._play(task_ids, trainer)
        return self._bound_lag(out, trainer)

    def _play(self, task_ids: list[str], trainer: Any) -> dict[str, Any]:
        from trl.models.utils import unwrap_model_for_generation

        if self.generator is not None:  # vLLM generates; the trainer's model is not needed
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

    def _bound_lag(self, out: dict[str, Any], trainer: Any) -> dict[str, Any]:
        """Generate again, after a forced sync, the groups sampled by weights older than the generator's bound."""
        bound = getattr(self.generator, "lag_bound", None)
        if bound is None or getattr(self.generator, "stale", False):
            return out
        old = [rows for rows in group_rows(out["task_id"], self.group_size) if max(out["policy_lag"][i] for i in rows)
               > bound]
        if not old:
            return out
        log.warning("%d group(s) came from weights more than %d step(s) old; syncing and generating them again",
                    len(old), bound)
        self.generator.prepare(trainer, force=True)
        rows = [i for group in old for i in group]
        again = self._play([out["task_id"][i] for i in rows], trainer)
        if max(again["policy_lag"]) > bound:
            raise RuntimeError(f"the vLLM server still samples with weights {max(again['policy_lag'])} steps old "
                               f"after a sync (grpo.max_policy_lag {bound})")
        self.regenerated_groups += len(old)
        return replace_rows(out, rows, again)

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

    def prompt_tokens(self, task: Task) -> int:
        """Tokens of `task`'s first prompt as the policy sees it (system prompt, tools, first user turn)."""
        episode = self.new_episode(task)
        return len(self._encode(self._render(episode.messages, episode.tools, generation_prompt=True)))

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
        versions = [self.step if s.version is None else s.version for s in streams]
        return {
            "prompt_ids": [s.prompt_ids for s in streams],
            "completion_ids": [s.completion_ids for s in streams],
            "env_mask": [s.env_mask for s in streams],
            "logprobs": [s.logprobs for s in streams] if self.generator is not None else None,
            "task_id": [t.id for t in tasks],
            "progress": [t.progress for t in trajectories],
            "binary": [float(t.binary) for t in trajectories],
            "num_calls": [t.num_calls for t in trajectories],
            "parse_errors": [t.num_parse_errors for t in trajectories],
            "policy_version": versions,
            "policy_lag": [self.step - v for v in versions],
        }

    def _step(self, model: Any, active: list[TokenEpisode]) -> None:
        """One reply for every active episode (batched), then the environment's answer."""
        order = sorted(active, key=lambda s: len(s.prompt_ids) + len(s.completion_ids))
        size = self.settings.generation_batch_size or len(order)
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
                for stream, reply in zip(chunk, made):
                    if reply.version is not None:
                        stream.sampled_by(reply.version)
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


def group_rows(task_ids: Sequence[str], size: int | None = None) -> list[list[int]]:
    """Row indices of each GRPO group: consecutive rows of one task id, at most `size` rows each."""
    out: list[list[int]] = []
    for i, tid in enumerate(task_ids):
        if out and task_ids[out[-1][-1]] == tid and (size is None or len(out[-1]) < size):
            out[-1].append(i)
        else:
            out.append([i])
    return out


def replace_rows(out: dict[str, Any], rows: Sequence[int], new: dict[str, Any]) -> dict[str, Any]:
    """`out` with its `rows` replaced, in order, by the rows of `new` (a rollout dict of len(rows) rows)."""
    merged: dict[str, Any] = {}
    for key, values in out.items():
        if not isinstance(values, list):
            merged[key] = values
            continue
        values = list(values)
        for row, value in zip(rows, new[key]):
            values[row] = value
        merged[key] = values
    return merged


def _as_list(value: Any) -> list[int]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]
