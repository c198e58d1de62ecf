"""Several synthesis models at once: which backbone writes the next variant.

The paper names a multi-backbone ensemble as future work; here a pipeline may
hold several backends (one set of stages each) and a :class:`Router` picks the
backbone of every variant:

* ``round_robin``: in turn;
* ``acceptance``: at random, with probability proportional to
  (accepted + 1) / (tried + 2) of each backbone so far (its acceptance rate
  under a uniform prior, so an untried backbone starts at 1/2 and a backbone
  whose variants keep failing the gate is picked less, never never).

Each backbone is named by its backend's `describe()` ("openai:Qwen/Qwen3-32B"),
with "#2", "#3" ... added when two describe themselves alike; that name is what
`provenance.backend` of its accepted tasks records.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Sequence
from typing import Literal, get_args

#: How a variant's backbone is picked.
Routing = Literal["round_robin", "acceptance"]
ROUTINGS: tuple[str, ...] = get_args(Routing)


def backbone_names(descriptions: Sequence[str]) -> list[str]:
    """Unique names: the description, with "#k" (k = 1-based position) on the second and later look-alikes."""
    out: list[str] = []
    for k, name in enumerate(descriptions, start=1):
        out.append(name if name not in out else f"{name}#{k}")
    return out


class Router:
    """Picks a backbone per variant and learns each one's acceptance (thread-safe)."""

    def __init__(self, n: int, routing: str = "round_robin", seed: int = 0):
        if routing not in ROUTINGS:
            raise ValueError(f"unknown routing {routing!r}; choose one of {list(ROUTINGS)}")
        if n < 1:
            raise ValueError("a router needs at least one backbone")
        self.routing = routing
        self.tried = [0] * n
        self.accepted = [0] * n
        self._next = 0
        self._rng = random.Random(f"router:{seed}")
        self._lock = threading.Lock()

    def weights(self) -> list[float]:
        """(accepted + 1) / (tried + 2) per backbone."""
        return [(a + 1) / (t + 2) for a, t in zip(self.accepted, self.tried)]

    def pick(self) -> int:
        with self._lock:
            if self.routing == "round_robin":
                i = self._next % len(self.tried)
                self._next += 1
            else:
                i = self._rng.choices(range(len(self.tried)), weights=self.weights())[0]
            self.tried[i] += 1
            return i

    def record(self, i: int, accepted: bool) -> None:
        with self._lock:
            self.accepted[i] += int(accepted)
