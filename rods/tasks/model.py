"""The task model: a superset of a BFCL V3 multi-turn entry (docs/design.md §2.1).

A task is what the trainer samples, the environment loads and the reward scores.
Everything downstream (envs, reward, engine, synth) reads this one type.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from rods.tasks.bfcl import API_CLASSES
from rods.tasks.record import MCP_MANIFEST_SUFFIXES, is_long_context

Category = Literal["base", "miss_func", "miss_param", "long_context"]
TaskType = Literal["basic", "miss_func", "miss_param"]
Origin = Literal["seed", "synthetic"]

#: The environment of BFCL's eight API classes; any other environment is named by
#: an import path `package.module:ClassName` (a Python class, docs/design.md §2.2).
BFCL_ENVIRONMENT = "bfcl"
IMPORT_PATH = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*$")


def environment_kind(environment: str) -> Literal["bfcl", "python", "mcp"]:
    """What an environment name refers to; a clear error for anything else."""
    if environment == BFCL_ENVIRONMENT:
        return "bfcl"
    if IMPORT_PATH.match(environment):
        return "python"
    if environment.endswith(MCP_MANIFEST_SUFFIXES):  # an MCP server's manifest (docs/design.md §2.8)
        return "mcp"
    raise ValueError(
        f"environment {environment!r} is neither {BFCL_ENVIRONMENT!r} nor an import path 'package.module:ClassName' "
        "nor an MCP manifest path (.yaml)"
    )

#: BFCL's user message at a turn that reveals held-out functions.
REVEAL_MESSAGE = "I have updated some more functions you can choose from. What about now?"



class Message(BaseModel):
    """One chat message of a user turn."""

    model_config = ConfigDict(extra="allow")

    role: str
    content: str


class Provenance(BaseModel):
    """Where a task came from: a human seed or a synthesized variant."""

    model_config = ConfigDict(extra="allow")

    origin: Origin = "seed"
    parent_id: str | None = None
    generation: int = 0
    step_created: int | None = None
    narrative: str | None = None
    backend: str | None = None
    attempts: int | None = None
    #: How a variant was made: "replan" (a new call sequence, requests written for it) or "recast" (its seed's
    #: plan and words in a new world, `rods.synth.recast`); None for a seed, and for variants written before.
    strategy: Literal["replan", "recast"] | None = None
    verdicts: dict[str, Any] = Field(default_factory=dict)


class Task(BaseModel):
    """One multi-turn tool-use task.

    `question[t]` holds the user messages of turn t (empty at a turn that only
    reveals held-out functions); `ground_truth[t]` the gold call strings of turn t;
    `missed_function` maps a turn index (as a string, like BFCL) to the functions
    that are hidden until that turn. `expected_errors` maps a turn index (a
    string, likewise) to the indices of that turn's gold calls that are meant to
    fail (a seed showing an error the agent must handle): validation
    (`rods.envs.validation`) then checks that they fail, and that every other
    gold call succeeds.
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    category: Category
    #: Where the tools live: "bfcl" or a Python class's import path (then also the one involved class).
    environment: str = BFCL_ENVIRONMENT
    question: list[list[Message]]
    initial_config: dict[str, dict[str, Any]] = Field(default_factory=dict)
    involved_classes: list[str] = Field(min_length=1)
    ground_truth: list[list[str]]
    missed_function: dict[str, list[str]] = Field(default_factory=dict)
    expected_errors: dict[str, list[int]] = Field(default_factory=dict)
    # Carried over from BFCL for round trips; BFCL itself does not use them.
    excluded_function: list[str] = Field(default_factory=list)
    path: list[str] = Field(default_factory=list)
    provenance: Provenance = Field(default_factory=Provenance)

    @model_validator(mode="before")
    @classmethod
    def _default_classes(cls, data: Any) -> Any:
        """A non-BFCL task may leave out `involved_classes`: its environment is its one class."""
        if isinstance(data, dict) and data.get("environment", BFCL_ENVIRONMENT) != BFCL_ENVIRONMENT:
            data.setdefault("involved_classes", [data["environment"]])
        return data

    @field_validator("environment")
    @classmethod
    def _known_environment(cls, value: str) -> str:
        environment_kind(value)
        return value

    @field_validator("involved_classes")
    @classmethod
    def _known_classes(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if info.data.get("environment", BFCL_ENVIRONMENT) == BFCL_ENVIRONMENT:
            unknown = [c for c in value if c not in API_CLASSES]
            if unknown:
                raise ValueError(f"unknown API class(es) {unknown}; expected some of {list(API_CLASSES)}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Task:
        if self.environment != BFCL_ENVIRONMENT and self.involved_classes != [self.environment]:
            raise ValueError(
                f"involved_classes {self.involved_classes} must be [{self.environment!r}], the task's environment"
            )
        unknown_keys = sorted(set(self.initial_config) - set(self.involved_classes))
        if unknown_keys and self.environment != BFCL_ENVIRONMENT:
            raise ValueError(f"initial_config has key(s) {unknown_keys} that name no involved class")
        if len(self.question) != len(self.ground_truth):
            raise ValueError(
                f"question has {len(self.question)} turns but ground_truth has {len(self.ground_truth)}"
            )
        if not self.question:
            raise ValueError("a task needs at least one turn")
        for key in self.missed_function:
            if not key.isdigit() or int(key) >= len(self.question):
                raise ValueError(f"missed_function key {key!r} is not a turn index of this task")
        for key, indices in self.expected_errors.items():
            if not key.isdigit() or int(key) >= len(self.ground_truth):
                raise ValueError(f"expected_errors key {key!r} is not a turn index of this task")
            calls = len(self.ground_truth[int(key)])
            bad = [i for i in indices if not 0 <= i < calls]
            if bad or len(set(indices)) != len(indices):
                raise ValueError(f"expected_errors[{key!r}] = {indices} must list distinct indices of turn {key}'s "
                                 f"{calls} gold call(s)")
        return self

    # -- derived views -------------------------------------------------------

    @property
    def num_turns(self) -> int:
        return len(self.question)

    @property
    def long_context(self) -> bool:
        """Whether the API classes load with BFCL's long-context flag."""
        return is_long_context(self.category, self.id)

    @property
    def task_type(self) -> TaskType:
        """The seed-selection type of docs/design.md §3.3 (basic covers base and long-context)."""
        if self.category in ("miss_func", "miss_param"):
            return self.category
        return "basic"

    @property
    def origin(self) -> Origin:
        return self.provenance.origin

    def held_out_functions(self, turn: int) -> set[str]:
        """Functions not yet available to the model at `turn` (revealed at their key turn)."""
        return {
            name
            for key, names in self.missed_function.items()
            if int(key) > turn
            for name in names
        }

    def expected_error_calls(self) -> set[tuple[int, int]]:
        """(turn, index) of every gold call the task marks as expected to fail."""
        return {(int(k), i) for k, indices in self.expected_errors.items() for i in indices}

    def reveal_turns(self) -> dict[int, list[str]]:
        """Turn index -> functions revealed at that turn."""
        return {int(k): list(v) for k, v in sorted(self.missed_function.items(), key=lambda kv: int(kv[0]))}

    def to_bfcl_entry(self) -> dict[str, Any]:
        """The entry as BFCL's checker expects it (question side)."""
        entry = self.model_dump(exclude={"provenance", "ground_truth", "category", "environment", "expected_errors"})
        if not self.missed_function:
            entry.pop("missed_function")
        return entry


#: The fields that make a task what it is; its id and provenance do not, nor `expected_errors`: it says how the
#: gold behaves (what validation checks), not what a policy is asked or how it is scored.
CONTENT_FIELDS = frozenset(
    {"category", "question", "initial_config", "involved_classes", "ground_truth", "missed_function"}
)


def content_hash(task: Task) -> str:
    """SHA-256 of a task's content (`CONTENT_FIELDS`): two tasks that differ only in id or provenance hash alike.

    The one content hash of rods: the replay pool rejects a candidate whose hash
    it already knows, and synthesis drops duplicate variants with it.
    """
    body = task.model_dump(mode="json", include=set(CONTENT_FIELDS))
    if task.environment != BFCL_ENVIRONMENT:  # BFCL tasks keep the hashes they always had
        body["environment"] = task.environment
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
