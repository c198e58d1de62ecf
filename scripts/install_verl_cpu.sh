#!/usr/bin/env bash
# Install verl 0.9.1 into .venv for CPU tests (CI) without vLLM/SGLang or a CUDA torch.
#
# verl's own dependency list pins transformers<5.11 and pulls wandb, tensorboard, ray[default]
# and, through its extras, vLLM and a CUDA torch. rods only needs verl's agent-loop,
# reward-manager, dataset, config and trainer modules to import, so verl goes in with
# --no-deps and we add exactly what those imports need. Every pip call carries a
# constraint pinning torch to the CPU build already in the venv. Idempotent: a stamp
# file skips the work when nothing changed.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
PIP="$VENV/bin/pip"
STAMP="$VENV/.verl-0.9.1"
[ -f "$STAMP" ] && exit 0
PIN="$(mktemp)"
trap 'rm -f "$PIN"' EXIT
echo 'torch==2.13.0' > "$PIN"
"$PIP" install -q --no-deps -c "$PIN" verl==0.9.1
"$PIP" install -q -c "$PIN" \
    numpy omegaconf hydra-core 'tensordict==0.10.0' transformers datasets pandas pyarrow \
    torchdata codetiming pydantic ray pillow aiohttp cachetools peft uvicorn fastapi
"$VENV/bin/python" - <<'PY'
import importlib, torch
assert torch.__version__.startswith("2.13.0"), f"torch changed to {torch.__version__}"
for m in ("verl.experimental.agent_loop", "verl.workers.reward_manager",
          "verl.utils.dataset.rl_dataset", "verl.trainer.ppo.ray_trainer"):
    importlib.import_module(m)
print("verl 0.9.1 imports OK with torch", torch.__version__)
PY
touch "$STAMP"
