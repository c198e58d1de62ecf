"""`scripts/gpu_suite.sh`, the one prepared GPU command, at toy sizes on the CPU (``GPU_SUITE_TINY=1``).

The same five runs the lent GPU gets (the shipped loop, the 0.9B and 2B shapes, LoRA, the vLLM
checks), each with its log, gathered into one JSON: each loop learned (a gradient reached the
policy), the LoRA run trained an adapter only, and the vLLM checks say why they did not run.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def test_the_suite_runs_every_check_and_gathers_one_json(tmp_path):
    env = dict(os.environ, PYTHON=sys.executable, GPU_SUITE_TINY="1", WORK=str(tmp_path / "work"))
    done = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_suite.sh"), str(tmp_path / "out")], env=env,
                          capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    suite = json.loads((tmp_path / "out" / "gpu_suite.json").read_text())
    assert set(suite) == {"small", "llama_0.9b", "llama_2b", "lora_0.9b", "vllm"}
    assert sorted(p.name for p in (tmp_path / "out" / "logs").iterdir()) == sorted(f"{n}.log" for n in suite)
    for name in ("small", "llama_0.9b", "llama_2b", "lora_0.9b"):
        assert suite[name]["learning"] and suite[name]["device"] == "cpu", (name, suite[name])
    # The shipped loop: every group of every step reached the engine once, the boundary after step 2
    # injected synthesized tasks, and each step's time is split into its parts.
    small = suite["small"]
    assert (small["dtype"], small["steps"], small["engine_observations"]) == ("float32", 3, 3 * 2)
    assert small["injected"] >= 1 and small["seconds_per_step"] > 0 and small["rollouts_per_s"] > 0
    assert len(small["grad_norms"]) == len(small["step_splits"]) == 3 and any(g > 0 for g in small["grad_norms"])
    for split in small["step_splits"]:
        assert set(split) == {"generation", "rewards_engine", "synthesis_wait", "training"} and split["generation"] > 0
    assert small["gpu_utilization_mean"] is None and small["peak_memory_gb"] > 0
    assert suite["llama_2b"]["parameters"] > suite["llama_0.9b"]["parameters"]
    lora = suite["lora_0.9b"]
    assert lora["steps"] == 1 and lora["trainable_parameters"] < lora["parameters"] / 2
    assert suite["vllm"]["lora_vllm_sync"]["status"].startswith("not run")
    assert suite["vllm"]["trl_vllm_colocate"]["status"].startswith("not run")
    assert json.loads(done.stdout.strip().splitlines()[-1]).keys() == suite.keys()
    # The tokenizer was built on the spot, with the chat template the rollout needs.
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "work" / "small" / "model")
    text = tokenizer.apply_chat_template([{"role": "user", "content": "ls"}], tokenize=False,
                                         add_generation_prompt=True)
    assert text == "<|im_start|>user\nls<|im_end|>\n<|im_start|>assistant\n"
    assert tokenizer.decode(tokenizer("cd(folder='tmp')")["input_ids"]) == "cd(folder='tmp')"
