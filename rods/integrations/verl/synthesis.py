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
`SynthesisSettings.factory`.
"""

from __future__ import annotations

import dataclasses
import importlib
import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any

import ray

from rods.integrations.verl.settings import SynthesisSettings
from rods.tasks import Task

logger = logging.getLogger(__name__)

Sink = Callable[[list[Task]], Any]


def rods_pipeline(backend: Any, **pipeline_kwargs: Any) -> Callable[[list[Task]], list[Task]]:
    """rods' five-stage synthesis pipeline on `backend`; `pipeline_kwargs` are `SynthConfig` fields."""
    from rods.synth.pipeline import Pipeline, SynthConfig

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

        self.settings = SynthesisSettings(**settings)
        kwargs = dict(self.settings.backend_kwargs)
        if self.settings.backend == "openai":
            kwargs.setdefault("base_url", self.settings.base_url)
            kwargs.setdefault("model", self.settings.model)
            kwargs.setdefault("api_key", os.environ.get(self.settings.api_key_env, "EMPTY"))
        self.backend = make_backend(self.settings.backend, **kwargs)
        self.synthesize = load_factory(self.settings.factory)(self.backend, **self.settings.pipeline_kwargs)
        self.batches = 0

    def run(self, seeds: list[Task], step: int | None = None) -> list[Task]:
        self.batches += 1
        config = getattr(self.synthesize, "config", None)
        if step is not None and hasattr(config, "step_created"):
            config.step_created = step  # recorded in each variant's provenance
        return list(self.synthesize(list(seeds)))


class RaySynthesisWorker:
    """`SynthesisWorker` over N `SynthesisActor`s (see the module docstring)."""

    def __init__(self, settings: SynthesisSettings, *, actor_options: dict[str, Any] | None = None) -> None:
        if settings.num_workers < 1:
            raise ValueError("RaySynthesisWorker needs rods.synthesis.num_workers >= 1")
        self.settings = settings
        options = {"num_cpus": settings.num_cpus, "max_restarts": 2, "max_task_retries": 0}
        options.update(actor_options or {})
        remote = ray.remote(SynthesisActor).options(**options)
        payload = dataclasses.asdict(settings)
        self.actors = [remote.remote(payload) for _ in range(settings.num_workers)]
        self._next = 0
        self._lock = threading.Lock()
        self._sink: Sink | None = None
        self._done: list[Task] = []
        self._pending: set[Any] = set()
        self.submitted_seeds = 0
        self.produced = 0
        self.failures = 0

    def set_sink(self, sink: Sink | None) -> None:
        with self._lock:
            self._sink = sink
            buffered, self._done = self._done, []
        if sink is not None and buffered:
            sink(buffered)

    def submit(self, seeds: Sequence[Task], step: int | None = None) -> None:
        """Send seeds to the actors (round-robin, `seeds_per_call` a call); returns at once."""
        seeds = list(seeds)
        size = self.settings.seeds_per_call
        for i in range(0, len(seeds), size):
            batch = seeds[i : i + size]
            with self._lock:
                actor = self.actors[self._next % len(self.actors)]
                self._next += 1
                self.submitted_seeds += len(batch)
            ref = actor.run.remote(batch, step)
            with self._lock:
                self._pending.add(ref)
            ref.future().add_done_callback(lambda fut, ref=ref: self._finished(ref, fut))

    def _finished(self, ref: Any, future: Any) -> None:
        with self._lock:
            self._pending.discard(ref)
        try:
            tasks = list(future.result())
        except Exception:  # a failed batch must never reach the trainer
            with self._lock:
                self.failures += 1
            logger.exception("synthesis batch failed")
            return
        with self._lock:
            self.produced += len(tasks)
            sink = self._sink
            if sink is None:
                self._done.extend(tasks)
                return
        if not tasks:
            return
        try:
            sink(tasks)
        except Exception:
            with self._lock:
                self.failures += 1
            logger.exception("could not hand %d synthesized tasks to the engine", len(tasks))

    def collect(self) -> list[Task]:
        with self._lock:
            out, self._done = self._done, []
        return out

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._pending)

    def counters(self) -> dict[str, int]:
        with self._lock:
            return {
                "synthesis_submitted_seeds": self.submitted_seeds,
                "synthesis_produced": self.produced,
                "synthesis_failures": self.failures,
                "synthesis_pending": len(self._pending),
            }

    def close(self, wait: bool = True) -> None:
        if wait:
            with self._lock:
                pending = list(self._pending)
            if pending:
                ray.wait(pending, num_returns=len(pending), timeout=60)
        for actor in self.actors:
            ray.kill(actor)
        self.actors = []
