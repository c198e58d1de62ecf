"""Handing a running vLLM server the trainer's current policy: a LoRA adapter, full weights from disk, or NCCL.

Three ways, one interface (`push(model, version) -> served model name`):

* `AdapterSync` (LoRA): the adapter is saved under ``sync_dir`` and loaded under a
  new name (``rods-<run>-v<N>-<push>``) through vLLM's runtime adapter loading
  (``/v1/load_lora_adapter``; the server runs with ``--enable-lora`` and
  ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``); the previous name is unloaded. Each
  version has its own name and path, so vLLM's prefix cache (keyed on both) never
  serves blocks computed by older weights, and every reply names the version
  that sampled it. Works on CPU.
* `DiskSync` (full weights, any device): the weights (LoRA folded in) are saved
  and the server reloads them in place (``/pause``, ``/collective_rpc`` with
  ``reload_weights``, ``/reset_prefix_cache``, ``/update_weight_version``,
  ``/resume``; the server runs with ``VLLM_SERVER_DEV_MODE=1``). Trainer and
  server must see the same filesystem. Works on CPU.
* `NCCLSync` (full weights, CUDA): TRL's `VLLMClient` joins the server's NCCL
  weight-transfer group (``/init_weight_transfer_engine``) and streams every
  tensor (``/update_weights``); the server runs with ``VLLM_SERVER_DEV_MODE=1
  --weight-transfer-config '{"backend":"nccl"}'``. Needs vLLM importable in the
  trainer's environment; not run on CPU.

A server that refuses raises `SyncError`, naming the server and what it lacks.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

log = logging.getLogger(__name__)


class SyncError(RuntimeError):
    """The server could not be given the policy."""


class WeightSync(Protocol):
    """Gives a vLLM server the policy of one optimizer step."""

    kind: str

    def push(self, model: Any, version: int) -> str:
        """Serve `model` as policy `version`; returns the model name requests must use."""
        ...

    def version_of(self, served: str) -> int | None:
        """The policy version a reply's model name stands for (None: not told by the name)."""
        ...


class ServerAdmin:
    """JSON calls to a vLLM server's non-OpenAI routes (adapters, pause, weights)."""

    def __init__(self, base_url: str, timeout_s: float = 600.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.root = self.base_url.removesuffix("/v1")
        self.timeout_s = timeout_s

    def post(self, path: str, body: dict[str, Any] | None = None, *, query: dict[str, str] | None = None,
             hint: str = "") -> str:
        """POST `body` to ``root + path``; the reply's text. Raises `SyncError` on anything but HTTP 200."""
        url = self.root + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        data = json.dumps(body or {}).encode()
        request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as reply:
                return reply.read().decode(errors="replace")
        except urllib.error.HTTPError as err:
            detail = err.read().decode(errors="replace")[:500]
            raise SyncError(f"vLLM server {self.root}: POST {path} answered HTTP {err.code}: {detail}"
                            + (f" ({hint})" if hint else "")) from None
        except (urllib.error.URLError, OSError) as err:
            raise SyncError(f"vLLM server {self.root}: POST {path} failed: {err}") from None


def policy_weights(model: Any) -> Iterator[tuple[str, Any]]:
    """The full weights under the names a vLLM server loads, one tensor at a time (LoRA folded in).

    A peft model has its adapter merged for the walk and unmerged after it; adapter
    tensors and peft's wrapper prefixes are left out. A tied LM head is sent too, as
    a copy of the embedding: vLLM's in-place reload re-creates each layer's tensors,
    which unties them, so a head left out would keep its old weights (seen on vLLM
    0.32: the reload logs "ParallelLMHead: Failed to load weights").
    """
    from accelerate.utils import is_peft_model

    peft = is_peft_model(model)
    base = model.get_base_model() if peft else model
    tied = bool(getattr(base.config, "tie_word_embeddings", False))
    sent: set[str] = set()
    if peft:
        model.merge_adapter()
    try:
        for name, param in model.named_parameters():
            if peft:
                if "lora_" in name or "original_module" in name:
                    continue
                name = name.removeprefix("base_model.model.").replace(".base_layer", "")
                name = name.replace("modules_to_save.default.", "")
            sent.add(name)
            yield name, param.data
        if tied and "lm_head.weight" not in sent:
            yield "lm_head.weight", base.get_input_embeddings().weight.data
    finally:
        if peft:
            model.unmerge_adapter()


class AdapterSync:
    """LoRA adapters loaded into the running server under a new name per push (``rods-<run>-v<version>-<n>``)."""

    kind = "adapter"

    def __init__(self, admin: ServerAdmin, folder: str | Path, run: str | None = None) -> None:
        self.admin = admin
        self.folder = Path(folder)
        self.prefix = f"rods-{run or uuid.uuid4().hex[:8]}-v"
        self.pattern = re.compile(re.escape(self.prefix) + r"(\d+)-(\d+)$")
        self.loaded: str | None = None
        self.pushes = 0

    def push(self, model: Any, version: int) -> str:
        from accelerate.utils import is_peft_model

        if not is_peft_model(model):
            raise SyncError("grpo.weight_sync adapter needs a LoRA policy (model.lora.enabled)")
        self.pushes += 1
        name = f"{self.prefix}{version}-{self.pushes}"
        path = self.folder / name.removeprefix("rods-")
        model.save_pretrained(str(path), selected_adapters=["default"])
        self.admin.post("/v1/load_lora_adapter", {"lora_name": name, "lora_path": str(path.resolve())},
                        hint="start the server with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True, "
                        "--max-lora-rank at least model.lora.rank, on the same filesystem as the trainer")
        previous, self.loaded = self.loaded, name
        if previous is not None:
            self.admin.post("/v1/unload_lora_adapter", {"lora_name": previous})
            shutil.rmtree(self.folder / previous.removeprefix("rods-"), ignore_errors=True)
        return name

    def version_of(self, served: str) -> int | None:
        found = self.pattern.match(served)
        return int(found.group(1)) if found else None


class DiskSync:
    """Full weights saved to disk and reloaded in place by the server (dev-mode routes)."""

    kind = "disk"

    def __init__(self, admin: ServerAdmin, folder: str | Path, served: str) -> None:
        self.admin = admin
        self.folder = Path(folder)
        self.served = served
        self.current: Path | None = None

    def push(self, model: Any, version: int) -> str:
        from safetensors.torch import save_file

        from rods.llm.weights import float_config

        path = self.folder / f"v{version}"
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        tensors = {name: tensor.detach().to("cpu").contiguous().clone() for name, tensor in policy_weights(model)}
        save_file(tensors, str(path / "model.safetensors"), metadata={"format": "pt"})
        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        float_config(base.config).save_pretrained(path)
        hint = "start the server with VLLM_SERVER_DEV_MODE=1, on the same filesystem as the trainer"
        self.admin.post("/pause", query={"mode": "wait"}, hint=hint)
        try:
            self.admin.post("/collective_rpc", {"method": "reload_weights",
                                                "kwargs": {"weights_path": str(path.resolve())}}, hint=hint)
            self.admin.post("/reset_prefix_cache", hint=hint)
            self.admin.post("/update_weight_version", {"new_version": str(version)}, hint=hint)
        finally:
            self.admin.post("/resume")
        if self.current is not None and self.current != path:
            shutil.rmtree(self.current, ignore_errors=True)
        self.current = path
        return self.served

    def version_of(self, served: str) -> int | None:
        return None


class NCCLSync:
    """Full weights streamed over NCCL by TRL's `VLLMClient` (CUDA and vLLM in the trainer's environment)."""

    kind = "nccl"

    def __init__(self, admin: ServerAdmin, served: str) -> None:
        self.admin = admin
        self.served = served
        self.client: Any = None
        self.metadata: list[tuple[str, str, list[int]]] | None = None

    def _connect(self) -> Any:
        import torch

        if not torch.cuda.is_available():
            raise SyncError("grpo.weight_sync nccl needs a CUDA device; on CPU use disk (full weights) or adapter "
                            "(LoRA)")
        try:
            from trl.generation.vllm_client import VLLMClient
        except ImportError as err:
            raise SyncError(f"grpo.weight_sync nccl uses TRL's VLLMClient, which needs vLLM importable here: {err}") \
                from None
        client = VLLMClient(base_url=self.admin.root, connection_timeout=60.0)
        client.init_communicator(device=torch.cuda.current_device())
        return client

    def push(self, model: Any, version: int) -> str:
        if self.client is None:
            self.client = self._connect()
        if self.metadata is None:
            self.metadata = [(name, str(t.dtype).removeprefix("torch."), list(t.shape))
                             for name, t in policy_weights(model)]
        self.client.update_named_params(self.metadata, policy_weights(model))
        self.client.reset_prefix_cache()
        self.admin.post("/update_weight_version", {"new_version": str(version)})
        return self.served

    def version_of(self, served: str) -> int | None:
        return None


def make_sync(kind: str, base_url: str, served: str, folder: str | Path, run: str | None = None) -> WeightSync:
    """The `WeightSync` for ``grpo.weight_sync`` (already resolved: adapter, disk or nccl)."""
    admin = ServerAdmin(base_url)
    if kind == "adapter":
        return AdapterSync(admin, folder, run)
    if kind == "disk":
        return DiskSync(admin, folder, served)
    if kind == "nccl":
        return NCCLSync(admin, served)
    raise ValueError(f"unknown weight sync {kind!r}: adapter, disk or nccl")
