"""`Section`: the base of every typed settings section of rods (pydantic).

Each package defines the settings it consumes next to the code that consumes
them (`rods.envs.seeds.DataSettings`, `rods.rollout.settings.RolloutSettings`,
`rods.engine.config.EngineConfig`, ...); `rods.train.config.TrainConfig` puts
them together and `rods.train.load` reads them from YAML. Every field has its
help text (`Field(description=...)`) and bounds; unknown keys are an error.
This module sits below every package, so any of them may use it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """A settings section: unknown keys rejected, assignments validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)
