"""The `rods:` section of a verl config: what rods adds to verl's own settings.

verl's trainer config (hydra/omegaconf, `verl/trainer/config/ppo_trainer.yaml`)
knows nothing about rods; our YAMLs under `configs/verl/` add one top-level
`rods:` section, read here into typed dataclasses with the paper's defaults
(DESIGN §3-4). Every verl-side component (engine actor, agent loop, dataset,
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
        backends: several synthesis models at once (an ensemble): each a mapping
            with ``backend`` and optionally ``base_url``, ``model``,
            ``backend_kwargs``; replaces backend/base_url/model. Variants are
            spread across them by ``pipeline_kwargs.routing`` (round_robin or
            acceptance).
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
    backends: list[dict[str, Any]] = field(default_factory=list)
    pipeline_kwargs: dict[str, Any] = field(default_factory=dict)
    factory: str = "rods.integrations.verl.synthesis:rods_pipeline"

    def __post_init__(self) -> None:
        if ":" not in self.factory:
            raise ValueError(f"rods.synthesis.factory must be 'module:function', got {self.factory!r}")
        if self.num_workers < 0:
            raise ValueError(f"rods.synthesis.num_workers must be >= 0, got {self.num_workers}")
        if self.seeds_per_call < 1:
            raise ValueError(f"rods.synthesis.seeds_per_call must be >= 1, got {self.seeds_per_call}")
        if self.num_workers:
            self.backend_specs()  # fail early on a bad backend entry

    def backend_specs(self, api_key: str | None = None) -> list[tuple[str, dict[str, Any]]]:
        """(backend name, `make_backend` keywords) of every synthesis model, one unless `backends` lists several."""
        known = {"backend", "base_url", "model", "backend_kwargs"}
        entries = self.backends or [{"backend": self.backend, "base_url": self.base_url, "model": self.model,
                                     "backend_kwargs": self.backend_kwargs}]
        out = []
        for i, entry in enumerate(entries):
            where = f"rods.synthesis.backends[{i}]" if self.backends else "rods.synthesis"
            unknown = sorted(set(entry) - known)
            if unknown or "backend" not in entry:
                raise ValueError(f"{where}: needs 'backend' and only {sorted(known)}, got {sorted(entry)}")
            kwargs = dict(entry.get("backend_kwargs") or {})
            if entry["backend"] == "openai":
                if not entry.get("base_url"):
                    raise ValueError(f"{where}.base_url is required for the openai backend (e.g. http://host:8000/v1)")
                kwargs.setdefault("base_url", entry["base_url"])
                kwargs.setdefault("model", entry.get("model") or self.model)
                if api_key is not None:
                    kwargs.setdefault("api_key", api_key)
            out.append((entry["backend"], kwargs))
        return out


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
        engine_signal: what the engine's boundary detection observes:
            ``progress`` or ``binary`` (the binary-detection ablation); None:
            the training reward.
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
    engine_signal: Literal["progress", "binary"] | None = None
    tool_format: Literal["hermes", "pythonic"] = "hermes"
    max_steps_per_turn: int = 20
    synthesis: SynthesisSettings | None = None

    def __post_init__(self) -> None:
        if self.reward not in ("progress", "binary"):
            raise ValueError(f"rods.reward must be 'progress' or 'binary', got {self.reward!r}")
        if self.engine_signal not in (None, "progress", "binary"):
            raise ValueError(f"rods.engine_signal must be 'progress', 'binary' or null, got {self.engine_signal!r}")
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
