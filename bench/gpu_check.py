"""GPU check: GRPO steps of the closed loop through TRL on CUDA in bf16, LoRA with a synced vLLM server, TRL's vLLM.

What `scripts/gpu_check.sh` runs on a lent GPU machine (and tests run on CPU
with `--device cpu`); with no `--device` it runs on CUDA when there is a device,
else on the CPU (so `make bench` runs it anywhere). Everything is built on the spot: a byte-level BPE
tokenizer trained on the seed tasks' text with a ChatML chat template, and a
small random Llama (``--model`` names another folder instead). Checks (``--check``):

* ``loop``: `rods.train.run.train` itself: rollouts of the agent loop, progress
  rewards, the data engine (zones, seed selection), template synthesis, and an
  epoch boundary at step 2 that injects synthesized tasks;
* ``lora_vllm_sync``: a LoRA policy whose rollouts come from a vLLM server
  (``grpo.generation: vllm_server``) that loads the adapter after every step;
  afterwards the server must serve the last step's adapter and its
  log-probabilities of a fixed completion agree with the trainer's (mean absolute
  difference below 0.05; how far the policy moved from the initial one is
  reported beside it; a spread reward on the sampled tokens gives GRPO groups
  that differ). It starts
  the server (``--vllm-python``) unless ``--vllm-base-url`` names one;
* ``trl_vllm_colocate``: the closed loop with ``grpo.generation: trl_vllm`` in
  colocate mode (TRL's vLLM in the training process, synced by TRL) and LoRA.

The vLLM checks need vLLM importable (the lent machine's image has none and a
CUDA vLLM is too large to carry there); without it, or without CUDA for the
colocate check, they report ``"not run: <why>"`` instead of figures.

Prints a table, then as its last line one JSON object: the loop's figures
{"device", "dtype", "parameters", "trainable_parameters", "steps", "seconds_per_step",
"rollouts_per_s", "generation_s", "rewards_engine_s", "synthesis_wait_s", "training_s",
"step_splits", "grad_norms", "losses", "learning", "peak_memory_gb", "gpu_utilization_mean",
"gpu_utilization_above_50", "engine_observations", "injected", "seconds"} (per-step figures are
medians over the steps after the first, which carries CUDA's warm-up; the loop trains on the
progress reward plus a spread reward so that groups differ, and the check exits non-zero when
grad_norm is 0 on every step), plus "lora_vllm_sync" and "trl_vllm_colocate" when those checks
were asked for.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from train_overhead import seed_tasks

#: ChatML without native tools: the rollout writes tool signatures into the system prompt.
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def build_tokenizer(tasks, vocab_size: int = 2048):
    """A byte-level BPE tokenizer trained on the tasks' text (any text still encodes, byte by byte)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    from rods.envs.schemas import function_docs
    from rods.tasks.bfcl import API_CLASSES

    corpus = [json.dumps(doc) for docs in function_docs(API_CLASSES).values() for doc in docs]
    for task in tasks:
        corpus += [m.content for turn in task.question for m in turn]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|im_start|>", eos_token="<|im_end|>", pad_token="<|endoftext|>",
        chat_template=CHAT_TEMPLATE,
    )


def build_model_dir(folder: Path, tokenizer, hidden: int, layers: int) -> Path:
    """A random Llama of the given width and depth, saved with the tokenizer."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
        num_attention_heads=max(1, hidden // 64), num_key_value_heads=max(1, hidden // 128),
        max_position_embeddings=4096, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True,
    )
    model = LlamaForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def run_config(args, model_dir: Path, seeds_file: Path, run_dir: Path) -> dict:
    """The loop's run: micro-batches and gradient checkpointing are left to rods' defaults."""
    cpu = args.device == "cpu"
    data = {
        "name": "gpu-check", "output_dir": str(run_dir),
        "model": {"name_or_path": str(model_dir), "torch_dtype": "float32" if cpu else "bfloat16"},
        "data": {"seeds": str(seeds_file)},
        "rollout": {"max_steps_per_turn": 1, "max_reply_tokens": args.reply_tokens, "max_completion_tokens": 1024,
                    "tool_docs": "signatures"},
        "grpo": {"num_generations": args.k, "tasks_per_step": args.tasks_per_step, "steps_per_epoch": 2,
                 "max_steps": args.steps, "save_steps": 1000, "learning_rate": 1e-4, "use_cpu": cpu, "bf16": not cpu},
        "engine": {"K": args.k, "min_observations": args.k, "burn_in_rollouts": args.k, "max_seeds_per_step": 2,
                   "quotas": {"basic": 1, "miss_func": 0, "miss_param": 1}, "exclusion_window": 1,
                   "capacity": 8, "max_injection_fraction": 1.0},
        "synthesis": {"backend": "template", "wait_at_epoch_end": True},
    }
    if args.generation_batch:
        data["rollout"]["generation_batch_size"] = args.generation_batch
    if args.lora:
        data["model"]["lora"] = {"enabled": True, "rank": 16, "alpha": 32}
    return data


CHECKS = ("loop", "lora_vllm_sync", "trl_vllm_colocate")
#: Mean absolute difference of log-probabilities under which trainer and server hold the same policy.
SYNC_TOLERANCE = 0.05


def spread_reward(k: int):
    """A reward that differs within every GRPO group of `k`: 1 for a completion whose token ids sum above the
    smallest sum of its group, else 0 (all equal only if every sampled completion of the group sums alike)."""

    def spread_reward(prompts, completions, completion_ids, **_):
        sums = [sum(ids) for ids in completion_ids]
        lowest = [min(sums[i - i % k : i - i % k + k]) for i in range(len(sums))]
        return [float(total > low) for total, low in zip(sums, lowest)]

    return spread_reward


def vllm_missing(args) -> str | None:
    if args.vllm_base_url:
        return None
    python = args.vllm_python
    if python == sys.executable:
        return None if importlib.util.find_spec("vllm") else "not run: vLLM is not importable here (--vllm-python)"
    return None if Path(python).exists() else f"not run: no python at {python}"


def start_vllm(args, model_dir: Path, folder: Path) -> tuple[subprocess.Popen, str]:
    """A vLLM server of `model_dir` with runtime LoRA loading, on a free port; (process, base URL)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [args.vllm_python, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir),
               "--served-model-name", "policy", "--host", "127.0.0.1", "--port", str(port), "--max-model-len", "4096",
               "--dtype", "float32" if args.device == "cpu" else "bfloat16", "--enable-lora", "--max-lora-rank", "16",
               "--enable-prefix-caching"]
    if args.device == "cuda":
        command += ["--gpu-memory-utilization", "0.3"]
    env = dict(os.environ, VLLM_ALLOW_RUNTIME_LORA_UPDATING="True")
    log = open(folder / "vllm.log", "w")  # noqa: SIM115 - kept open for the server's lifetime
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the vLLM server exited ({proc.returncode}); see {folder / 'vllm.log'}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2):
                return proc, url
        except OSError:
            time.sleep(1)
    proc.kill()
    raise RuntimeError(f"the vLLM server was not ready in 600 s; see {folder / 'vllm.log'}")


def lora_vllm_sync(args, model_dir: Path, folder: Path) -> dict:
    """LoRA GRPO steps with rollouts from a vLLM server synced after every step; agreement of log-probabilities."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rods.integrations.trl.vllm_server import policy_logprobs, prompt_logprobs
    from rods.train import config_from_dict
    from rods.train.trainer import build_trainer

    missing = vllm_missing(args)
    if missing:
        return {"status": missing}
    start = time.perf_counter()
    proc, url = (None, args.vllm_base_url) if args.vllm_base_url else start_vllm(args, model_dir, folder)
    try:
        served = args.vllm_model or "policy"
        tokenizer = AutoTokenizer.from_pretrained(model_dir)
        text = tokenizer.apply_chat_template([{"role": "user", "content": "List the files."}], tokenize=False,
                                             add_generation_prompt=True)
        ids = tokenizer(text, add_special_tokens=False).input_ids
        probe = ids + tokenizer('<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>',
                                add_special_tokens=False).input_ids
        initial = prompt_logprobs(url, served, probe, len(ids))
        seeds = seed_tasks(2, 2)
        cpu = args.device == "cpu"
        config = config_from_dict({
            "output_dir": str(folder / "lora-run"),
            "model": {"name_or_path": str(model_dir), "torch_dtype": "float32" if cpu else "bfloat16",
                      "lora": {"enabled": True, "rank": 8, "alpha": 32}},
            "rollout": {"max_steps_per_turn": 1, "max_reply_tokens": args.reply_tokens,
                        "max_completion_tokens": 256, "tool_docs": "signatures"},
            "grpo": {"num_generations": args.k, "tasks_per_step": args.tasks_per_step, "max_steps": args.steps,
                     "save_steps": 1000, "learning_rate": 1e-2, "use_cpu": cpu, "bf16": not cpu,
                     "generation": "vllm_server", "vllm_base_url": url, "vllm_model": served},
            "engine": {"K": args.k, "min_observations": args.k, "burn_in_rollouts": args.k},
            "synthesis": {"enabled": False},
        })
        dtype = torch.float32 if cpu else torch.bfloat16
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype).to("cpu" if cpu else "cuda")
        by_id = {t.id: t for t in seeds}
        trainer = build_trainer(config, model, tokenizer, output_dir=folder / "lora-ckpt", lookup=by_id.__getitem__,
                                pool_source=lambda: list(seeds), extra_rewards=[spread_reward(args.k)])
        trainer.train()
        server = trainer.rods_generator
        ours = policy_logprobs(trainer.model, probe, len(ids))
        theirs = prompt_logprobs(url, server.generator.model, probe, len(ids))
        diff = statistics.fmean(abs(a - b) for a, b in zip(ours, theirs))
        moved = statistics.fmean(abs(a - b) for a, b in zip(ours, initial))
        lags = [row["rods/policy_lag_max"] for row in trainer.state.log_history if "rods/policy_lag_max" in row]
        return {
            "steps": trainer.state.global_step, "served_version": server.served_version, "syncs": server.syncs,
            "seconds_per_sync": round(statistics.fmean(server.sync_seconds), 3) if server.sync_seconds else None,
            "trainer_vs_server": round(diff, 5), "trainer_vs_initial": round(moved, 5),
            "policy_lag_max": max(lags) if lags else None,
            "synced": bool(server.served_version == args.steps and diff < SYNC_TOLERANCE),
            "seconds": round(time.perf_counter() - start, 1),
        }
    finally:
        if proc is not None:
            os.killpg(proc.pid, 15)
            proc.wait(timeout=60)


def trl_vllm_colocate(args, model_dir: Path, folder: Path) -> dict:
    """The closed loop with TRL's colocated vLLM generating (TRL syncs the LoRA-merged weights every step)."""
    import torch

    from rods.tasks import write_tasks
    from rods.train import config_from_dict
    from rods.train.run import train

    if args.device != "cuda" or not torch.cuda.is_available():
        return {"status": "not run: TRL's colocated vLLM needs a CUDA device"}
    if importlib.util.find_spec("vllm") is None:
        return {"status": "not run: vLLM is not importable here"}
    start = time.perf_counter()
    write_tasks(folder / "seeds-colocate.jsonl", seed_tasks(2, 2))
    data = run_config(args, model_dir, folder / "seeds-colocate.jsonl", folder / "colocate-run")
    data["model"]["lora"] = {"enabled": True, "rank": 8, "alpha": 16}
    data["grpo"].update(generation="trl_vllm", vllm_mode="colocate",
                        extra={"vllm_gpu_memory_utilization": 0.3, "vllm_max_model_length": 4096})
    summary = train(config_from_dict(data))
    rows = [json.loads(line) for line in (folder / "colocate-run" / "trainer_log.jsonl").read_text().splitlines()]
    lags = [r["rods/policy_lag_max"] for r in rows if "rods/policy_lag_max" in r]
    timed = summary.step_seconds[1:] or summary.step_seconds
    return {"steps": summary.steps, "seconds_per_step": round(statistics.median(timed), 3),
            "policy_lag_max": max(lags) if lags else None, "engine_observations": summary.observed_groups,
            "trainable_parameters": summary.trainable_parameters, "seconds": round(time.perf_counter() - start, 1)}


class Utilization:
    """Samples the GPU's utilization (NVML, else nvidia-smi) twice a second while a block runs."""

    def __init__(self, device: str) -> None:
        self.samples: list[float] = []
        self._read = self._reader() if device == "cuda" else None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    @staticmethod
    def _reader():
        try:
            import pynvml

            pynvml.nvmlInit()
            handle = pynvml.nvmlDeviceGetHandleByIndex(0)
            return lambda: float(pynvml.nvmlDeviceGetUtilizationRates(handle).gpu)
        except Exception:  # no NVML: ask nvidia-smi
            command = ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits", "-i", "0"]
            return lambda: float(subprocess.run(command, capture_output=True, text=True, timeout=5).stdout.split()[0])

    def _sample(self) -> None:
        while not self._stop.wait(0.5):
            try:
                self.samples.append(self._read())
            except Exception:  # a failed read is a missing sample, not a failed check
                pass

    def __enter__(self):
        if self._read is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def figures(self) -> dict:
        if not self.samples:
            return {"gpu_utilization_mean": None}
        return {"gpu_utilization_mean": round(statistics.fmean(self.samples), 1),
                "gpu_utilization_above_50": round(sum(s > 50 for s in self.samples) / len(self.samples), 2)}


def peak_memory_gb(device: str) -> float:
    """Peak memory of this process: allocated on the GPU, or resident on the CPU."""
    if device == "cuda":
        import torch

        return round(torch.cuda.max_memory_allocated() / 1e9, 2)
    import resource

    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6, 2)  # kB on Linux


def loop(args, model_dir: Path, folder: Path) -> dict:
    """rods' own training loop with a spread reward beside the progress reward, so GRPO groups differ."""
    import torch

    from rods.train import config_from_dict
    from rods.train.run import train

    if args.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    config = config_from_dict(run_config(args, model_dir, folder / "seeds.jsonl", folder / "run"))
    with Utilization(args.device) as utilization:
        summary = train(config, extra_rewards=[spread_reward(args.k)])
    rows = [json.loads(line) for line in (folder / "run" / "trainer_log.jsonl").read_text().splitlines()]
    grad_norms = [round(float(r["grad_norm"]), 5) for r in rows if "grad_norm" in r]
    steps = summary.step_seconds
    timed = steps[1:] or steps
    splits = summary.step_splits[1:] or summary.step_splits
    rollouts = args.tasks_per_step * args.k
    return {
        "device": torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu",
        "dtype": "float32" if args.device == "cpu" else "bfloat16",
        "parameters": summary.total_parameters,
        "trainable_parameters": summary.trainable_parameters,
        "steps": summary.steps,
        "seconds_per_step": round(statistics.median(timed), 3),
        "rollouts_per_s": round(rollouts * len(steps) / sum(steps), 2),
        **{f"{part}_s": round(statistics.median(s[part] for s in splits), 3) for part in (splits[0] if splits else {})},
        "step_splits": summary.step_splits,
        "grad_norms": grad_norms,
        "losses": [round(float(r["loss"]), 5) for r in rows if "loss" in r],
        "learning": any(g > 0 for g in grad_norms),
        "peak_memory_gb": peak_memory_gb(args.device),
        **utilization.figures(),
        "engine_observations": summary.observed_groups,
        "injected": summary.injected,
        "seconds": round(time.perf_counter() - start, 1),
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto",
                        help="auto: CUDA when there is a device, else the CPU (scripts/gpu_check.sh asks for cuda)")
    parser.add_argument("--check", choices=[*CHECKS, "all"], action="append", default=None,
                        help="which checks to run (repeatable; default: all)")
    parser.add_argument("--steps", type=int, default=3, help="GRPO steps (an epoch boundary follows step 2)")
    parser.add_argument("--k", type=int, default=8, help="K, rollouts per task (grpo.num_generations = engine.K)")
    parser.add_argument("--tasks-per-step", type=int, default=4)
    parser.add_argument("--reply-tokens", type=int, default=32, help="tokens per reply")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--lora", action="store_true", help="the loop trains a LoRA adapter (rank 16)")
    parser.add_argument("--generation-batch", type=int, default=None,
                        help="episodes per generate call (default: every live episode of the step)")
    parser.add_argument("--model", type=Path, default=None,
                        help="a model folder instead of the random Llama (the vLLM checks' server serves it)")
    parser.add_argument("--vllm-base-url", default=None, help="a running vLLM server of --model with --enable-lora "
                        "and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True (default: start one)")
    parser.add_argument("--vllm-model", default=None, help="its served name (default: policy, the started one's)")
    parser.add_argument("--vllm-python", default=sys.executable, help="the python that starts the vLLM server")
    parser.add_argument("--out", type=Path, default=None, help="run directory (default: a temporary one)")
    args = parser.parse_args(argv)
    checks = list(CHECKS) if args.check in (None, ["all"]) or "all" in (args.check or []) else args.check
    logging.basicConfig(level=logging.WARNING)

    import torch

    from rods.tasks import write_tasks

    if args.device == "auto":
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("gpu_check: no CUDA device (use --device cpu to run the same check on CPU)")
    result: dict = {}
    with tempfile.TemporaryDirectory(prefix="rods-gpu-check-") as tmp:
        folder = args.out or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        seeds = seed_tasks(2, 2)
        write_tasks(folder / "seeds.jsonl", seeds)
        model_dir = args.model or build_model_dir(folder / "model", build_tokenizer(seeds), args.hidden, args.layers)
        if "loop" in checks:
            result.update(loop(args, model_dir, folder))
        if "lora_vllm_sync" in checks:
            result["lora_vllm_sync"] = lora_vllm_sync(args, model_dir, folder)
        if "trl_vllm_colocate" in checks:
            result["trl_vllm_colocate"] = trl_vllm_colocate(args, model_dir, folder)
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"rods GPU check: {', '.join(checks)}; {args.steps} GRPO steps, {args.tasks_per_step} "
                  f"tasks x K = {args.k}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in result.items():
        if key == "step_splits":
            for number, split in enumerate(value, 1):
                table.add_row(f"step {number}", ", ".join(f"{part} {seconds:.2f} s" for part, seconds in split.items()))
        elif isinstance(value, dict):
            for sub, item in value.items():
                table.add_row(f"{key}.{sub}", str(item))
        else:
            table.add_row(key, str(value))
    Console(file=sys.stdout).print(table)
    print(json.dumps(result), flush=True)
    if "loop" in checks and not result["learning"]:
        raise SystemExit("gpu_check: grad_norm was 0 on every step: no gradient reached the policy")
    return result


if __name__ == "__main__":
    main()
