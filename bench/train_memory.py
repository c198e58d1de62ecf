"""Peak memory and time of GRPO steps: micro-batches, activation checkpointing, LoRA against full fine-tuning.

Each arm is `rods train --config CONFIG` for `--steps` GRPO steps (warm start and
synthesis off, a fresh run directory) in its own process; its peak resident
memory is that process's `ru_maxrss` (from `os.wait4`), its step time the median
of TRL's logged `step_time`. The arms differ only in `grpo.gradient_accumulation_steps`,
`grpo.gradient_checkpointing` and `model.lora.enabled`: the same rollouts are
generated once per step and trained on in micro-batches, so the memory a step needs
for activations shrinks with the micro-batch while the groups reaching the engine
stay whole (tests/integrations/trl/test_accumulation.py); with LoRA only the
adapter has gradients and optimizer state. An arm is ``N`` (micro-batches) with
optional ``+ckpt`` and ``+lora``.

    python bench/train_memory.py --config configs/tau2_airline.yaml --arms 1 4 4+ckpt
    python bench/train_memory.py --config configs/demo.yaml --arms 1 1+lora

Prints a table, then as its last line one JSON object:
{"<arm>": {"peak_gib", "step_s", "trainable"}, ..., "peak_ratio": first arm's peak / the smallest other peak}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def parse_arm(text: str) -> tuple[int, bool, bool]:
    """'4' -> 4 micro-batches; '4+ckpt' -> with activation checkpointing; '1+lora' -> a LoRA adapter (and both)."""
    count, *flags = text.split("+")
    if not count.isdigit() or any(f not in ("ckpt", "lora") for f in flags):
        raise argparse.ArgumentTypeError(f"an arm is N with optional +ckpt and +lora, got {text!r}")
    return int(count), "ckpt" in flags, "lora" in flags


def run_arm(config: str, arm: str, steps: int, folder: Path, extra: list[str]) -> dict:
    micro, ckpt, lora = parse_arm(arm)
    run_dir = folder / arm.replace("+", "_")
    command = [sys.executable, "-m", "rods", "train", "--config", config, "--output-dir", str(run_dir),
               "--set", f"grpo.max_steps={steps}", "--set", "warm_start.enabled=false",
               "--set", "synthesis.enabled=false", "--set", "engine.capacity=0",
               "--set", f"grpo.gradient_accumulation_steps={micro}",
               "--set", f"grpo.gradient_checkpointing={'true' if ckpt else 'false'}",
               "--set", f"model.lora.enabled={'true' if lora else 'false'}"]
    for item in extra:
        command += ["--set", item]
    with open(folder / f"{run_dir.name}.log", "w") as log:
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"arm {arm} failed (exit {code}): see {folder / run_dir.name}.log")
    rows = [json.loads(line) for line in (run_dir / "trainer_log.jsonl").read_text().splitlines() if line.strip()]
    times = [float(r["step_time"]) for r in rows if "step_time" in r]
    step_s = round(statistics.median(times), 1) if times else None
    trainable = json.loads((run_dir / "summary.json").read_text()).get("trainable_parameters")
    return {"peak_gib": round(usage.ru_maxrss / 2**20, 2), "step_s": step_s, "trainable": trainable}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="configs/tau2_airline.yaml")
    parser.add_argument("--arms", nargs="+", default=["1", "4", "4+ckpt"], type=str)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--set", dest="extra", action="append", default=[], help="another override for every arm")
    args = parser.parse_args(argv)
    for arm in args.arms:
        parse_arm(arm)
    figures: dict = {}
    with tempfile.TemporaryDirectory(prefix="rods-train-memory-") as tmp:
        for arm in args.arms:
            figures[arm] = run_arm(args.config, arm, args.steps, Path(tmp), args.extra)
            print(f"  arm {arm}: {figures[arm]}", file=sys.stderr, flush=True)
    print(f"\n{args.config}, {args.steps} GRPO steps per arm (warm start and synthesis off)")
    print(f"{'arm':<12} {'micro-batches':>13} {'checkpointing':>13} {'LoRA':>5} {'trained params':>15} "
          f"{'peak GiB':>9} {'step s':>7}")
    for arm, row in figures.items():
        micro, ckpt, lora = parse_arm(arm)
        print(f"{arm:<12} {micro:>13} {'yes' if ckpt else 'no':>13} {'yes' if lora else 'no':>5} "
              f"{row['trainable']!s:>15} {row['peak_gib']:>9} {row['step_s']!s:>7}")
    others = [row["peak_gib"] for arm, row in figures.items() if arm != args.arms[0]]
    if others:
        figures["peak_ratio"] = round(figures[args.arms[0]]["peak_gib"] / min(others), 2)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
