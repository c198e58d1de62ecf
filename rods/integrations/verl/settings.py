"""The `rods:` section of a verl config: what rods adds to verl's own settings.

verl's trainer config (hydra/omegaconf, `verl/trainer/config/ppo_trainer.yaml`)
knows nothing about rods; our YAMLs under `configs/verl/` add one top-level
`rods:` section, read here into typed `rods.config.Section`s with the paper's
defaults (docs/design.md §7.1): per-field help and bounds, unknown keys named with
their dotted path. Every verl-side component (engine actor, agent loop,
dataset, synthesis workers) reads the same section from the trainer config it
is given, so one YAML drives the whole run.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from rods.config import Section, validate
from rods.engine.config import EngineConfig
from rods.synth.settings import SynthConfig

#: Name under which the agent loop is registered with verl (`agent_name` of every row).
AGENT_NAME = "rods_multiturn"
#: `data.train_files` value meaning "the engine's live active pool".
POOL_SOURCE = "rods://pool"
#: How validation errors name the section.
SOURCE = "verl config"


class VerlSynthesisSettings(Section):
    """`rods.synthesis`: the Ray synthesis workers and the endpoint they call."""

    num_workers: int = Field(4, ge=0, description="N Ray actors running the synthesis pipeline side by side.")
    backend: str = Field(
        "openai",
        description="rods LLM backend name: openai (any OpenAI-compatible endpoint: vLLM, SGLang) or template "
        "(model-free, for tests).",
    )
    base_url: str | None = Field(None, description="The endpoint, e.g. http://synth-host:8000/v1.")
    model: str = Field("Qwen/Qwen3-32B", description="The served model name (the paper: Qwen3-32B).")
    api_key_env: str = Field("OPENAI_API_KEY", description="Environment variable holding the key (vLLM accepts any).")
    seeds_per_call: int = Field(1, ge=1, description="Seeds handed to one worker call.")
    num_cpus: float = Field(0.5, ge=0, description="CPUs Ray reserves per worker (they mostly wait on HTTP).")
    backend_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="Further keywords for rods.llm.make_backend."
    )
    pipeline_kwargs: SynthConfig = Field(
        default_factory=SynthConfig,
        description="The synthesis pipeline's settings (ablation switches, routing), passed to `factory` as "
        "keywords.",
    )
    factory: str = Field(
        "rods.integrations.verl.synthesis:rods_pipeline",
        pattern=r"^[\w.]+:\w+$",
        description="module:function building the pipeline from (backend, **pipeline_kwargs); the default builds "
        "rods' own.",
    )

    backends: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Several synthesis models at once (an ensemble): each a mapping with backend and optionally "
        "base_url, model, backend_kwargs; replaces backend/base_url/model. Variants are spread across them by "
        "pipeline_kwargs.routing (round_robin or acceptance).",
    )

    @model_validator(mode="after")
    def _endpoint(self) -> VerlSynthesisSettings:
        if self.num_workers:
            self.backend_specs()  # fail early on a bad backend entry
        return self

    def backend_specs(self, api_key: str | None = None) -> list[tuple[str, dict[str, Any]]]:
        """(backend name, `make_backend` keywords) of every synthesis model, one unless `backends` lists several."""
        known = {"backend", "base_url", "model", "backend_kwargs"}
        entries = self.backends or [{"backend": self.backend, "base_url": self.base_url, "model": self.model,
                                     "backend_kwargs": self.backend_kwargs}]
        out = []
        for i, entry in enumerate(entries):
            where = f"backends[{i}]" if self.backends else "backend"
            unknown = sorted(set(entry) - known)
            if unknown or "backend" not in entry:
                raise ValueError(f"{where}: needs 'backend' and only {sorted(known)}, got {sorted(entry)}")
            kwargs = dict(entry.get("backend_kwargs") or {})
            if entry["backend"] == "openai":
                if not entry.get("base_url"):
                    key = f"rods.synthesis.{where}.base_url" if self.backends else "base_url"
                    raise ValueError(f"{key} is required for the openai backend (e.g. http://host:8000/v1)")
                kwargs.setdefault("base_url", entry["base_url"])
                kwargs.setdefault("model", entry.get("model") or self.model)
                if api_key is not None:
                    kwargs.setdefault("api_key", api_key)
            out.append((entry["backend"], kwargs))
        return out


class RodsVerlSettings(Section):
    """Everything rods needs inside a verl run (the `rods:` section)."""

    run_dir: str = Field(
        "runs/rods-verl",
        description="Where the engine persists its state (SQLite, events); a restarted engine actor resumes here.",
    )
    seeds: str = Field(
        "bfcl:train", description="The human seed tasks: bfcl:train / bfcl:test / bfcl:all or a tasks JSONL path."
    )
    engine: EngineConfig = Field(
        default_factory=EngineConfig,
        description="The data engine (paper defaults; K must equal actor_rollout_ref.rollout.n).",
    )
    engine_actor: str = Field("rods-engine", description="Name of the engine's Ray actor.")
    namespace: str = Field("rods", description="Ray namespace of the named actors.")
    detached: bool = Field(False, description="Keep the engine actor alive when the driver exits.")
    reward: Literal["progress", "binary"] = Field(
        "progress", description="The training reward: progress (RP, the paper) or binary."
    )
    engine_signal: Literal["progress", "binary"] | None = Field(
        None,
        description="What the engine's boundary detection observes: progress or binary (the binary-detection "
        "ablation); null: the training reward.",
    )
    tool_format: Literal["hermes", "pythonic"] = Field(
        "hermes", description="How the policy writes calls (hermes or pythonic)."
    )
    max_steps_per_turn: int = Field(20, ge=1, description="Tool-calling replies allowed per user turn (BFCL: 20).")
    synthesis: VerlSynthesisSettings | None = Field(
        None, description="The synthesis workers; null runs without synthesis (the static baseline)."
    )

    def engine_config(self) -> EngineConfig:
        """The engine's typed config."""
        return self.engine

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict (crosses Ray's process boundaries as is)."""
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> RodsVerlSettings:
        """The section from a mapping; errors name the dotted key (``rods.engine.K``)."""
        return validate(_Root, {"rods": dict(data or {})}, SOURCE).rods

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


class _Root(Section):
    """The `rods:` section under its name, so errors say ``rods.<key>``."""

    rods: RodsVerlSettings


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
