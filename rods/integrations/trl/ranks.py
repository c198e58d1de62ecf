"""One data engine for a run, whatever the number of training processes (docs/design.md §6.1).

Under `accelerate launch` every rank runs the same training loop on its slice of
each batch. The engine must still see the run as one: rank 0 (the *owner*) holds
the only `DataEngine`, its synthesis worker and its snapshots; the other ranks
hold none. Two exchanges keep them together, both collective calls that every
rank makes at the same point of the loop:

* `share_epoch(ids, tasks)`: at each epoch start the owner's epoch rows (task ids
  in order) and the tasks behind them go to every rank, so every rank's
  dataset serves the same pool and shards it as TRL expects;
* `gather_rewards(pairs)`: at each reward computation every rank's
  ``(task_id, reward)`` rows reach the owner in rank order. Accelerate gives each
  rank a contiguous slice of the generation batch, so the concatenation is the
  batch in order and a GRPO group cut between two ranks is whole again.

A single process is a `RankGroup` of one: both calls return their input.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RankGroup:
    """This process's place among the run's training processes (rank 0 owns the engine)."""

    rank: int = 0
    world_size: int = 1

    @property
    def is_owner(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @classmethod
    def current(cls, cpu: bool) -> RankGroup:
        """The process group of this run, set up as the trainer will (`cpu`: gloo on CPU, as `use_cpu`).

        Accelerate keeps one process state per process; creating it here first with the
        trainer's device choice lets the run know its rank before the trainer exists.
        """
        from accelerate import PartialState

        state = PartialState(cpu=cpu)
        return cls(rank=int(state.process_index), world_size=int(state.num_processes))

    def share_epoch(self, ids: list[str], tasks: list[Any]) -> tuple[list[str], list[Any]]:
        """The owner's epoch rows and their tasks, on every rank (others pass anything)."""
        if not self.distributed:
            return ids, tasks
        import torch.distributed as dist

        box: list[Any] = [(ids, [t.model_dump_json() for t in tasks]) if self.is_owner else None]
        dist.broadcast_object_list(box, src=0)
        got_ids, bodies = box[0]
        if self.is_owner:
            return ids, tasks
        from rods.tasks import Task

        return list(got_ids), [Task.model_validate_json(b) for b in bodies]

    def gather_rewards(self, pairs: list[tuple[str, float]]) -> list[tuple[str, float]] | None:
        """Every rank's ``(task_id, reward)`` rows in rank order, on the owner; None elsewhere."""
        if not self.distributed:
            return list(pairs)
        import torch.distributed as dist

        out: list[Any] | None = [None] * self.world_size if self.is_owner else None
        dist.gather_object(list(pairs), out, dst=0)
        if out is None:
            return None
        return [(str(t), float(r)) for part in out for t, r in part]

    def barrier(self) -> None:
        if self.distributed:
            import torch.distributed as dist

            dist.barrier()

    def broadcast(self, value: Any) -> Any:
        """The owner's `value` on every rank."""
        if not self.distributed:
            return value
        import torch.distributed as dist

        box = [value if self.is_owner else None]
        dist.broadcast_object_list(box, src=0)
        return box[0]
