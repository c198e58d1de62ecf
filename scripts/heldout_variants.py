"""The learning experiment's second held-out set: template variants of test-split seeds no run trains or is held out on.

`rods compare` holds out a fixed split of the test split's tasks shaped like the arms' seeds (`heldout.jsonl`). The
design (docs/results/learning.md) asks for a second set, of *variants of other seeds*, to show what synthesized
tasks teach: this draws the test split's tasks of that shape that are not in `heldout.jsonl`, makes one template
variant of each (`rods synth --llm template`: each replays its gold calls and scores 1.0 before it is kept), and
writes the first `--n` to `OUT/heldout_variants.jsonl`. Score a policy on it with `rods eval --tasks`:

    python scripts/heldout_variants.py --arms configs/learning/static.yaml --out runs/learning --n 48
    rods eval --model <checkpoint or model folder> --tasks runs/learning/heldout_variants.jsonl --out <dir>

The draw is fixed by `--seed`; a second run with the same arguments writes the same file.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from rods.compare.arms import heldout_tasks, load_arms
from rods.llm import make_backend
from rods.synth.pipeline import Pipeline
from rods.synth.settings import SynthConfig
from rods.tasks import write_tasks
from rods.train.run import load_seeds

FILE = "heldout_variants.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", nargs="+", type=Path, required=True, help="the comparison's arm configs")
    parser.add_argument("--out", type=Path, required=True, help="the comparison's directory (holds heldout.jsonl)")
    parser.add_argument("--n", type=int, default=48, help="variants to keep")
    parser.add_argument("--seed", type=int, default=0, help="the draw of seeds and the pipeline's seed")
    args = parser.parse_args()

    arms = load_arms(args.arms)
    held = {t.id for t in heldout_tasks(arms, 48, args.out)}  # the first held-out set, as the comparison keeps it
    data = arms[0].config.data.model_copy(update={"seeds": "test", "max_slices": None, "per_category": None})
    others = [t for t in load_seeds(data) if t.id not in held]
    random.Random(args.seed).shuffle(others)
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=1, workers=1, seed=args.seed))
    variants = pipeline(others)[: args.n]
    path = args.out / FILE
    write_tasks(path, variants)
    report = pipeline.report()
    print(f"{len(others)} other test seeds of the arms' shape; {report['accepted']} variants accepted; "
          f"kept {len(variants)} -> {path}")
    print(f"strategies: {report['strategies']}; rejections: {report['rejections']}")


if __name__ == "__main__":
    main()
