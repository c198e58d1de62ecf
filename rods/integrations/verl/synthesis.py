"""Synthesis on Ray: N actors run the synthesis pipeline against an OpenAI-compatible endpoint.

`RaySynthesisWorker` implements the engine's `SynthesisWorker` protocol
(`submit`, `collect`, `set_sink`, `close`), so `DataEngine.attach_worker`
takes it like the local thread-pool worker. `submit` hands seed batches to the
`SynthesisActor`s round-robin and returns at once; when an actor finishes, a
callback passes the accepted variants to the sink (`DataEngine.submit`), which
takes its own lock. The trainer never waits for synthesis: a slow or failing
endpoint only means fewer candidates.

Each actor builds its pipeline once: an LLM backend from `rods.llm.make_backend`
(``openai`` with the endpoint's ``base_url`` and ``model``: a vLLM or SGLang
server running the synthesis model) and the pipeline from
`VerlSynthesisSettings.factory`.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable
from typing import Any

import ray

from rods.engine.synthesis_worker import AsyncSynthesisWorker
from rods.integrations.verl.settings import VerlSynthesisSettings
from rods.tasks import Task

logger = logging.getLogger(__name__)

def rods_pipeline(backend: Any, **pipeline_kwargs: Any) -> Callable[[list[Task]], list[Task]]:
    """rods' five-stage synthesis pipeline on `backend` (or a list: an ensemble).

    `pipeline_kwargs` are `SynthConfig` fields.
    """
    from rods.synth.pipeline import Pipeline
    from rods.synth.settings import SynthConfig

    return Pipeline(backend, SynthConfig(**pipeline_kwargs))


def load_factory(path: str) -> Callable[..., Callable[[list[Task]], list[Task]]]:
    """Import ``module:function``."""
    module_name, _, name = path.partition(":")
    try:
        return getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"cannot load synthesis factory {path!r}: {exc}") from exc


class SynthesisActor:
    """One synthesis process: builds backend + pipeline once, then synthesizes seed batches."""

    def __init__(self, settings: dict[str, Any]) -> None:
        from rods.llm import make_backend

        self.settings = VerlSynthesisSettings.model_validate(settings)
        specs = self.settings.backend_specs(api_key=os.environ.get(self.settings.api_key_env, "EMPTY"))
        backends = [make_backend(name, **kwargs) for name, kwargs in specs]
        self.backend = backends[0] if len(backends) == 1 else backends  # several: an ensemble pipeline
        self.synthesize = load_factory(self.settings.factory)(
            self.backend, **self.settings.pipeline_kwargs.model_dump(exclude_unset=True))
        self.batches = 0

    def run(self, seeds: list[Task], step: int | None = None) -> list[Task]:
        self.batches += 1
        config = getattr(self.synthesize, "config", None)
        if step is not None and hasattr(config, "step_created"):
            config.step_created = step  # recorded in each variant's provenance
        return list(self.synthesize(list(seeds)))


class RaySynthesisWorker(AsyncSynthesisWorker):
    """`SynthesisWorker` over N `SynthesisActor`s (see the module docstring)."""

    def __init__(self, settings: VerlSynthesisSettings, *, actor_options: dict[str, Any] | None = None) -> None:
        if settings.num_workers < 1:
            raise ValueError("RaySynthesisWorker needs rods.synthesis.num_workers >= 1")
        super().__init__()
        self.settings = settings
        options = {"num_cpus": settings.num_cpus, "max_restarts": 2, "max_task_retries": 0}
        options.update(actor_options or {})
        remote = ray.remote(SynthesisActor).options(**options)
        payload = settings.model_dump(mode="json")
        self.actors = [remote.remote(payload) for _ in range(settings.num_workers)]
        self._next = 0

    def _batches(self, seeds: list[Task]) -> list[list[Task]]:
        size = self.settings.seeds_per_call
        return [seeds[i : i + size] for i in range(0, len(seeds), size)]

    def _launch(self, batch: list[Task], step: int | None) -> tuple[Any, Any]:
        """Hand one batch to the next actor (round-robin); the ObjectRef is the handle."""
        with self._lock:
            actor = self.actors[self._next % len(self.actors)]
            self._next += 1
        ref = actor.run.remote(batch, step)
        return ref, ref.future()

    def close(self, wait: bool = True) -> None:
        if wait:
            with self._lock:
                pending = list(self._pending)
            if pending:
                ray.wait(pending, num_returns=len(pending), timeout=60)
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
