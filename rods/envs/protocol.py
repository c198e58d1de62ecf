"""The environment protocol: one instance is one rollout's tools and state (docs/design.md §2.2).

Everything above `rods.envs` (reward, rollout, synthesis, evaluation) reaches
tools through this contract, so an environment is anything that can

* list its tools (`tools()`: name, description, JSON-schema parameters, and
  whether the tool only reads or may write the state),
* start from a task's initial configuration (`reset(initial_config, seed)`),
* run one call (`call(name, arguments)`), returning the result as text; a
  failure is a result that starts with `ERROR_PREFIX`, never an exception
  (model output is untrusted input),
* show its state (`snapshot()`: canonical JSON, volatile parts left out), and
* release what it holds (`close()`).

Implementations: the BFCL API classes and user Python classes
(`rods.envs.environment.ToolEnvironment`); MCP servers come next.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

#: How a tool touches the state: declared by the environment, or seen in executions.
Effect = Literal["read", "write", "unknown"]
EFFECTS: tuple[Effect, ...] = ("read", "write", "unknown")

#: The start of every error result (BFCL's wording, kept for all environments).
ERROR_PREFIX = "Error during execution: "


@dataclass(frozen=True)
class ToolSpec:
    """One tool as a model and the synthesis see it."""

    name: str
    description: str
    #: A JSON schema of type "object" (properties, required).
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    effect: Effect = "unknown"
    #: What owns the tool: a BFCL API class, a Python environment class, a server.
    group: str = ""

    def __post_init__(self) -> None:
        if self.effect not in EFFECTS:
            raise ValueError(f"tool {self.name!r}: effect must be one of {EFFECTS}, not {self.effect!r}")

    @property
    def required(self) -> list[str]:
        return list(self.parameters.get("required", []))

    def openai_schema(self) -> dict[str, Any]:
        """The tool as an OpenAI `tools` entry."""
        params = dict(self.parameters)
        params["type"] = "object"
        params.setdefault("properties", {})
        function = {"name": self.name, "description": self.description, "parameters": params}
        return {"type": "function", "function": function}


def canonical_json(value: Any) -> str:
    """The one text form of a snapshot: sorted keys, no whitespace, so equal states read alike."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


class Environment(ABC):
    """One rollout's tools and state (see the module docstring for the contract)."""

    @abstractmethod
    def tools(self) -> list[ToolSpec]:
        """Every tool this environment can run (hiding held-out tools is the prompt's job)."""

    @abstractmethod
    def reset(self, initial_config: Mapping[str, Any], seed: int | None = None) -> None:
        """Start over from a task's initial configuration."""

    @abstractmethod
    def call(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Run one tool call; its result as text, or an `ERROR_PREFIX` message. Never raises for bad input."""

    @abstractmethod
    def snapshot(self) -> Any:
        """The state as canonical JSON data (dicts, lists, scalars), volatile parts left out."""

    def close(self) -> None:  # noqa: B027 - most environments hold nothing to release
        """Release processes, files or connections this environment holds."""

    def __enter__(self) -> Environment:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
