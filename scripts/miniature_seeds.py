"""Write configs/compare/seeds.jsonl: the train tasks whose turn slices are the CPU miniature's seeds.

The miniature (configs/compare/) trains the embedded 135M model on one-call
turn slices (rods.envs.slices) of tools with short signatures. Taking the
first tasks of the train split would give nearly only file-system slices, so
this walks the train split in order and keeps a task when its one-call slices
(at any turn) add a class that still has fewer than PER_CLASS slices, until
every class has them. Deterministic: rerunning it writes the same file.

    python scripts/miniature_seeds.py
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from rods.envs.slices import task_slices
from rods.tasks import load_split, write_tasks

CLASSES = ("GorillaFileSystem", "TwitterAPI", "MessageAPI", "TicketAPI", "MathAPI")
PER_CLASS = 10
OUT = Path(__file__).resolve().parents[1] / "configs" / "compare" / "seeds.jsonl"


def main() -> None:
    counts: Counter[str] = Counter()
    turns: Counter[int] = Counter()
    kept = []
    for task in load_split("train"):
        pieces = [
            p for p in task_slices(task) if len(p.ground_truth[0]) == 1 and set(p.involved_classes) <= set(CLASSES)
        ]
        if not any(counts[p.involved_classes[0]] < PER_CLASS for p in pieces):
            continue
        kept.append(task)
        counts.update(p.involved_classes[0] for p in pieces)
        turns.update(p.provenance.slice_turn for p in pieces)
        if all(counts[c] >= PER_CLASS for c in CLASSES if c != "MathAPI") and counts["MathAPI"] >= 1:
            break
    write_tasks(OUT, kept)
    print(
        f"{len(kept)} tasks, {sum(counts.values())} one-call slices: {dict(counts)}; "
        f"by turn {dict(sorted(turns.items()))}"
    )


if __name__ == "__main__":
    main()
