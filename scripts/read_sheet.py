"""Make a blind-read sheet: accepted template variants of a fresh draw, mixed with their seeds, shuffled.

Each read of synthesized tasks must use a draw no rule was written against (docs/results/synthesis.md): this
draws the seeds, synthesizes, and writes into OUT
* `sheet.md`: the items (state, then each turn's user message and gold calls), variants and the seeds they
  came from mixed and shuffled, with no sign of which is which: give only this and the five points to a reader;
* `key.json`: item number -> [variant | seed, environment, task id, the variant's strategy (replan | recast)];
* `pairs.md`: each variant beside its seed, for reading them side by side.

    python scripts/read_sheet.py --out runs/read --bfcl-split test --per-category 3 --draw 4343 \\
        --seeds examples/bikeshare/seeds.jsonl --pipeline-seed 43

`--bfcl-split` draws `--per-category` seeds of each BFCL category from that split (new classes first, so the draw
covers every class); each `--seeds` file is one more environment (its folder is put on the import path), all its
seeds or `--limit` of them drawn.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from rods.llm import make_backend
from rods.synth.pipeline import Pipeline
from rods.synth.settings import SynthConfig
from rods.tasks import CATEGORIES, Task, load_split, read_tasks


def bfcl_draw(split: str, per_category: int, rng: random.Random) -> list[Task]:
    """`per_category` seeds of each category of a BFCL split, those adding classes not yet drawn first."""
    tasks, chosen, covered = list(load_split(split)), [], set()
    for category in CATEGORIES:
        pool = [t for t in tasks if t.category == category]
        rng.shuffle(pool)
        for task in sorted(pool, key=lambda t: -len(set(t.involved_classes) - covered))[:per_category]:
            chosen.append(task)
            covered |= set(task.involved_classes)
    return chosen


def turns(task: Task) -> str:
    lines = []
    for i, (question, calls) in enumerate(zip(task.question, task.ground_truth), 1):
        said = question[0].content if question else "(no message: new tools become available)"
        lines += [f"Turn {i} user: {said}", f"Turn {i} calls: " + ("; ".join(calls) if calls else "(none)")]
    return "\n".join(lines)


def state(task: Task, limit: int = 1800) -> str:
    """The task's initial config as JSON, its first `limit` characters (0: the whole of it)."""
    text = json.dumps(task.initial_config, ensure_ascii=False)
    return text[:limit] if limit else text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--bfcl-split", choices=["train", "test"], default=None)
    parser.add_argument("--per-category", type=int, default=3)
    parser.add_argument("--draw", type=int, required=True, help="the seed of the draw (write it in the results)")
    parser.add_argument("--seeds", type=Path, nargs="*", default=[])
    parser.add_argument("--pipeline-seed", type=int, required=True)
    parser.add_argument("--per-seed", type=int, default=1)
    parser.add_argument("--limit", type=int, default=0, help="draw this many seeds of each --seeds file (0: all)")
    parser.add_argument("--state-chars", type=int, default=1800,
                        help="show this much of each item's state (0: the whole state, for a domain whose relations "
                             "lie past the first records)")
    args = parser.parse_args()
    rng = random.Random(args.draw)
    groups = {f"bfcl_{args.bfcl_split}": bfcl_draw(args.bfcl_split, args.per_category, rng)} if args.bfcl_split else {}
    for path in args.seeds:
        sys.path.insert(0, str(path.resolve().parent))
        seeds = read_tasks(path)
        groups[path.parent.name] = rng.sample(seeds, args.limit) if 0 < args.limit < len(seeds) else seeds
    args.out.mkdir(parents=True, exist_ok=True)
    items, pairs = [], []
    for name, seeds in groups.items():
        config = SynthConfig(per_seed=args.per_seed, seed=args.pipeline_seed)
        accepted = Pipeline(make_backend("template"), config)(seeds)
        parents = {v.provenance.parent_id for v in accepted}
        print(f"{name}: {len(accepted)} accepted of {args.per_seed * len(seeds)}, "
              f"from {len(parents)} of {len(seeds)} seeds")
        by_id = {s.id: s for s in seeds}
        items += [("variant", name, v) for v in accepted] + [("seed", name, s) for s in seeds if s.id in parents]
        pairs += [f"===== {name} {v.id}\n--- seed {v.provenance.parent_id}\n{turns(by_id[v.provenance.parent_id])}\n"
                  f"--- variant\n{turns(v)}\nSTATE {state(v, args.state_chars)}\n" for v in accepted]
    random.Random(args.draw + 1).shuffle(items)
    sheet = ["# Sheet: multi-turn tasks for a tool-using assistant"]
    cut = "may be cut" if args.state_chars else "whole"
    sheet += [f"## Item {n}\n\nState (JSON, {cut}): {state(t, args.state_chars)}\n\n{turns(t)}"
              for n, (_, _, t) in enumerate(items, 1)]
    (args.out / "sheet.md").write_text("\n\n".join(sheet) + "\n", encoding="utf-8")
    (args.out / "key.json").write_text(json.dumps({n: [k, e, t.id, t.provenance.strategy if k == "variant" else None]
                                                      for n, (k, e, t) in enumerate(items, 1)}, indent=1))
    (args.out / "pairs.md").write_text("\n\n".join(pairs), encoding="utf-8")
    print(f"wrote {len(items)} items to {args.out}/sheet.md (key.json, pairs.md beside it)")


if __name__ == "__main__":
    main()
