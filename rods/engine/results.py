"""What the engine's contract returns: `SubmitResult` (from `submit`) and `EpochReport` (from `on_epoch_end`).

Plain, picklable dataclasses, so a Ray actor can return them as they are.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class SubmitResult:
    """Which candidates were accepted into the queue, and why others were not."""

    accepted: list[str] = field(default_factory=list)
    rejected: dict[str, str] = field(default_factory=dict)
    dropped: list[str] = field(default_factory=list)  # older candidates pushed out of a full queue


@dataclass
class EpochReport:
    """What one epoch boundary did."""

    step: int
    epoch: int
    injected: list[str] = field(default_factory=list)
    retired: dict[str, str] = field(default_factory=dict)  # active task id -> reason
    expired: list[str] = field(default_factory=list)  # queued candidates that aged out
    active: int = 0
    active_synthetic: int = 0
    queue: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
