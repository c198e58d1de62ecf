"""Pytest fixtures for the test servers (registered in ``tests/conftest.py``).

* ``scripted_openai_server``: a fresh :class:`ScriptedOpenAIServer` per test;
  ``.base_url``, ``.script([...])``, ``.requests``, ``.max_in_flight``.
* ``llama_server``: one llama.cpp OpenAI-compatible server per session serving
  the embedded SmolLM2 GGUF; yields its base URL (model name: ``MODEL_ALIAS``).
  Skipped, with the reason, when llama-cpp-python is not installed
  (``make llama`` builds it; ``make test`` does so first).
* ``vllm_server``: one vLLM OpenAI-compatible server per session serving the
  embedded model (float32 safetensors copy); yields its base URL (model name:
  ``VLLM_MODEL_NAME``). Skipped, with the reason, when ``make vllm`` has not run;
  under ``make test`` (RODS_REQUIRE_SERVERS=1) that skip fails. ``$RODS_VLLM_BASE_URL``
  names a server already running instead (``PYTHONPATH=tests python -m servers.vllm``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from servers.llama import MODEL_ALIAS, LlamaServer, llama_cpp_available
from servers.openai_scripted import ScriptedOpenAIServer
from servers.vllm import VLLM_MODEL_NAME, VllmServer, vllm_missing

__all__ = ["MODEL_ALIAS", "VLLM_MODEL_NAME", "llama_server", "scripted_openai_server", "vllm_server"]


@pytest.fixture
def scripted_openai_server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as server:
        yield server


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    if not llama_cpp_available():
        pytest.skip("llama-cpp-python[server] is not installed (run `make llama`)")
    from rods.llm.embedded import embedded_gguf_path

    try:
        model = embedded_gguf_path()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    with LlamaServer(model) as server:
        yield server.base_url


@pytest.fixture(scope="session")
def vllm_server() -> Iterator[str]:
    running = os.environ.get("RODS_VLLM_BASE_URL")  # a server already up (started by hand, same flags)
    if running:
        yield running
        return
    missing = vllm_missing()
    if missing:
        pytest.skip(missing)
    with VllmServer() as server:
        yield server.base_url
