"""A training dataset that re-reads the engine's active pool at every epoch.

TRL (like any HF Trainer) ignores a replaced `trainer.train_dataset` mid-run.
An `IterableDataset.from_generator` is different: each epoch calls the
generator again, so a generator that asks the pool for its tasks sees the
tasks injected at the last epoch boundary. Each row is
``{"prompt": task_id, "task_id": task_id}`` (the rollout function gets only
prompts, so the prompt *is* the id).

An epoch is `steps_per_epoch * tasks_per_step` rows: the active pool shuffled
(seeded by the epoch number) and cycled to fill it, so every step has whole
GRPO groups and every epoch sees the whole pool when it fits.

Under several training processes only the owner rank reads the engine's pool;
its epoch rows and their tasks reach every rank (`RankGroup.share_epoch`), so
every rank's generator yields the same stream and accelerate shards it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from typing import Any

from rods.integrations.trl.ranks import RankGroup
from rods.tasks import Task


class LivePool:
    """The generator behind the dataset; `epochs_started` counts how often the pool was read.

    Args:
        source: returns the active tasks now (e.g. `engine.active_tasks`).
        tasks_per_step: distinct tasks per optimizer step.
        steps_per_epoch: steps per epoch (None: enough steps to see the pool once).
        seed: shuffling seed.
        first_epoch: the epoch number to start from (a resumed run continues its count).
        fresh: optional `f(task) -> bool`; fresh tasks (e.g. injected, never sampled)
            open the epoch, so their burn-in rewards arrive within it.
        ranks: the training processes; only the owner calls `source`, the others
            receive its epoch (default: one process).
    """

    def __init__(
        self,
        source: Callable[[], list[Task]],
        tasks_per_step: int,
        steps_per_epoch: int | None = None,
        seed: int = 0,
        first_epoch: int = 0,
        fresh: Callable[[Task], bool] | None = None,
        ranks: RankGroup | None = None,
    ) -> None:
        self.source = source
        self.tasks_per_step = tasks_per_step
        self.steps_per_epoch = steps_per_epoch
        self.seed = seed
        self.epochs_started = first_epoch
        self.fresh = fresh
        self.ranks = ranks or RankGroup()
        self.last_epoch_ids: list[str] = []
        #: The distinct task ids of every epoch this process served, in order.
        self.history: list[list[str]] = []
        self._tasks: dict[str, Task] = {}
        #: Optimizer steps of the epoch being iterated (known once its generator started).
        self.epoch_steps: int | None = None
        self._draws = 0

    def epoch_ids(self, epoch: int, tasks: list[Task]) -> list[str]:
        if not tasks:
            raise RuntimeError("the active pool is empty: nothing to train on")
        rng = random.Random(f"{self.seed}:{epoch}")
        first = [t.id for t in tasks if self.fresh is not None and self.fresh(t)]
        rest = [t.id for t in tasks if not (self.fresh is not None and self.fresh(t))]
        rng.shuffle(first)
        rng.shuffle(rest)
        ids = first + rest
        steps = self.steps_per_epoch or math.ceil(len(ids) / self.tasks_per_step)
        need = steps * self.tasks_per_step
        return [ids[i % len(ids)] for i in range(need)]

    def task(self, task_id: str) -> Task:
        """A task of the epoch being served (how ranks without the engine look tasks up)."""
        try:
            return self._tasks[task_id]
        except KeyError:
            raise KeyError(f"task {task_id!r} is not in the pool this epoch") from None

    def draw(self, n: int, exclude: set[str] | frozenset[str] = frozenset()) -> list[str]:
        """`n` task ids of the epoch being served, seeded, preferring ids not in `exclude` (dynamic sampling).

        Distinct ids while there are enough; with fewer, the draw cycles through them.
        """
        if not self._tasks:
            raise RuntimeError("no epoch is being served: nothing to draw from")
        others = sorted(set(self._tasks) - set(exclude)) or sorted(self._tasks)
        rng = random.Random(f"{self.seed}:{self.epochs_started}:draw:{self._draws}")
        self._draws += 1
        rng.shuffle(others)
        return [others[i % len(others)] for i in range(n)]

    def __call__(self) -> Iterator[dict[str, Any]]:
        epoch = self.epochs_started
        self.epochs_started += 1
        ids: list[str] = []
        tasks: list[Task] = []
        if self.ranks.is_owner:
            tasks = self.source()
            ids = self.epoch_ids(epoch, tasks)
            used = set(ids)
            tasks = [t for t in tasks if t.id in used]
        ids, tasks = self.ranks.share_epoch(ids, tasks)
        self._tasks = {t.id: t for t in tasks}
        self.last_epoch_ids = ids
        self.history.append(list(dict.fromkeys(ids)))
        self.epoch_steps = len(ids) // self.tasks_per_step
        for tid in ids:
            yield {"prompt": tid, "task_id": tid}


#: Live pools by token: `datasets` hashes (dill-pickles) a generator and its kwargs, so the
#: generator is a module function and the pool (which holds the engine) is looked up by token.
_POOLS: dict[str, LivePool] = {}


def _generate(token: str) -> Iterator[dict[str, Any]]:
    yield from _POOLS[token]()


def live_pool_dataset(pool: LivePool):
    """The `datasets.IterableDataset` over `pool` (re-run at every epoch)."""
    import uuid

    from datasets import Features, IterableDataset, Value

    token = uuid.uuid4().hex
    _POOLS[token] = pool
    features = Features({"prompt": Value("string"), "task_id": Value("string")})
    return IterableDataset.from_generator(_generate, features=features, gen_kwargs={"token": token})
