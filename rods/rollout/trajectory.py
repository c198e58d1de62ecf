"""What one rollout leaves behind: every message, call, result and per-turn verdict.

A `Trajectory` is written as one JSON line (`to_json`) and read back with
`Trajectory.from_json`. `decoded` gives the model's calls in the shape BFCL's
`multi_turn_checker` consumes (per turn, per step with at least one call, the
call strings), so the official checker can re-score a rollout.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, Field

#: How a turn ended: a text answer, the per-turn step cap, the step cap with
#: BFCL's force-quit (the episode stops), or never reached (the episode stopped earlier).
TurnEnd = Literal["answer", "step_cap", "force_quit", "not_reached"]


class TurnRecord(BaseModel):
    """One user turn of a rollout.

    `steps[i]` are the call strings (pythonic, as `format_call` writes them) the
    model made at its i-th reply of the turn, `results[i]` their execution
    results; a reply with only unreadable calls has an empty step.
    """

    replies: list[str] = Field(default_factory=list)
    steps: list[list[str]] = Field(default_factory=list)
    results: list[list[str]] = Field(default_factory=list)
    parse_errors: list[str] = Field(default_factory=list)
    revealed: list[str] = Field(default_factory=list)
    end: TurnEnd = "not_reached"
    state_pass: bool | None = None
    exec_pass: bool | None = None

    @property
    def passed(self) -> bool:
        """r_state * r_exec of this turn (False when the turn was not scored)."""
        return bool(self.state_pass and self.exec_pass)


class Trajectory(BaseModel):
    """One finished (or cut-off) rollout of a task."""

    task_id: str
    category: str
    messages: list[dict[str, Any]]
    turns: list[TurnRecord]
    progress: float = 0.0
    binary: int = 0
    force_quit: bool = False
    sample_index: int = 0

    @property
    def decoded(self) -> list[list[list[str]]]:
        """The model's calls as BFCL's checker reads them (empty steps dropped, as BFCL does).

        After a force-quit, turns never reached are left out, so the turn count
        differs from the ground truth's and BFCL fails the entry, as it does.
        """
        return [[step for step in turn.steps if step] for turn in self.turns if turn.end != "not_reached"]

    @property
    def num_calls(self) -> int:
        return sum(len(step) for turn in self.turns for step in turn.steps)

    @property
    def num_parse_errors(self) -> int:
        return sum(len(turn.parse_errors) for turn in self.turns)

    @property
    def num_replies(self) -> int:
        return sum(len(turn.replies) for turn in self.turns)

    def to_json(self) -> str:
        """One JSON line."""
        return json.dumps(self.model_dump(mode="json"), ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> Trajectory:
        return cls.model_validate_json(line)
