"""MCP environments: server start-up, call latency, and what the warm pool takes off a rollout's start.

For each test bed (mcp-server-git over the example repository, rods' SQLite
server as a subprocess, the same SQLite server in memory):

* server_start_ms: a cold start, from asking for a server to its tools listed
  (a process, its imports, the MCP handshake, `list_tools`);
* call_ms: one read-only tool call on a started server (git_status, read_query);
* reset_ms cold / warm: a rollout's start (`reset` + its first call answered)
  in steps of K rollouts, with no warm servers (`warm=0`: every start-up on
  the step's time) and with a pool of K warm servers that refills between
  steps (`ServerPool.prime`, standing for the policy's generation time, which
  in training is longer than a server start).

Figures are medians over `--n` rollouts, wall-clock (the servers are other
processes, so CPU time of this one would miss them); a shared machine's load
shows up in them, so read the ratios more than the absolute values.

Last line: one JSON object `{"<bed>": {"server_start_ms", "call_ms", "reset_ms_cold", "reset_ms_warm"}, ...}`
for the beds git, sqlite and sqlite_in_memory.

Usage: python bench/mcp_env.py [--n 8] [--calls 20] [--k 4] [--steps 2] [--smoke]
(the defaults are the published run, about a minute on two cores; `--smoke`: 1 start, 2 calls and
one step of 1 rollout per figure, every bed, some seconds)
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from rods.envs.mcp import MCPEnvironment, ServerPool, ServerSpec, load_manifest
from rods.envs.mcp.manifest import Manifest

ROOT = Path(__file__).resolve().parents[1]
#: --smoke: the fewest starts and calls that still time every figure of every bed.
SMOKE = {"n": 1, "calls": 2, "k": 1, "steps": 1}
READ_CALL = {"git": ("git_status", {}), "sqlite": ("read_query", {"query": "SELECT * FROM products"})}


def beds() -> dict[str, Manifest]:
    git = load_manifest(ROOT / "examples/mcp_git/manifest.yaml")
    sqlite = load_manifest(ROOT / "examples/mcp_sqlite/manifest.yaml")
    memory = sqlite.model_copy(update={"server": ServerSpec(python="rods.envs.mcp.sqlite_server:build_server")})
    return {"git": git, "sqlite": sqlite, "sqlite_in_memory": memory}


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def server_start(manifest: Manifest, n: int) -> float:
    with ServerPool(manifest, warm=0) as pool:
        times = []
        for _ in range(n):
            t = time.perf_counter()
            connection = pool.acquire()
            connection.tools()
            times.append(time.perf_counter() - t)
            pool.release(connection)
    return statistics.median(times)


def call_latency(manifest: Manifest, calls: int, warm: int = 0) -> float:
    """Median read-only call on a started server; `warm`: servers the pool keeps starting beside it."""
    name, arguments = READ_CALL[manifest.name]
    with ServerPool(manifest, warm=warm) as pool:
        env = MCPEnvironment(manifest.name, pool=pool)
        env.reset({})
        env.call(name, arguments)  # started, first-call costs paid
        times = []
        for _ in range(calls):
            t = time.perf_counter()
            env.call(name, arguments)
            times.append(time.perf_counter() - t)
        env.close()
    return statistics.median(times)


def rollout_start(manifest: Manifest, k: int, steps: int, warm: int) -> float:
    """Median start of a rollout over `steps` steps of `k` rollouts each (all k open until the step ends)."""
    name, arguments = READ_CALL[manifest.name]
    with ServerPool(manifest, warm=warm) as pool:
        times = []
        for _ in range(steps):
            pool.prime()  # the policy generating between steps: longer than a server start
            envs = []
            for _ in range(k):
                env = MCPEnvironment(manifest.name, pool=pool)
                t = time.perf_counter()
                env.reset({})
                env.call(name, arguments)
                times.append(time.perf_counter() - t)
                envs.append(env)
            for env in envs:
                env.close()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8, help="rollouts (and cold starts) per figure")
    parser.add_argument("--calls", type=int, default=20, help="calls timed per bed")
    parser.add_argument("--k", type=int, default=4, help="rollouts per step in the pool figures (warm pool = k)")
    parser.add_argument("--steps", type=int, default=2, help="steps in the pool figures")
    parser.add_argument("--smoke", action="store_true", help=f"tiny run of every code path: {SMOKE}")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)

    figures: dict[str, dict[str, float]] = {}
    for bed, manifest in beds().items():
        start = server_start(manifest, args.n)
        call = call_latency(manifest, args.calls)
        cold = rollout_start(manifest, args.k, args.steps, warm=0)
        warm = rollout_start(manifest, args.k, args.steps, warm=args.k)
        figures[bed] = {
            "server_start_ms": ms(start),
            "call_ms": ms(call),
            "reset_ms_cold": ms(cold),
            "reset_ms_warm": ms(warm),
        }

    header = f"{'bed':<18}{'server start':>14}{'call':>10}{'rollout start, no pool':>25}{'with warm pool':>17}"
    print(header)
    print("-" * len(header))
    for bed, f in figures.items():
        print(
            f"{bed:<18}{f['server_start_ms']:>11.1f} ms{f['call_ms']:>7.1f} ms"
            f"{f['reset_ms_cold']:>22.1f} ms{f['reset_ms_warm']:>14.1f} ms"
        )
    print(f"(medians, wall-clock; {args.n} cold starts, {args.calls} calls, {args.steps} steps x {args.k} rollouts)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
