"""One rank of `torch.distributed.run --nproc_per_node 2 ranks_worker.py OUT`: the two exchanges of `RankGroup`.

Rank r scores rows of a generation batch cut into contiguous slices, as accelerate cuts it:
rank 0 gets a, a, b and rank 1 gets b, c, c (task b's group of K = 2 is split). The owner's
epoch is shared with rank 1, which passes nothing.
"""

import json
import sys
from pathlib import Path

import torch.distributed as dist

from rods.integrations.trl.ranks import RankGroup
from rods.integrations.trl.rewards import groups
from rods.tasks import load_split


def main() -> None:
    dist.init_process_group("gloo")
    ranks = RankGroup(rank=dist.get_rank(), world_size=dist.get_world_size())
    batch = [("a", 1.0), ("a", 0.0), ("b", 0.5), ("b", 1.0), ("c", 0.0), ("c", 0.25)]
    mine = batch[3 * ranks.rank : 3 * ranks.rank + 3]
    rows = ranks.gather_rewards(mine)
    tasks = load_split("train")[:2] if ranks.is_owner else []
    ids, shared = ranks.share_epoch([t.id for t in tasks] * 2 if tasks else [], tasks)
    ranks.barrier()
    out = {
        "rank": ranks.rank,
        "rows": rows,
        "groups": groups([t for t, _ in rows], [r for _, r in rows], 2) if rows is not None else None,
        "ids": ids,
        "tasks": [t.model_dump(mode="json") for t in shared],
        "broadcast": ranks.broadcast({"step": 7} if ranks.is_owner else None),
    }
    Path(sys.argv[1], f"rank-{ranks.rank}.json").write_text(json.dumps(out))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
