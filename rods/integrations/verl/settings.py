"""The `rods:` section of a verl config: what rods adds to verl's own settings.

verl's trainer config (hydra/omegaconf, `verl/trainer/config/ppo_trainer.yaml`)
knows nothing about rods; our YAMLs under `configs/verl/` add one top-level
`rods:` section, read here into typed dataclasses with the paper's defaults
(docs/design.md §7.1). Every verl-side component (engine actor, agent loop, dataset,
synthesis workers) reads the same section from the trainer config it is given,
so one YAML drives the whole run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

from rods.engine.config import EngineConfig

#: Name under which the agent loop is registered with verl (`agent_name` of every row).
AGENT_NAME = "rods_multiturn"
#: `data.train_files` value meaning "the engine's live active pool".
POOL_SOURCE = "rods://pool"


def _build(cls: type, data: dict[str, Any] | None, where: str) -> Any:
    """Build dataclass `cls` from a mapping, naming unknown keys and where they were."""
    data = dict(data or {})
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - names)
    if unknown:
        raise ValueError(f"unknown key(s) {unknown} in {where}; known: {sorted(names)}")
    return cls(**data)


@dataclass
class SynthesisSettings:
    """Ray synthesis workers and the endpoint they call.

    Attributes:
        num_workers: N Ray actors running the synthesis pipeline side by side.
        backend: rods LLM backend name: ``openai`` (any OpenAI-compatible
            endpoint: vLLM, SGLang) or ``template`` (model-free, for tests).
        base_url: the endpoint, e.g. ``http://synth-host:8000/v1``.
        model: the served model name (the paper: Qwen3-32B).
        api_key_env: environment variable holding the key (vLLM accepts any).
        seeds_per_call: seeds handed to one worker call.
        num_cpus: CPUs Ray reserves per worker (they mostly wait on HTTP).
        backend_kwargs: further keywords for `rods.llm.make_backend`.
        pipeline_kwargs: keywords for the synthesis pipeline (ablation switches).
        factory: ``module:function`` building the pipeline from
            ``(backend, **pipeline_kwargs)``; the default builds rods' own.
    """

    num_workers: int = 4
    backend: str = "openai"
    base_url: str | None = None
    model: str = "Qwen/Qwen3-32B"
    api_key_env: str = "OPENAI_API_KEY"
    seeds_per_call: int = 1
    num_cpus: float = 0.5
    backend_kwargs: dict[str, Any] = field(default_factory=dict)
    pipeline_kwargs: dict[str, Any] = field(default_factory=dict)
    factory: str = "rods.integrations.verl.synthesis:rods_pipeline"

    def __post_init__(self) -> None:
        if ":" not in self.factory:
            raise ValueError(f"rods.synthesis.factory must be 'module:function', got {self.factory!r}")
        if self.num_workers < 0:
            raise ValueError(f"rods.synthesis.num_workers must be >= 0, got {self.num_workers}")
        if self.seeds_per_call < 1:
            raise ValueError(f"rods.synthesis.seeds_per_call must be >= 1, got {self.seeds_per_call}")
        if self.num_workers and self.backend == "openai" and not self.base_url:
            raise ValueError("rods.synthesis.base_url is required for the openai backend (e.g. http://host:8000/v1)")


@dataclass
class RodsVerlSettings:
    """Everything rods needs inside a verl run.

    Attributes:
        run_dir: where the engine persists its state (SQLite, events); a
            restarted engine actor resumes from here.
        seeds: the human seed tasks: ``bfcl:train`` / ``bfcl:test`` /
            ``bfcl:all`` or a tasks JSONL path.
        engine: `EngineConfig` fields overriding the paper defaults (K must
            equal `actor_rollout_ref.rollout.n`).
        engine_actor: name of the engine's Ray actor.
        namespace: Ray namespace of the named actors.
        detached: keep the engine actor alive when the driver exits.
        reward: the training reward: ``progress`` (RP, the paper) or ``binary``.
        tool_format: how the policy writes calls (``hermes`` or ``pythonic``).
        max_steps_per_turn: tool-calling replies allowed per user turn.
        synthesis: the synthesis workers; None runs without synthesis
            (the static baseline).
    """

    run_dir: str = "runs/rods-verl"
    seeds: str = "bfcl:train"
    engine: dict[str, Any] = field(default_factory=dict)
    engine_actor: str = "rods-engine"
    namespace: str = "rods"
    detached: bool = False
    reward: Literal["progress", "binary"] = "progress"
    tool_format: Literal["hermes", "pythonic"] = "hermes"
    max_steps_per_turn: int = 20
    synthesis: SynthesisSettings | None = None

    def __post_init__(self) -> None:
        if self.reward not in ("progress", "binary"):
            raise ValueError(f"rods.reward must be 'progress' or 'binary', got {self.reward!r}")
        if self.tool_format not in ("hermes", "pythonic"):
            raise ValueError(f"rods.tool_format must be 'hermes' or 'pythonic', got {self.tool_format!r}")
        if self.max_steps_per_turn < 1:
            raise ValueError(f"rods.max_steps_per_turn must be >= 1, got {self.max_steps_per_turn}")
        if isinstance(self.synthesis, dict):
            self.synthesis = _build(SynthesisSettings, self.synthesis, "rods.synthesis")
        self.engine_config()  # fail early on bad engine keys

    def engine_config(self) -> EngineConfig:
        """The engine's typed config (paper defaults plus `engine` overrides)."""
        try:
            return EngineConfig.from_dict(dict(self.engine))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"rods.engine: {exc}") from exc

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> RodsVerlSettings:
        return _build(cls, data, "the rods: section")

    @classmethod
    def from_trainer_config(cls, config: Any) -> RodsVerlSettings:
        """Read the `rods:` section of a verl trainer config (DictConfig or dict)."""
        section = config.get("rods") if hasattr(config, "get") else None
        if section is None:
            raise ValueError("the verl config has no `rods:` section; start from a file in configs/verl/")
        try:
            from omegaconf import OmegaConf

            if OmegaConf.is_config(section):
                section = OmegaConf.to_container(section, resolve=True)
        except ImportError:  # plain dicts need no conversion
            pass
        return cls.from_dict(section)


def check_against_verl(settings: RodsVerlSettings, config: Any) -> None:
    """Cross-checks between the rods section and verl's own settings.

    Raises:
        ValueError: naming the two settings that disagree.
    """
    n = int(config.actor_rollout_ref.rollout.n)
    K = settings.engine_config().K
    if n != K:
        raise ValueError(
            f"actor_rollout_ref.rollout.n={n} but rods.engine.K={K}: the engine keeps the latest K rewards "
            "of a task, which must be one GRPO group"
        )
    workers = int(config.data.get("dataloader_num_workers", 0))
    if workers != 0:
        raise ValueError(
            f"data.dataloader_num_workers={workers}: the rods pool dataset counts served rows in the trainer "
            "process to find epoch boundaries; set data.dataloader_num_workers=0"
        )
