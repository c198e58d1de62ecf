"""Build a backend by name, importing only what that backend needs."""

from __future__ import annotations

import importlib
from typing import Any

from rods.llm.base import LLMBackend, LLMConfig

#: name -> (module, class). Imported lazily: the local backend pulls torch.
BACKENDS: dict[str, tuple[str, str]] = {
    "openai": ("rods.llm.openai_backend", "OpenAIBackend"),
    "local": ("rods.llm.local_backend", "LocalBackend"),
    "template": ("rods.llm.template", "TemplateBackend"),
}


def make_backend(name: str, **kwargs: Any) -> LLMBackend:
    """Return the backend called ``name`` built with ``kwargs``.

    Keyword arguments that are :class:`~rods.llm.base.LLMConfig` fields
    (``timeout_s``, ``max_retries``, ``max_concurrency``, ...) set the shared
    behaviour; the rest go to the backend (e.g. ``base_url``, ``model``).
    Every backend class takes ``config: LLMConfig | None`` plus its own keywords.

    Raises:
        ValueError: unknown name.
        ImportError: the backend's module (or its dependencies) is not installed.
    """
    if name not in BACKENDS:
        raise ValueError(f"unknown LLM backend {name!r}; choose one of {sorted(BACKENDS)}")
    module_name, class_name = BACKENDS[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise ImportError(f"LLM backend {name!r} is not available: module {module_name} is missing") from exc
        raise ImportError(f"LLM backend {name!r} needs {exc.name!r}, which is not installed") from exc
    cls = getattr(module, class_name, None)
    if cls is None:
        raise ImportError(f"LLM backend {name!r}: {module_name} defines no {class_name}")
    config = kwargs.pop("config", None)
    overrides, rest = LLMConfig.split(kwargs)
    if config is None:
        config = overrides
    elif any(k in kwargs for k in LLMConfig.model_fields):
        raise ValueError("pass either config= or LLMConfig fields, not both")
    return cls(config=config, **rest)
