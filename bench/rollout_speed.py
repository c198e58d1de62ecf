"""Rollouts per second: HF generate vs a vLLM server, unsynced and synced (LoRA), and what one sync costs.

Every arm plays the same tasks K times through `MultiTurnRollout` (the token-level
agent loop TRL trains with), with the same caps and sampling; only the generator
differs: the model's own `generate` (``hf``: batched, the whole history re-encoded
every round), a vLLM server on CPU (``vllm``: ``grpo.generation: vllm_server``,
exact token ids to ``/v1/completions``, log-probabilities back, prefix cache across
turns, the server's own weights), and the same server kept on a LoRA policy
(``vllm+sync``: before each round the adapter of a new policy version is saved and
loaded into the server, as after every optimizer step, and the replies come from
it; its time includes that sync). The model is the embedded SmolLM2-135M in float32
(the safetensors copy `make vllm` writes); the adapter has rank 16 on every linear
layer. Arms alternate over `--rounds` so machine load hits them alike. The seconds a
sync costs are timed for the adapter and for full weights saved and reloaded in
place from disk (the server's weights are its own again afterwards).

Without `--base-url` it starts the vLLM server itself (needs `make vllm`; start-up
is not timed; a server given by URL needs runtime LoRA loading and the dev routes,
as tests/servers/vllm.py starts it). Prints a table, then as its last line one JSON
object: {"hf_rollouts_per_s", "vllm_rollouts_per_s", "vllm_synced_rollouts_per_s",
"speedup", "adapter_sync_s", "disk_sync_s"}.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def pick_tasks(n: int):
    """`n` train tasks of two or more turns, shortest first (multi-turn, and quick enough on a CPU)."""
    from rods.tasks import load_split

    tasks = sorted((t for t in load_split("train") if t.num_turns >= 2), key=lambda t: (t.num_turns, t.id))
    return tasks[:n]


def main(argv: list[str] | None = None) -> int:
    with tempfile.TemporaryDirectory(prefix="rods-rollout-speed-") as tmp:
        return measure(argv, tmp)


def measure(argv: list[str] | None, tmp: str) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base-url", default=None, help="a running vLLM server (default: start one)")
    p.add_argument("--tasks", type=int, default=4)
    p.add_argument("--k", type=int, default=4, help="rollouts per task")
    p.add_argument("--rounds", type=int, default=2, help="timed rounds per arm (alternating)")
    p.add_argument("--max-reply-tokens", type=int, default=48)
    args = p.parse_args(argv)

    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rods.integrations.trl.policy_server import PolicyServer
    from rods.integrations.trl.rollout import MultiTurnRollout
    from rods.integrations.trl.vllm_server import VLLMServerGenerator
    from rods.integrations.trl.weight_sync import AdapterSync, ServerAdmin, SyncError, make_sync
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
    sync_s: dict[str, list[float]] = {"adapter": [], "disk": []}
    try:
        tokenizer = AutoTokenizer.from_pretrained(vllm_model_dir())
        model = AutoModelForCausalLM.from_pretrained(vllm_model_dir(), dtype=torch.float32).eval()
        policy = get_peft_model(AutoModelForCausalLM.from_pretrained(vllm_model_dir(), dtype=torch.float32),
                                LoraConfig(r=16, lora_alpha=32, target_modules="all-linear"))
        settings = RolloutSettings(max_steps_per_turn=1, max_reply_tokens=args.max_reply_tokens,
                                   max_completion_tokens=2048, temperature=1.0, tool_docs="signatures")
        tasks = pick_tasks(args.tasks)
        batch = [t for t in tasks for _ in range(args.k)]
        lookup = {t.id: t for t in tasks}.__getitem__
        generator = VLLMServerGenerator(base_url, concurrency=len(batch))
        synced = PolicyServer(VLLMServerGenerator(base_url, concurrency=len(batch)),
                              AdapterSync(ServerAdmin(base_url), Path(tmp) / "adapters", "bench"))
        arms = {"hf": MultiTurnRollout(lookup, tokenizer, settings),
                "vllm": MultiTurnRollout(lookup, tokenizer, settings, generator=generator),
                "vllm+sync": MultiTurnRollout(lookup, tokenizer, settings, generator=synced)}
        arms["vllm"].rollout(None, tasks[:1])  # warm-up (first request, caches)
        times: dict[str, list[float]] = {name: [] for name in arms}
        tokens: dict[str, list[int]] = {name: [] for name in arms}
        for version in range(args.rounds):
            for name, rollout in arms.items():
                start = time.perf_counter()
                if name == "vllm+sync":  # a new policy version, as after an optimizer step
                    with torch.no_grad():
                        for pname, p in policy.named_parameters():
                            if "lora_B" in pname:
                                p.normal_(0, 1e-3)
                    synced.after_step(policy, version)
                    sync_s["adapter"].append(synced.sync_seconds[-1])
                out = rollout.rollout(model if name == "hf" else None, batch)
                times[name].append(time.perf_counter() - start)
                tokens[name].append(sum(sum(m) for m in out["env_mask"]))
                if name == "vllm+sync":
                    assert set(out["policy_version"]) == {version}, out["policy_version"]
        disk = make_sync("disk", base_url, generator.base_model, Path(tmp) / "weights")
        for version in range(args.rounds):  # the server's own weights, pushed back in place
            start = time.perf_counter()
            try:
                disk.push(model, version)
            except SyncError as err:
                print(f"full-weights sync not measured: {err}", file=sys.stderr)
                break
            sync_s["disk"].append(time.perf_counter() - start)
        generator.close()
        synced.close()
    finally:
        if server is not None:
            server.stop()
    rate = {name: len(batch) / statistics.median(ts) for name, ts in times.items()}
    per_sync = {kind: round(statistics.median(v), 3) if v else None for kind, v in sync_s.items()}
    print(f"{len(tasks)} tasks x K={args.k} = {len(batch)} rollouts per round, {args.rounds} rounds per arm, "
          f"replies <= {args.max_reply_tokens} tokens, one reply per turn (turns: "
          f"{sorted(t.num_turns for t in tasks)})")
    print(f"{'arm':<10}{'median s/round':>16}{'rollouts/s':>12}{'generated tokens/round':>24}")
    for name in arms:
        print(f"{name:<10}{statistics.median(times[name]):>16.1f}{rate[name]:>12.3f}"
              f"{statistics.median(tokens[name]):>24.0f}")
    print(f"seconds per sync: LoRA adapter (r=16) {per_sync['adapter']}, full weights from disk {per_sync['disk']}")
    print(json.dumps({"hf_rollouts_per_s": round(rate["hf"], 4), "vllm_rollouts_per_s": round(rate["vllm"], 4),
                      "vllm_synced_rollouts_per_s": round(rate["vllm+sync"], 4),
                      "speedup": round(rate["vllm"] / rate["hf"], 3),
                      "adapter_sync_s": per_sync["adapter"], "disk_sync_s": per_sync["disk"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
