#!/usr/bin/env bash
# Launch a rods experiment on verl + Ray.
#
# Single node (8 GPUs):
#   RODS_SYNTH_URL=http://synth-host:8000/v1 scripts/launch_verl.sh paper_qwen3_4b [hydra overrides...]
#
# Multi-node (N nodes x 8 GPUs) with `ray start`:
#   on the head node:     scripts/launch_verl.sh ray-head
#   on every other node:  scripts/launch_verl.sh ray-worker <head-ip>
#   then, on the head:    NNODES=N scripts/launch_verl.sh paper_qwen3_4b [overrides...]
#
# EXPERIMENT is a config in configs/verl/ without .yaml (paper_qwen3_4b, ablations/<name>,
# mirroring configs/ablations/). Environment: NNODES (1), GPUS_PER_NODE (8), RAY_PORT (6379),
# RODS_SYNTH_URL / RODS_SYNTH_MODEL (the synthesis endpoint), PYTHON (python).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python}"
NNODES="${NNODES:-1}"
GPUS_PER_NODE="${GPUS_PER_NODE:-8}"
RAY_PORT="${RAY_PORT:-6379}"

usage() { sed -n '2,16p' "$0"; exit "${1:-0}"; }
[ $# -ge 1 ] || usage 1

case "$1" in
  -h|--help) usage 0 ;;
  ray-head)
    exec ray start --head --port="$RAY_PORT" --num-gpus="$GPUS_PER_NODE" --dashboard-host=0.0.0.0 ;;
  ray-worker)
    [ $# -ge 2 ] || { echo "usage: $0 ray-worker <head-ip>" >&2; exit 1; }
    exec ray start --address="$2:$RAY_PORT" --num-gpus="$GPUS_PER_NODE" ;;
esac

EXPERIMENT="$1"; shift
CONFIG="$ROOT/configs/verl/$EXPERIMENT.yaml"
[ -f "$CONFIG" ] || { echo "no experiment $EXPERIMENT: $CONFIG does not exist" >&2; ls "$ROOT/configs/verl" >&2; exit 1; }

# Multi-node runs join the cluster started with `ray start`; one node starts its own.
if [ "$NNODES" -gt 1 ]; then
  export RAY_ADDRESS="${RAY_ADDRESS:-auto}"
fi

# Synthesis needs its endpoint before the first step selects seeds (the static baseline has none).
if [ "$EXPERIMENT" != "ablations/static_pool" ]; then
  URL="${RODS_SYNTH_URL:-http://localhost:8000/v1}"
  if ! "$PYTHON" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + '/models', timeout=5)" "$URL" 2>/dev/null; then
    echo "warning: the synthesis endpoint $URL/models does not answer; start vLLM/SGLang first (docs/guides/training.md, "Start the synthesis model server")." >&2
    echo "         training still runs; selected seeds fail to synthesize until it is up." >&2
  fi
fi

# Absolute paths: Ray workers on other nodes do not share this shell's working directory
# (multi-node runs need this checkout, and rods installed, at the same path on every node).
cd "$ROOT"
exec "$PYTHON" -m verl.trainer.main_ppo \
  --config-path="$ROOT/configs/verl" --config-name="$EXPERIMENT" \
  trainer.nnodes="$NNODES" trainer.n_gpus_per_node="$GPUS_PER_NODE" \
  actor_rollout_ref.rollout.agent.agent_loop_config_path="$ROOT/configs/verl/agent_loops.yaml" \
  rods.run_dir="$ROOT/runs/verl/$EXPERIMENT" \
  "$@"
