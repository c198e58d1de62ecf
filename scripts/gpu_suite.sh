#!/usr/bin/env bash
# The one prepared command for a lent GPU machine (about 8 minutes of an H200): every GPU check in one go.
#
#   bash scripts/gpu_suite.sh [OUT]        (OUT: default $OUT, else runs/gpu-suite)
#
# Runs scripts/gpu_check.sh's loop on random Llamas with rods' defaults (micro-batches from the
# token budget, gradient checkpointing by size; nothing set by hand), then the vLLM checks:
#   small       hidden 256, 4 layers, 4 tasks x K = 8, 32-token replies (the shipped check)
#   llama_0.9b  hidden 2048, 24 layers, 8 tasks x K = 16, 64-token replies (ran out of memory before)
#   llama_2b    hidden 2560, 36 layers, the same step
#   lora_0.9b   the 0.9B shape training a rank-16 LoRA adapter
#   vllm        LoRA with a synced vLLM server, and TRL's colocated vLLM ("not run" without vLLM)
# Each writes OUT/logs/<name>.log; OUT/gpu_suite.json gathers each one's last-line JSON (or its exit
# code and last lines when it failed). Build the wheelhouse first here (scripts/gpu_wheelhouse.sh)
# and carry .whl. Every run has its own time limit, so one stuck run cannot take the others' time.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-${OUT:-runs/gpu-suite}}"
WORK="${WORK:-/tmp/rods-gpu-suite}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT/logs" "$WORK"
if ! "$PY" -c "import trl, datasets, pydantic, openai, bfcl_eval" 2>/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$WORK/site" .whl/*.whl \
        || { echo "gpu_suite: could not install the wheelhouse (.whl)" >&2; exit 2; }
    export PYTHONPATH="$WORK/site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHON="$PY"

run() {  # name, seconds, gpu_check arguments...
    local name="$1" limit="${GPU_SUITE_TINY:+600}"; limit="${limit:-$2}"; shift 2  # toy runs: a busy CPU's limit
    local start=$SECONDS
    GPU_CHECK_TIMEOUT="$limit" bash scripts/gpu_check.sh --out "$WORK/$name" "$@" >"$OUT/logs/$name.log" 2>&1
    echo "$name: exit $? after $((SECONDS - start)) s"
}
SHAPE_STEP=(--k 16 --tasks-per-step 8 --reply-tokens 64)
SMALL=() M09=(--hidden 2048 --layers 24) M2=(--hidden 2560 --layers 36)
if [ -n "${GPU_SUITE_TINY:-}" ]; then  # the same runs at toy sizes on the CPU (tests/scripts/test_gpu_suite.py)
    SMALL=(--device cpu --k 2 --tasks-per-step 2 --reply-tokens 4) SHAPE_STEP=("${SMALL[@]}" --steps 1)
    M09=(--hidden 32 --layers 1) M2=(--hidden 48 --layers 2)
fi
run small 60 --check loop "${SMALL[@]}"
run llama_0.9b 130 --check loop "${M09[@]}" "${SHAPE_STEP[@]}"
run llama_2b 150 --check loop "${M2[@]}" "${SHAPE_STEP[@]}"
run lora_0.9b 90 --check loop --lora --steps 2 "${M09[@]}" "${SHAPE_STEP[@]}"
run vllm 50 --check lora_vllm_sync --check trl_vllm_colocate "${SMALL[@]}"

"$PY" - "$OUT" <<'PY'
import json, pathlib, sys

out = pathlib.Path(sys.argv[1])
suite = {}
for log in sorted((out / "logs").glob("*.log")):
    lines = log.read_text(errors="replace").splitlines()
    try:
        suite[log.stem] = json.loads(lines[-1])
    except (IndexError, ValueError):
        suite[log.stem] = {"status": "failed", "last_lines": lines[-15:]}
(out / "gpu_suite.json").write_text(json.dumps(suite, indent=1))
print(json.dumps({name: {k: v for k, v in r.items() if k not in ("step_splits", "last_lines")} for name, r in suite.items()}))
PY
