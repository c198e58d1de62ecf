"""Type-quota boundary seed selection (docs/design.md §3.3, paper §3.2).

Each step at most M boundary seeds are chosen, at most M_τ of type τ, ranked
within a type by φ(r̄) = 4 r̄ (1 − r̄) (closest to 0.5 first, ties by task id).
A seed chosen at step s is excluded until step s + c.

**Unused quota.** When a type has fewer eligible boundary tasks than its quota,
the unused slots are redistributed one at a time, round-robin over
`quota_order`, to the types that still have eligible candidates, until M seeds
are chosen or no type has any left (`redistribute_unused_quota=False` keeps
each type to its own quota).

Membership is kept incrementally: one lazy max-heap per type holds the
eligible boundary tasks by φ; `update` after an observation pushes at most one
entry (O(log n)), stale entries are skipped when popped, and a heap is rebuilt
when it grows past twice its live size, so selection costs O(M log n) per step
rather than a scan of the pool.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable

from rods.engine.config import TASK_TYPES, EngineConfig
from rods.engine.zones import Zone


class BoundarySeedSelector:
    """Chooses the seeds of each step from the boundary zone, per type quota."""

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self._type: dict[str, str] = {}  # eligible task -> type
        self._by_type: dict[str, set[str]] = {t: set() for t in TASK_TYPES}
        self._boundary_phi: dict[str, float] = {}  # eligible boundary task -> φ
        self._n_boundary: dict[str, int] = {t: 0 for t in TASK_TYPES}
        self._heaps: dict[str, list[tuple[float, str]]] = {t: [] for t in TASK_TYPES}
        self.excluded_until: dict[str, int] = {}
        self._expiry: list[tuple[int, str]] = []

    # -- membership ------------------------------------------------------------

    def add(self, task_id: str, task_type: str) -> None:
        """An eligible task joins (it may become a seed once it is in the boundary zone)."""
        if task_type not in self._by_type:
            raise ValueError(f"task {task_id!r} has unknown type {task_type!r}; types are {list(TASK_TYPES)}")
        self._type[task_id] = task_type
        self._by_type[task_type].add(task_id)

    def remove(self, task_id: str) -> None:
        task_type = self._type.pop(task_id, None)
        if task_type is None:
            return
        self._by_type[task_type].discard(task_id)
        if self._boundary_phi.pop(task_id, None) is not None:
            self._n_boundary[task_type] -= 1
        self.excluded_until.pop(task_id, None)

    def update(self, task_id: str, zone: Zone, mean: float) -> None:
        """Keep the boundary heaps current after the task's zone or mean changed."""
        task_type = self._type.get(task_id)
        if task_type is None:
            return
        if zone != "boundary":
            if self._boundary_phi.pop(task_id, None) is not None:
                self._n_boundary[task_type] -= 1
            return
        p = 4.0 * mean * (1.0 - mean)  # phi(mean), inlined on the observe path
        old = self._boundary_phi.get(task_id)
        if old == p:
            return
        if old is None:
            self._n_boundary[task_type] += 1
        self._boundary_phi[task_id] = p
        if task_id not in self.excluded_until:
            self._push(task_type, task_id, p)

    def _push(self, task_type: str, task_id: str, p: float) -> None:
        heap = self._heaps[task_type]
        heapq.heappush(heap, (-p, task_id))
        if len(heap) > 2 * self._n_boundary[task_type] + 64:
            self._rebuild(task_type)

    def _rebuild(self, task_type: str) -> None:
        heap = [
            (-p, tid)
            for tid, p in self._boundary_phi.items()
            if self._type[tid] == task_type and tid not in self.excluded_until
        ]
        heapq.heapify(heap)
        self._heaps[task_type] = heap

    def boundary_count(self, task_type: str | None = None) -> int:
        if task_type is None:
            return sum(self._n_boundary.values())
        return self._n_boundary[task_type]

    # -- exclusion window --------------------------------------------------------

    def exclude(self, task_id: str, until: int) -> None:
        self.excluded_until[task_id] = until
        heapq.heappush(self._expiry, (until, task_id))

    def _release(self, step: int) -> None:
        expiry = self._expiry
        while expiry and expiry[0][0] <= step:
            until, tid = heapq.heappop(expiry)
            if self.excluded_until.get(tid) != until:
                continue  # re-excluded later, or removed
            del self.excluded_until[tid]
            p = self._boundary_phi.get(tid)
            if p is not None:
                self._push(self._type[tid], tid, p)

    def restore_exclusions(self, excluded_until: dict[str, int]) -> None:
        """Reinstall saved exclusions (call after the tasks were added and updated)."""
        for tid, until in excluded_until.items():
            if tid in self._type:
                self.exclude(tid, int(until))
        for task_type in TASK_TYPES:
            self._rebuild(task_type)

    # -- selection -------------------------------------------------------------------

    def select(self, step: int, rng: random.Random) -> list[str]:
        """Choose this step's seeds (task ids) and start their exclusion windows."""
        cfg = self.config
        self._release(step)
        take = self._random_taker(rng) if cfg.random_seeds else self._boundary_taker()
        chosen: list[str] = []
        for task_type in cfg.quota_order:
            chosen.extend(take(task_type, cfg.quota(task_type)))
        if cfg.redistribute_unused_quota:
            open_types = list(cfg.quota_order)
            while len(chosen) < cfg.max_seeds_per_step and open_types:
                for task_type in list(open_types):
                    if len(chosen) >= cfg.max_seeds_per_step:
                        break
                    got = take(task_type, 1)
                    if got:
                        chosen.extend(got)
                    else:
                        open_types.remove(task_type)
        for tid in chosen:
            self.exclude(tid, step + cfg.exclusion_window)
        return chosen

    def _boundary_taker(self) -> Callable[[str, int], list[str]]:
        taken: set[str] = set()

        def take(task_type: str, n: int) -> list[str]:
            heap = self._heaps[task_type]
            out: list[str] = []
            while heap and len(out) < n:
                neg_p, tid = heapq.heappop(heap)
                if (
                    tid in taken
                    or tid in self.excluded_until
                    or self._boundary_phi.get(tid) != -neg_p
                ):
                    continue  # stale entry
                taken.add(tid)
                out.append(tid)
            return out

        return take

    def _random_taker(self, rng: random.Random) -> Callable[[str, int], list[str]]:
        pools: dict[str, list[str]] = {}

        def take(task_type: str, n: int) -> list[str]:
            if task_type not in pools:
                ids = sorted(tid for tid in self._by_type[task_type] if tid not in self.excluded_until)
                rng.shuffle(ids)
                pools[task_type] = ids
            pool = pools[task_type]
            out: list[str] = []
            while pool and len(out) < n:
                out.append(pool.pop())
            return out

        return take
