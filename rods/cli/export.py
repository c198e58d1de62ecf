"""`rods export CHECKPOINT --out DIR [--merge]`: a clean model folder from a training checkpoint.

A LoRA run's checkpoint holds the adapter (and the tokenizer); with `--merge` the
adapter is folded into its base (the checkpoint names it) and a full float model
folder is written, which transformers, vLLM or `rods eval --model DIR` load alone.
Without `--merge`, or for a full-weights checkpoint, the folder keeps the weights
as they are, minus the optimizer and trainer state.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("export", help="write a model folder from a training checkpoint", description=__doc__)
    p.add_argument("checkpoint", type=Path, help="a checkpoint folder, e.g. runs/NAME/checkpoints/checkpoint-50")
    p.add_argument("--out", type=Path, required=True, help="the model folder to write (new or empty)")
    p.add_argument("--merge", action="store_true", help="fold a LoRA adapter into its base model")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from rods.llm.adapters import adapter_base, export_model, is_adapter_dir

    console = Console(stderr=True)
    adapter = is_adapter_dir(args.checkpoint)
    what = "LoRA adapter" if adapter else "full weights"
    if adapter and args.merge:
        console.print(f"merging the {what} of {args.checkpoint} into {adapter_base(args.checkpoint)} ...")
    out = export_model(args.checkpoint, args.out, merge=args.merge)
    kind = "merged model" if adapter and args.merge else what
    console.print(f"wrote {kind} to {out} ({sum(1 for _ in out.iterdir())} files)")
    return 0
