"""The RODS data engine: reward-based boundary detection, seed selection, dynamic replay pool.

Pure logic (plus its own SQLite store): no trainer, LLM or environment imports.
Trainers report `(task_id, rewards)` and read the active pool at epoch boundaries.
"""

from rods.engine.config import TASK_TYPES, EngineConfig
from rods.engine.engine import DataEngine
from rods.engine.ledger import RewardLedger, TaskStats
from rods.engine.pool import ReplayPool
from rods.engine.results import EpochReport, SubmitResult
from rods.engine.select import BoundarySeedSelector
from rods.engine.state import EngineState
from rods.engine.synthesis_worker import PoolSynthesisWorker, SynthesisWorker
from rods.engine.zones import ZONES, classify, phi

__all__ = [
    "TASK_TYPES",
    "ZONES",
    "BoundarySeedSelector",
    "DataEngine",
    "EngineConfig",
    "EngineState",
    "EpochReport",
    "PoolSynthesisWorker",
    "ReplayPool",
    "RewardLedger",
    "SubmitResult",
    "SynthesisWorker",
    "TaskStats",
    "classify",
    "phi",
]
