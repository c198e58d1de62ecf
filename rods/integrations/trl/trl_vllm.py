"""``grpo.generation: trl_vllm``: the multi-turn rollout generates with TRL's own vLLM, which TRL keeps synced.

With ``use_vllm=True`` TRL builds its vLLM (`trainer.vllm_generation`) and, before
each call of a ``rollout_func``, pushes the policy's weights to it (LoRA merged),
whether vLLM runs inside the training process (``vllm_mode: colocate``, sharing
the GPU) or as a ``vllm serve`` (``server``; NCCL weight transfer). The rollout
still plays its own multi-turn loop, so it asks vLLM for one reply at a time from
exact token ids, with its own reply cap and stop tokens, instead of TRL's
single-turn ``generate``:

* `TRLColocateGenerator`: ``trainer.vllm_generation.llm.generate`` with
  ``prompt_token_ids``; each process has its own vLLM and its own rollouts;
* `TRLServerGenerator`: the server's ``/v1/completions`` from any process (the
  HTTP path of `VLLMServerGenerator`); TRL's client on the main process does the
  weight transfer.

The policy version of every reply is the trainer's step (TRL synced it just
before). Needs CUDA and vLLM in the trainer's environment; `check_available`
says what is missing. Not run on CPU.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from rods.integrations.trl.vllm_server import Reply, VLLMServerGenerator


def check_available() -> None:
    """Raise a clear `RuntimeError` when TRL's vLLM cannot run here (no vLLM, or no CUDA device)."""
    import torch

    missing = []
    if importlib.util.find_spec("vllm") is None:
        missing.append("vLLM is not importable in the trainer's environment (pip install 'trl[vllm]')")
    if not torch.cuda.is_available():
        missing.append("there is no CUDA device")
    if missing:
        raise RuntimeError("grpo.generation: trl_vllm needs TRL's vLLM, but " + " and ".join(missing)
                           + "; on CPU use grpo.generation: vllm_server (a vLLM server, synced by rods)")


def trl_vllm_engine(trainer: Any) -> Any:
    """TRL's vLLM generation object of a trainer built with ``use_vllm=True``."""
    engine = getattr(trainer, "vllm_generation", None)
    if engine is None:
        raise RuntimeError("grpo.generation trl_vllm: the trainer has no vllm_generation (TRL >= 1.16 with "
                           "use_vllm=True builds it)")
    return engine


class TRLColocateGenerator:
    """Replies from the vLLM TRL runs inside this training process."""

    def __init__(self) -> None:
        self.llm: Any = None
        self.version = 0

    def prepare(self, trainer: Any) -> None:
        self.llm = trl_vllm_engine(trainer).llm
        self.version = trainer.state.global_step

    def generate(self, contexts: list[list[int]], max_new_tokens: int, *, temperature: float, top_p: float,
                 stop_token_ids: list[int]) -> list[Reply]:
        from vllm import SamplingParams

        params = SamplingParams(n=1, max_tokens=max(1, max_new_tokens), temperature=temperature, top_p=top_p,
                                stop_token_ids=list(stop_token_ids), logprobs=0, skip_special_tokens=False)
        outputs = self.llm.generate([{"prompt_token_ids": ids} for ids in contexts], sampling_params=params,
                                    use_tqdm=False)
        replies = []
        for output in outputs:
            sample = output.outputs[0]
            ids = list(sample.token_ids)
            logprobs = [float(step[token].logprob) for token, step in zip(ids, sample.logprobs or [])]
            if len(logprobs) != len(ids):
                raise ValueError(f"TRL's vLLM returned {len(ids)} tokens but log-probabilities for {len(logprobs)}")
            replies.append(Reply(ids, logprobs, model="trl-colocate", version=self.version))
        return replies


class TRLServerGenerator:
    """Replies over HTTP from the ``vllm serve`` whose weights TRL's client keeps synced."""

    def __init__(self, base_url: str, model: str | None = None) -> None:
        self.http = VLLMServerGenerator(base_url, model)
        self.version = 0

    def prepare(self, trainer: Any) -> None:
        trl_vllm_engine(trainer)
        self.version = trainer.state.global_step

    def generate(self, contexts: list[list[int]], max_new_tokens: int, *, temperature: float, top_p: float,
                 stop_token_ids: list[int]) -> list[Reply]:
        replies = self.http.generate(contexts, max_new_tokens, temperature=temperature, top_p=top_p,
                                     stop_token_ids=stop_token_ids)
        for reply in replies:
            reply.version = self.version
        return replies
