"""Rollouts per second: HF generate (today's TRL path) vs a vLLM server, same multi-turn tasks, one run.

Both arms play the same tasks K times through `MultiTurnRollout` (the token-level
agent loop TRL trains with), with the same caps and sampling; only the generator
differs: the model's own `generate` (HF, batched, the whole history re-encoded every
round) or a vLLM server on CPU (`grpo.generation: vllm_server`: exact token ids to
``/v1/completions``, log-probabilities back, prefix cache across turns). The model
is the embedded SmolLM2-135M in float32 for both (the safetensors copy `make vllm`
writes). Arms alternate over `--rounds` so machine load hits both alike.

Without `--base-url` it starts the vLLM server itself (needs `make vllm`; start-up
is not timed). Prints a table, then as its last line one JSON object:
{"hf_rollouts_per_s", "vllm_rollouts_per_s", "speedup"}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pick_tasks(n: int):
    """`n` train tasks of two or more turns, shortest first (multi-turn, and quick enough on a CPU)."""
    from rods.tasks import load_split

    tasks = sorted((t for t in load_split("train") if t.num_turns >= 2), key=lambda t: (t.num_turns, t.id))
    return tasks[:n]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base-url", default=None, help="a running vLLM server (default: start one)")
    p.add_argument("--tasks", type=int, default=4)
    p.add_argument("--k", type=int, default=4, help="rollouts per task")
    p.add_argument("--rounds", type=int, default=2, help="timed rounds per arm (alternating)")
    p.add_argument("--max-reply-tokens", type=int, default=48)
    args = p.parse_args(argv)

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rods.integrations.trl.rollout import MultiTurnRollout
    from rods.integrations.trl.vllm_server import VLLMServerGenerator
    from rods.rollout.settings import RolloutSettings

    sys.path.insert(0, str(ROOT / "tests"))  # the test suite's vLLM launcher (one copy of its flags)
    from servers.vllm import VllmServer, vllm_missing, vllm_model_dir

    server = None
    base_url = args.base_url
    if base_url is None:
        missing = vllm_missing()
        if missing:
            print(missing, file=sys.stderr)
            return 1
        server = VllmServer().start()
        base_url = server.base_url
    try:
        tokenizer = AutoTokenizer.from_pretrained(vllm_model_dir())
        model = AutoModelForCausalLM.from_pretrained(vllm_model_dir(), dtype=torch.float32).eval()
        settings = RolloutSettings(max_steps_per_turn=1, max_reply_tokens=args.max_reply_tokens,
                                   max_completion_tokens=2048, temperature=1.0, tool_docs="signatures")
        tasks = pick_tasks(args.tasks)
        batch = [t for t in tasks for _ in range(args.k)]
        lookup = {t.id: t for t in tasks}.__getitem__
        generator = VLLMServerGenerator(base_url, concurrency=len(batch))
        arms = {"hf": MultiTurnRollout(lookup, tokenizer, settings),
                "vllm": MultiTurnRollout(lookup, tokenizer, settings, generator=generator)}
        arms["vllm"].rollout(None, tasks[:1])  # warm-up (first request, caches)
        times: dict[str, list[float]] = {"hf": [], "vllm": []}
        tokens: dict[str, list[int]] = {"hf": [], "vllm": []}
        for _ in range(args.rounds):
            for name, rollout in arms.items():
                start = time.perf_counter()
                out = rollout.rollout(model if name == "hf" else None, batch)
                times[name].append(time.perf_counter() - start)
                tokens[name].append(sum(sum(m) for m in out["env_mask"]))
        generator.close()
    finally:
        if server is not None:
            server.stop()
    rate = {name: len(batch) / statistics.median(ts) for name, ts in times.items()}
    print(f"{len(tasks)} tasks x K={args.k} = {len(batch)} rollouts per round, {args.rounds} rounds per arm, "
          f"replies <= {args.max_reply_tokens} tokens, one reply per turn (turns: "
          f"{sorted(t.num_turns for t in tasks)})")
    print(f"{'arm':<6}{'median s/round':>16}{'rollouts/s':>12}{'generated tokens/round':>24}")
    for name in arms:
        print(f"{name:<6}{statistics.median(times[name]):>16.1f}{rate[name]:>12.3f}"
              f"{statistics.median(tokens[name]):>24.0f}")
    print(json.dumps({"hf_rollouts_per_s": round(rate["hf"], 4), "vllm_rollouts_per_s": round(rate["vllm"], 4),
                      "speedup": round(rate["vllm"] / rate["hf"], 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
