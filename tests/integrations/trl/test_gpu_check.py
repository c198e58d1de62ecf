"""`scripts/gpu_check.sh`'s vLLM checks on CPU, as far as CPU allows.

Its LoRA check with a synced vLLM server runs against the suite's vLLM server (the
embedded model); its check of TRL's colocated vLLM reports that it needs CUDA. The
loop itself runs in tests/scripts/test_gpu_suite.py, inside the prepared GPU command.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]


def test_gpu_checks_of_vllm_on_cpu(tmp_path, vllm_server):
    from servers.vllm import VLLM_MODEL_NAME, vllm_model_dir

    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHON=sys.executable, GPU_CHECK_TIMEOUT="900")
    cmd = ["bash", str(ROOT / "scripts" / "gpu_check.sh"), "--device", "cpu", "--check", "lora_vllm_sync",
           "--check", "trl_vllm_colocate", "--model", str(vllm_model_dir()), "--vllm-base-url", vllm_server,
           "--vllm-model", VLLM_MODEL_NAME, "--k", "2", "--tasks-per-step", "1", "--steps", "1",
           "--reply-tokens", "4", "--out", str(tmp_path)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(result) == {"lora_vllm_sync", "trl_vllm_colocate"}
    sync = result["lora_vllm_sync"]
    assert sync["synced"] and sync["steps"] == sync["served_version"] == 1 and sync["syncs"] == 2, sync
    assert sync["trainer_vs_server"] < 0.05 and sync["policy_lag_max"] == 0, sync
    assert result["trl_vllm_colocate"] == {"status": "not run: TRL's colocated vLLM needs a CUDA device"}
