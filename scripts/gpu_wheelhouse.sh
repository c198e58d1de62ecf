#!/usr/bin/env bash
# Build the wheelhouse scripts/gpu_check.sh installs on the lent GPU machine (run here, with network).
#
# That machine's image (Python 3.12, torch 2.11 + CUDA 13, transformers 5.17, accelerate,
# peft, pandas, pyarrow, rich, fsspec, huggingface-hub, xxhash, ...) has no TRL, datasets,
# pydantic or openai, and nothing can be fetched there. This downloads, without their
# dependency lists, exactly the wheels the check imports that the image lacks, at the
# versions this project's venv runs (so what runs there is what CI tests here), for
# CPython 3.12 on x86-64 Linux, into .whl/ (git-ignored), and fails if they exceed the
# 64 MiB a call may carry. bfcl-eval is the source of every task and API class.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-.whl}"
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY=python3
PACKAGES=(trl datasets dill multiprocess pydantic pydantic-core annotated-types typing-inspection
          openai jiter httpx2 httpcore2 truststore sniffio bfcl-eval
          jsonschema jsonschema-specifications referencing rpds-py attrs docstring-parser faker)
pins=()
for name in "${PACKAGES[@]}"; do
    version="$("$PY" -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p')"
    [ -n "$version" ] || { echo "gpu_wheelhouse: $name is not installed in $PY's environment" >&2; exit 1; }
    pins+=("$name==$version")
done
rm -rf "$OUT" && mkdir -p "$OUT"
platforms=()
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64 \
         manylinux_2_24_x86_64 manylinux_2_31_x86_64 manylinux_2_34_x86_64 manylinux_2_35_x86_64; do
    platforms+=(--platform "$p")
done
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${platforms[@]}" -d "$OUT" "${pins[@]}"
bytes="$(du -cb "$OUT"/*.whl | tail -1 | cut -f1)"
echo "gpu_wheelhouse: $(ls "$OUT" | wc -l) wheels, $((bytes / 1024 / 1024)) MiB in $OUT"
[ "$bytes" -lt $((64 * 1024 * 1024)) ] || { echo "gpu_wheelhouse: over the 64 MiB a call carries" >&2; exit 1; }
