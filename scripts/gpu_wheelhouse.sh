#!/usr/bin/env bash
# Build the wheelhouse scripts/gpu_check.sh installs on the lent GPU machine (run here, with network).
#
# Usage: scripts/gpu_wheelhouse.sh [OUT]   (default .whl/, git-ignored; PYTHON picks the interpreter,
# default .venv/bin/python). The work is scripts/gpu_wheelhouse.py: it derives the wheels from
# pyproject.toml (core dependencies and the `train` extra, plus bfcl-eval as the Makefile installs it),
# followed through the installed metadata past what the machine's image already holds
# (scripts/gpu_image_packages.txt), pins them at this venv's versions, downloads them for CPython 3.12
# on x86-64 Linux, and fails over the 64 MiB a call may carry. `--list` prints the pins only.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY=python3
exec "$PY" scripts/gpu_wheelhouse.py "$@"
