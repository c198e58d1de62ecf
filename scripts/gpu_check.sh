#!/usr/bin/env bash
# The GPU check: GRPO steps through TRL on CUDA in bf16, on the lent GPU machine (bench/gpu_check.py).
#
# A tokenizer and a small random Llama are built on the spot (no hub). Checks (--check, default all):
#   loop               3 steps of rods' own training loop: agent-loop rollouts, progress rewards, the
#                      data engine, template synthesis and an epoch boundary with injection;
#   lora_vllm_sync     a LoRA policy whose rollouts come from a vLLM server given the adapter after
#                      every step; the server's and the trainer's log-probabilities must agree;
#   trl_vllm_colocate  the loop with grpo.generation trl_vllm (TRL's colocated vLLM, synced by TRL).
# The vLLM checks need vLLM in this python (or --vllm-python / --vllm-base-url); the lent machine's
# image has none and a CUDA vLLM is too large to carry, so there they print "not run: ...".
# The last line printed is one JSON object (bench/gpu_check.py's docstring lists its keys: the
# loop's time split, grad norms, peak memory, GPU utilization; the vLLM checks' figures).
# The loop must show grad_norm > 0 on some step. scripts/gpu_suite.sh runs every check in one go.
# The machine's image lacks TRL, datasets, pydantic and openai and cannot fetch them:
# build the wheelhouse here first (scripts/gpu_wheelhouse.sh -> .whl/, ~11 MiB) and carry
# it with the call (the device tool's `carry: [".whl"]`). Extra arguments go to
# bench/gpu_check.py (e.g. --k 16 --tasks-per-step 8, --check loop). `--device cpu` runs the same on CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
WHEELS="${WHEELS:-.whl}"
SITE="${SITE:-/tmp/rods-gpu-site}"
PY="${PYTHON:-python3}"
if ! "$PY" -c "import trl, datasets, pydantic, openai, bfcl_eval" 2>/dev/null; then
    ls "$WHEELS"/*.whl >/dev/null 2>&1 || { echo "gpu_check: no wheels in $WHEELS (run scripts/gpu_wheelhouse.sh and carry .whl)" >&2; exit 2; }
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" "$WHEELS"/*.whl
    export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 TOKENIZERS_PARALLELISM=false
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
"$PY" - <<'PY'
import importlib.metadata as md, sys
print("python", sys.version.split()[0], *(f"{n} {md.version(n)}" for n in ("torch", "transformers", "accelerate", "trl", "datasets", "pyarrow", "huggingface_hub")))
PY
"$PY" -c "import importlib.util as u; print('vllm', 'importable' if u.find_spec('vllm') else 'not installed')"
# --device cuda first: on the GPU machine a missing CUDA device is an error, not a CPU run (a later --device wins).
exec timeout "${GPU_CHECK_TIMEOUT:-600}" "$PY" bench/gpu_check.py --device cuda "$@"
