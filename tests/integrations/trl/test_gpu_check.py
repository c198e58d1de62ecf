"""`scripts/gpu_check.sh` (the check for a lent GPU machine) runs end to end on CPU, as far as CPU allows.

The same code path as on the GPU machine but `--device cpu`: a tokenizer trained
on the spot, a random Llama, 3 GRPO steps of the closed loop with the engine and
template synthesis; the last line is the JSON the GPU run reports. Its LoRA check
with a synced vLLM server runs against the suite's vLLM server (the embedded
model); its check of TRL's colocated vLLM reports that it needs CUDA.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]


def test_gpu_check_runs_on_cpu_and_reports_its_figures(tmp_path):
    env = dict(os.environ, PYTHON=sys.executable, GPU_CHECK_TIMEOUT="900")
    cmd = ["bash", str(ROOT / "scripts" / "gpu_check.sh"), "--device", "cpu", "--check", "loop", "--k", "2",
           "--tasks-per-step", "2", "--reply-tokens", "4", "--hidden", "32", "--layers", "1", "--out", str(tmp_path)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(result) == {"device", "dtype", "steps", "seconds_per_step", "rollouts_per_s", "engine_observations",
                           "injected", "seconds"}
    assert (result["device"], result["dtype"], result["steps"]) == ("cpu", "float32", 3)
    assert result["engine_observations"] == 3 * 2  # every group of every step, once
    assert result["injected"] >= 1  # the epoch boundary after step 2 injected synthesized tasks
    assert result["seconds_per_step"] > 0 and result["rollouts_per_s"] > 0
    # the tokenizer was built on the spot, with the chat template the rollout needs
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "model")
    text = tokenizer.apply_chat_template([{"role": "user", "content": "ls"}], tokenize=False,
                                         add_generation_prompt=True)
    assert text == "<|im_start|>user\nls<|im_end|>\n<|im_start|>assistant\n"
    assert tokenizer.decode(tokenizer("cd(folder='tmp')")["input_ids"]) == "cd(folder='tmp')"


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
