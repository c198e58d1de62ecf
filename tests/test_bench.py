"""Every bench script runs, in its smoke mode, to a last stdout line that is one JSON object with its documented keys.

`make bench` runs each script with its defaults; these runs use the smallest sizes
that still take every code path (`--smoke`), so a bench cannot break unnoticed.
Each script runs as a subprocess from a scratch folder, as `python bench/NAME.py`
does (sibling imports by module name included), against this checkout's `rods`.
The figures themselves are not judged: benchmarks measure, tests do not time.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"

ENV_KEYS = ["seeds", "replay_ok", "synth_seeds_ok", "variants", "profile_match", "reward_ms_per_traj",
            "shape_changed", "gold_call_errors"]
MCP_KEYS = ["server_start_ms", "call_ms", "reset_ms_cold", "reset_ms_warm"]
RULES = ["degenerate_value", "precision", "id_as_name", "role_mismatch_flow", "superfluous_write", "unused_read",
         "no_goal"]
QUALITY_KEYS = ["seeds", "variants", "skill_overlap", "skill_overlap_reachable", "skill_in_band", "seq_changed",
                "mean_seq_distance", "query_leak", "acceptance", "accepted_per_s", "accepted"]
SOURCE_KEYS = ["tasks", "passed", "calls", "expected_errors", "failures", "seconds"]

#: script -> (arguments after the script, {key: None or the keys of its object}), as each docstring documents.
SMOKE: dict[str, tuple[list[str], dict[str, list[str] | None]]] = {
    "curriculum_sim": (["--smoke", "--out", "{tmp}"], dict.fromkeys([
        "informative_late_static", "informative_late_random", "informative_late_dapo", "informative_late_rods",
        "wasted_rollouts_dapo", "skill_static", "skill_rods"])),
    "engine_overhead": (["--smoke"], dict.fromkeys(["step_ms_800", "step_ms_100k", "epoch_ms_800", "epoch_ms_100k"])),
    # tau2 retail takes the same path as airline, at the same cost (synthesis on its database): left out.
    "envs": (["--smoke", "--envs", "bfcl", "tau2_airline", "library"],
             dict.fromkeys(["bfcl", "tau2_airline", "library"], ENV_KEYS)),
    "reward_agreement": (["--smoke"], dict.fromkeys(["trajectories", "disagreements", "agreement"])),
    "reward_speed": (["--smoke"], dict.fromkeys(["agreement", "speedup_single", "speedup_k16_cli",
                                                 "speedup_k16_cli_cold", "speedup_k16_wall", "timing"])),
    "synth_novelty": (["--smoke"], dict.fromkeys([
        "seq_changed", "fnset_changed", "mean_seq_distance", "distinct_skeletons_per_seed", "new_functions",
        "profile_match", "skill_overlap", "skill_overlap_reachable", "skill_in_band", "replay_ok", "duplicates",
        "query_leak", "acceptance_rate", "accepted_per_s"])),
    "synth_quality": (["--smoke"], {"bfcl": QUALITY_KEYS, "tau2_airline": QUALITY_KEYS, "library": QUALITY_KEYS}),
    "synth_throughput": (["--smoke"], dict.fromkeys(["accepted_per_s", "acceptance_rate", "llm_calls_per_accepted"])),
    "validate": (["--smoke", "--skip-mcp"], {"bfcl": SOURCE_KEYS, "bfcl_calls": ["calls", "call_errors", "schema_raw"],
                                             "expected_to_fail": None}),
}

#: Smoke runs that start MCP servers as processes or train a model (as the suite's own tests of those are):
#: `make test` runs them, `make test-fast` leaves them out. A name ending in _mcp is its script's MCP part.
SLOW_SMOKE: dict[str, tuple[list[str], dict[str, list[str] | None]]] = {
    # one MCP server takes the MCP path (mcp_env's smoke run starts both)
    "envs_mcp": (["--smoke", "--envs", "mcp_sqlite"], {"mcp_sqlite": [*ENV_KEYS, "server_start_ms", "call_ms"]}),
    "mcp_env": (["--smoke"], dict.fromkeys(["git", "sqlite", "sqlite_in_memory"], MCP_KEYS)),
    "train_overhead": (["--smoke"], dict.fromkeys([
        "overhead_ratio", "plain_step_s", "rods_step_s", "steps_per_arm", "engine_ms_per_step", "model",
        "closed_loop", "engine_selected", "engine_accepted", "engine_injected", "engine_produced_in_steps",
        "engine_produced"])),
    "validate_mcp": (["--smoke"], {"examples/mcp_git/seeds.jsonl": SOURCE_KEYS,
                                   "examples/mcp_sqlite/seeds.jsonl": SOURCE_KEYS}),
}

#: Bench scripts whose smoke run is a test elsewhere.
ELSEWHERE = {
    "gpu_check": "tests/scripts/test_gpu_suite.py (scripts/gpu_suite.sh at toy sizes on the CPU)",
}


def run_bench(script: Path, args: list[str], cwd: Path, timeout: float = 900) -> dict:
    """Run a bench script as `python bench/NAME.py ARGS` would, from `cwd`; its last stdout line as a JSON object."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)  # this checkout's rods
    done = subprocess.run([sys.executable, str(script), *args], cwd=cwd, env=dict(os.environ, PYTHONPATH=path),
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{script.name} exited with {done.returncode}:\n{done.stderr[-4000:]}"
    return last_json(done.stdout, script.name)


def last_json(stdout: str, name: str) -> dict:
    """The last line of a bench's output, which must be one JSON object."""
    lines = stdout.strip().splitlines()
    assert lines, f"{name} printed nothing"
    try:
        figures = json.loads(lines[-1])
    except json.JSONDecodeError as exc:
        raise AssertionError(f"{name}: the last line is not JSON: {lines[-1][:300]!r}") from exc
    assert isinstance(figures, dict), f"{name}: the last line is JSON but not an object: {lines[-1][:300]!r}"
    return figures


def check_keys(name: str, figures: dict, keys: dict[str, list[str] | None]) -> None:
    missing = [key for key in keys if key not in figures]
    assert not missing, f"{name}: the JSON line lacks {missing}; it has {sorted(figures)}"
    for key, inner in keys.items():
        if inner is not None:
            assert isinstance(figures[key], dict), f"{name}: {key} is not an object: {figures[key]!r}"
            lacking = [k for k in inner if k not in figures[key]]
            assert not lacking, f"{name}: {key} lacks {lacking}; it has {sorted(figures[key])}"


def script_of(case: str) -> Path:
    return BENCH / f"{case.removesuffix('_mcp')}.py"


def _cases(table: dict, *marks) -> list:
    return [pytest.param(name, *table[name], id=name, marks=marks) for name in sorted(table)]


@pytest.mark.parametrize(("case", "args", "keys"), _cases(SMOKE) + _cases(SLOW_SMOKE, pytest.mark.slow))
def test_bench_smoke_run_ends_with_its_json_line(case, args, keys, tmp_path):
    figures = run_bench(script_of(case), [a.replace("{tmp}", str(tmp_path)) for a in args], cwd=tmp_path)
    check_keys(case, figures, keys)


@pytest.mark.slow
def test_rollout_speed_smoke_run_against_the_sessions_vllm_server(vllm_server, tmp_path):
    """One task, K=1, one round, 4-token replies; the server is the suite's (its start-up is shared)."""
    args = ["--base-url", vllm_server, "--tasks", "1", "--k", "1", "--rounds", "1", "--max-reply-tokens", "4"]
    figures = run_bench(BENCH / "rollout_speed.py", args, cwd=tmp_path)
    check_keys("rollout_speed", figures, dict.fromkeys(["hf_rollouts_per_s", "vllm_rollouts_per_s", "speedup"]))


@pytest.fixture(scope="module")
def tiny_policy(tmp_path_factory) -> Path:
    """A 2-layer random Llama with SmolLM2's tokenizer, as bench/train_overhead.py builds it."""
    sys.path.insert(0, str(BENCH))
    try:
        from train_overhead import build_model_dir
    finally:
        sys.path.remove(str(BENCH))
    return build_model_dir("tiny", tmp_path_factory.mktemp("tiny-policy"))


@pytest.mark.slow
def test_train_memory_smoke_run_on_a_tiny_model(tiny_policy, tmp_path):
    """Two arms of one GRPO step each on the tau2 airline config, the policy swapped for a tiny random one."""
    args = ["--config", str(ROOT / "configs" / "tau2_airline.yaml"), "--arms", "1", "2", "--steps", "1",
            "--set", f"model.name_or_path={tiny_policy}", "--set", "rollout.max_reply_tokens=4",
            "--set", "data.max_slices=2"]
    figures = run_bench(BENCH / "train_memory.py", args, cwd=ROOT)
    check_keys("train_memory", figures, {"1": ["peak_gib", "step_s"], "2": ["peak_gib", "step_s"], "peak_ratio": None})


def test_every_bench_script_has_a_smoke_run():
    scripts = {p.stem for p in BENCH.glob("*.py")}
    covered = {script_of(c).stem for c in [*SMOKE, *SLOW_SMOKE]} | set(ELSEWHERE) | {"rollout_speed", "train_memory"}
    assert scripts - covered == set(), "a bench script without a smoke run here: add it to SMOKE"
    assert covered - scripts == set(), "a smoke run of a bench script that no longer exists"


@pytest.mark.parametrize("case", sorted([*SMOKE, *SLOW_SMOKE]))
def test_the_keys_checked_are_the_ones_the_script_documents(case):
    """Each key a smoke run checks is named in the script's docstring (what users read for the JSON line)."""
    script = script_of(case)
    doc = ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or ""
    keys = {**SMOKE, **SLOW_SMOKE}[case][1]
    named = [*keys, *(k for inner in keys.values() if inner for k in inner)]
    undocumented = sorted({k for k in named if k not in doc})
    assert not undocumented, f"{script.name}'s docstring does not name {undocumented}"
    assert "--smoke" in doc, f"{script.name}'s docstring does not say what --smoke runs"


def options_of(script: Path) -> set[str]:
    """The --options a bench script's argparse parser declares (read from its source, nothing imported)."""
    tree = ast.parse(script.read_text(encoding="utf-8"))
    return {arg.value for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, "attr", None) == "add_argument"
            for arg in node.args if isinstance(arg, ast.Constant) and str(arg.value).startswith("--")}


def test_bench_commands_in_the_readme_and_docs_name_real_scripts_and_options():
    """`python bench/NAME.py --option ...` as the README and docs/ spell it: the script and each option exist."""
    command = re.compile(r"bench/(\w+)\.py((?: +[^`\s]+)*)")
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found, wrong = 0, []
    for page in pages:
        for name, rest in command.findall(page.read_text(encoding="utf-8")):
            script = BENCH / f"{name}.py"
            if not script.is_file():
                wrong.append(f"{page.relative_to(ROOT)}: bench/{name}.py does not exist")
                continue
            found += 1
            unknown = set(re.findall(r"(?<!\S)--[\w-]+", rest)) - options_of(script)
            wrong += [f"{page.relative_to(ROOT)}: bench/{name}.py has no {opt}" for opt in sorted(unknown)]
    assert found >= 10
    assert not wrong, "\n".join(wrong)


def test_a_bench_whose_last_line_is_not_json_fails(tmp_path):
    """The check can fail: a script that ends with its table, or with a JSON list, is caught."""
    table = tmp_path / "table_only.py"
    table.write_text('print("arm | figure")\nprint("plain | 1.0")\n')
    with pytest.raises(AssertionError, match="not JSON"):
        run_bench(table, [], cwd=tmp_path)
    listed = tmp_path / "json_list.py"
    listed.write_text('print("[1, 2]")\n')
    with pytest.raises(AssertionError, match="not an object"):
        run_bench(listed, [], cwd=tmp_path)
    failing = tmp_path / "failing.py"
    failing.write_text('print("{}")\nraise SystemExit(3)\n')
    with pytest.raises(AssertionError, match="exited with 3"):
        run_bench(failing, [], cwd=tmp_path)
    with pytest.raises(AssertionError, match="lacks"):
        check_keys("x", {"a": 1}, {"a": None, "b": None})
