"""Validation over every task rods ships: BFCL's 800, the examples' seeds, the tau2 seeds (`rods tasks validate`).

For each source: tasks, tasks that pass (every gold call exists, fits its
schema and succeeds, or fails where `expected_errors` says it must; two
replays agree; RP = 1 against itself), gold calls, calls marked as expected
to fail, and the failures by kind (`rods.envs.validation.KINDS`, plus "rp"
for a ground truth scoring below 1 against itself). For BFCL also the calls
that return an error under rods' executor whatever the marks (`call_errors`),
and the calls that break BFCL's own docs when no domain exception applies
(`schema_raw`: BFCL's documented exceptions, `BfclDomain.untyped_arguments`,
switched off).

Prints a table, every failure as one line, then the calls marked as expected
to fail, and as its last line one JSON object:
`{"<source>": {"tasks", "passed", "calls", "expected_errors", "failures": {kind: n}, "seconds"}, ...,
"bfcl_calls": {"calls", "call_errors", "schema_raw"}, "expected_to_fail": [{"source", "task", "turn", "call",
"text"}]}`; a source is "bfcl" (BFCL's 800) or a task file's path from the repository root:
examples/byo_env/seeds.jsonl, examples/mcp_git/seeds.jsonl, examples/mcp_sqlite/seeds.jsonl and
warm_start.jsonl, configs/compare/seeds.jsonl, and the train.jsonl and test.jsonl of examples/tau2_*.

    python bench/validate.py [--skip-mcp] [--limit N] [--smoke]

The defaults are the published run (every task of every source); `--limit N` keeps the first N
tasks of each source, and `--smoke` (`--limit 1`, the MCP sources included) takes every code path
in seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from rods.envs.calls import parse_calls
from rods.envs.classes import method_owners
from rods.envs.schemas import function_docs
from rods.envs.validation import argument_failure, describe, error_of, tool_check, validate_task
from rods.reward import score
from rods.reward.perturb import replay
from rods.tasks import Task, load_split
from rods.tasks.task_files import read_numbered_tasks

ROOT = Path(__file__).resolve().parents[1]
#: --smoke: one task of every source, MCP servers included (their start-ups are most of the time).
SMOKE = {"limit": 1}
BFCL = "bfcl"


def sources(skip_mcp: bool, limit: int | None = None) -> dict[str, list[tuple[str, Task]]]:
    """Source name -> (where, task): BFCL's 800 (`rods tasks export --split all`), then every shipped task file;
    the first `limit` tasks of each when given."""
    out = {BFCL: [(f"bfcl:all#{i}", t) for i, t in enumerate(load_split("all"), start=1)]}
    files = sorted(ROOT.glob("examples/*/seeds.jsonl")) + [ROOT / "examples/mcp_sqlite/warm_start.jsonl",
                                                           ROOT / "configs/compare/seeds.jsonl"]
    files += sorted(ROOT.glob("examples/tau2_*/train.jsonl")) + sorted(ROOT.glob("examples/tau2_*/test.jsonl"))
    for path in files:
        if skip_mcp and "mcp_" in path.parent.name:
            continue
        name = str(path.relative_to(ROOT))
        out[name] = [(f"{name}:{line}", task) for line, task in read_numbered_tasks(path)]
    return {name: tasks[:limit] for name, tasks in out.items()}


def measure(tasks: list[tuple[str, Task]], lines: list[str], marked: list[dict]) -> dict:
    started = time.perf_counter()
    failures: Counter = Counter()
    passed = calls = expected = 0
    for where, task in tasks:
        calls += sum(len(turn) for turn in task.ground_truth)
        expected += len(task.expected_error_calls())
        marked += [{"source": where, "task": task.id, "turn": t, "call": i, "text": task.ground_truth[t][i]}
                   for t, i in sorted(task.expected_error_calls())]
        found = validate_task(task)
        for failure in found:
            failures[failure.kind] += 1
            lines.append(describe(failure, task.id, where))
        if not found:
            result = score(task, replay(task))
            if result.progress != 1.0 or result.binary != 1:
                failures["rp"] += 1
                lines.append(f"{where}: task {task.id}: the ground truth scores RP = {result.progress:.2f}")
                continue
            passed += 1
    return {"tasks": len(tasks), "passed": passed, "calls": calls, "expected_errors": expected,
            "failures": dict(failures), "seconds": round(time.perf_counter() - started, 1)}


def bfcl_calls(tasks: list[Task]) -> dict:
    """BFCL's gold calls: how many return an error under rods' executor, and how many break BFCL's own docs
    with no documented exception applied."""
    from rods.envs.contract import environment_for

    docs = {doc["name"]: tool_check(doc) for docs in function_docs(
        sorted({c for t in tasks for c in t.involved_classes})).values() for doc in docs}
    calls = errors = schema_raw = 0
    for task in tasks:
        owners = method_owners(task.involved_classes)
        env = environment_for(task)
        for turn in task.ground_truth:
            for text in turn:
                for call in parse_calls(text):
                    calls += 1
                    errors += error_of(owners, call, env.execute(call)) is not None
                    schema_raw += argument_failure(call, docs[call.name]) is not None
    return {"calls": calls, "call_errors": errors, "schema_raw": schema_raw}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-mcp", action="store_true", help="leave out the MCP examples (servers start slowly)")
    parser.add_argument("--limit", type=int, default=None, help="at most this many tasks of each source")
    parser.add_argument("--smoke", action="store_true", help=f"tiny run of every code path: {SMOKE}")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)
    sys.path.insert(0, str(ROOT / "examples" / "byo_env"))  # the guide's class, as its README exports it
    import os

    os.chdir(ROOT)  # MCP tasks name their manifest from the repository root
    figures: dict = {}
    lines: list[str] = []
    marked: list[dict] = []
    found = sources(args.skip_mcp, args.limit)
    for name, tasks in found.items():
        figures[name] = measure(tasks, lines, marked)
    figures["bfcl_calls"] = bfcl_calls([t for _, t in found[BFCL]])

    print(f"{'source':<40}{'tasks':>7}{'pass':>7}{'calls':>8}{'expected':>10}  failures")
    for name, f in figures.items():
        if name != "bfcl_calls":
            said = ", ".join(f"{k} {v}" for k, v in sorted(f["failures"].items())) or "-"
            print(f"{name:<40}{f['tasks']:>7}{f['passed']:>7}{f['calls']:>8}{f['expected_errors']:>10}  {said}")
    b = figures["bfcl_calls"]
    print(f"BFCL gold calls: {b['calls']}; returning an error under rods' executor: {b['call_errors']}; "
          f"breaking BFCL's own docs with no documented exception: {b['schema_raw']}")
    for line in lines:
        print(line)
    print(f"calls marked as expected to fail: {len(marked)}")
    for m in marked:
        print(f"  {m['source']}: task {m['task']}: turn {m['turn']}, call {m['call']} {m['text'][:90]}")
    figures["expected_to_fail"] = marked
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
