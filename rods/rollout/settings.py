"""`RolloutSettings`: the multi-turn agent loop's caps, sampling and tool description during training."""

from __future__ import annotations

from pydantic import Field

from rods.config import Section
from rods.rollout.prompt import ToolDocs


class RolloutSettings(Section):
    """The multi-turn agent loop during training (docs/design.md §2.4)."""

    max_steps_per_turn: int = Field(20, ge=1, description="Replies with tool calls allowed per user turn (BFCL: 20).")
    max_reply_tokens: int = Field(512, ge=1, description="Token cap of one assistant reply.")
    max_completion_tokens: int = Field(
        8192, ge=1, description="Token cap of a whole episode after the first prompt; the episode stops there."
    )
    temperature: float = Field(1.0, ge=0.0, description="Sampling temperature of rollouts.")
    top_p: float = Field(1.0, gt=0.0, le=1.0, description="Nucleus sampling of rollouts.")
    tool_docs: ToolDocs = Field(
        "full",
        description="How tools are described to the policy: full JSON schemas (Hermes block or native), compact "
        "signature lines with the first sentence of each description, or signatures: a short system prompt of "
        "bare signature lines (rods.rollout.prompt; ~10x shorter prompts, for the CPU demo).",
    )
    generation_batch_size: int | None = Field(
        None, ge=1,
        description="Episodes generated together in one model.generate call (default: every live episode of the "
        "step, all groups together, so a GPU sees one batch per turn).",
    )


