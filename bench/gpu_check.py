"""GPU check: a few GRPO steps of the closed loop through TRL, on CUDA in bf16, with nothing from a hub.

What `scripts/gpu_check.sh` runs on a lent GPU machine (and a test runs on CPU
with `--device cpu`). Everything is built on the spot: a byte-level BPE
tokenizer trained on the seed tasks' text with a ChatML chat template, and a
small random Llama. The run is `rods.train.run.train` itself: rollouts of the
agent loop, progress rewards, the data engine (zones, seed selection), template
synthesis, and an epoch boundary at step 2 that injects synthesized tasks.

Prints a table, then as its last line one JSON object:
{"device", "dtype", "steps", "seconds_per_step", "rollouts_per_s",
"engine_observations", "injected", "seconds"} (seconds per step is the median
over the steps after the first, which carries CUDA's warm-up).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
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
    cpu = args.device == "cpu"
    return {
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


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    parser.add_argument("--steps", type=int, default=3, help="GRPO steps (an epoch boundary follows step 2)")
    parser.add_argument("--k", type=int, default=8, help="K, rollouts per task (grpo.num_generations = engine.K)")
    parser.add_argument("--tasks-per-step", type=int, default=4)
    parser.add_argument("--reply-tokens", type=int, default=32, help="tokens per reply")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--out", type=Path, default=None, help="run directory (default: a temporary one)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    import torch

    from rods.tasks import write_tasks
    from rods.train import config_from_dict
    from rods.train.run import train

    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("gpu_check: no CUDA device (use --device cpu to run the same check on CPU)")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="rods-gpu-check-") as tmp:
        folder = args.out or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        seeds = seed_tasks(2, 2)
        write_tasks(folder / "seeds.jsonl", seeds)
        model_dir = build_model_dir(folder / "model", build_tokenizer(seeds), args.hidden, args.layers)
        config = config_from_dict(run_config(args, model_dir, folder / "seeds.jsonl", folder / "run"))
        summary = train(config)
    steps = summary.step_seconds
    timed = steps[1:] or steps
    rollouts = args.tasks_per_step * args.k
    result = {
        "device": torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu",
        "dtype": "float32" if args.device == "cpu" else "bfloat16",
        "steps": summary.steps,
        "seconds_per_step": round(statistics.median(timed), 3),
        "rollouts_per_s": round(rollouts * len(steps) / sum(steps), 2),
        "engine_observations": summary.observed_groups,
        "injected": summary.injected,
        "seconds": round(time.perf_counter() - start, 1),
    }
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"rods GPU check: {args.steps} GRPO steps, {args.tasks_per_step} tasks x K = {args.k}")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in result.items():
        table.add_row(key, str(value))
    Console(file=sys.stdout).print(table)
    print(json.dumps(result), flush=True)
    return result


if __name__ == "__main__":
    main()
