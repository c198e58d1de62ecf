"""Environments side by side: seeds, replay, template synthesis and reward cost per environment.

For each environment (BFCL's train split, tau2-bench's airline and retail seeds, the library of
examples/byo_env, the MCP servers of examples/mcp_git and examples/mcp_sqlite):

* seeds: the seed tasks measured (`--bfcl-seeds` of BFCL's train split, spread over categories; the first
  `--limit` seeds of every other environment);
* replay_ok: seeds whose ground truth, replayed on a fresh environment, scores RP = 1 and the binary verdict 1;
* synth_seeds_ok: seeds from which the template pipeline (`rods synth --llm template`) accepts at least one
  variant (`--per-seed` attempts each);
* variants: accepted variants;
* profile_match: the share of accepted variants whose complexity profile, recomputed here from the variant
  executed on its own environment, matches its seed's;
* reward_ms_per_traj: CPU milliseconds to score one trajectory, over K trajectories per seed (a replay plus
  perturbed ones, as `bench/reward_speed.py` makes them), the ground-truth cache cleared per seed;
* shape_changed: accepted variants whose initial state's key paths or value types differ from their seed's
  (its config with its classes' defaults merged in, as synthesis starts from it;
  `rods.synth.values.config_shape`: ids and names that key a map written `*`); must be 0;
* gold_call_errors: gold calls of accepted variants that fail on a fresh environment by their domain's error
  convention (`rods.envs.domain.Domain.error_of`); must be 0.

For the MCP environments also (medians, wall-clock; measured by bench/mcp_env.py's code):
server_start_ms (a rollout's server ready: `no_pool` a cold start, `warm_pool` taken from a primed pool of K)
and call_ms (a read-only call: `no_pool`, `warm_pool` with K servers starting beside it).

Prints a table, then as its last line one JSON object:
`{"<env>": {"seeds", "replay_ok", "synth_seeds_ok", "variants", "profile_match", "reward_ms_per_traj",
"shape_changed", "gold_call_errors", "strategies": {<strategy>: [tried, accepted]}, "recast_unavailable"}, ...}`
(MCP environments add "server_start_ms" and "call_ms", each {"no_pool", "warm_pool"}); the environments are
bfcl, tau2_airline, tau2_retail, mcp_git, mcp_sqlite and library.

    python bench/envs.py [--bfcl-seeds 8] [--per-seed 1] [--k 4] [--limit 3] [--envs mcp_git mcp_sqlite library]
    python bench/envs.py --smoke

The defaults (8 BFCL seeds, 3 of every other environment, one attempt each) take a few minutes on two
cores. The published figures (docs/results/environments.md) take every seed (`--limit 0`) and, for
tau2, half an hour or more:

    python bench/envs.py --envs bfcl tau2_airline tau2_retail --bfcl-seeds 8 --per-seed 2 --k 4 --limit 0
    python bench/envs.py --envs mcp_git mcp_sqlite --per-seed 1 --k 4 --limit 0

`--smoke` (one seed of every environment, one attempt, the fewest timings) takes every code path.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from rods.llm import make_backend
from rods.reward import clear_ground_truth_cache, score
from rods.reward.perturb import KINDS, perturb, replay
from rods.synth.initial_config import materialize_config
from rods.synth.pipeline import Pipeline
from rods.synth.profile import profile_of, trace_task
from rods.synth.settings import SynthConfig
from rods.synth.value_kinds import config_shape
from rods.tasks import CATEGORIES, Task, load_split, read_tasks

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
#: The MCP examples (examples/mcp_<bed>), as bench/mcp_env.py names its beds.
MCP_BEDS = ("git", "sqlite")
#: --smoke: one seed of every environment, one attempt, the fewest timings.
SMOKE = {"bfcl_seeds": 4, "per_seed": 1, "k": 2, "limit": 1, "starts": 1, "calls": 2}


def bfcl_seeds(n: int) -> list[Task]:
    train = load_split("train")
    per = max(1, n // len(CATEGORIES))
    return [t for c in CATEGORIES for t in [x for x in train if x.category == c][:per]]


def tau2_seeds(domain: str) -> list[Task]:
    """The committed seed files (train and test) of a tau2 domain."""
    folder = EXAMPLES / f"tau2_{domain}"
    return [t for f in sorted(folder.glob("*.jsonl")) for t in read_tasks(f)]


def library_seeds() -> list[Task]:
    """The bring-your-own-environment guide's library seeds (`library:Library`, examples/byo_env)."""
    import sys

    sys.path.insert(0, str(EXAMPLES / "byo_env"))
    return read_tasks(EXAMPLES / "byo_env" / "seeds.jsonl")


def mcp_seeds(bed: str) -> list[Task]:
    """The seed file of an MCP example (its tasks name the manifest from the repository root)."""
    return read_tasks(EXAMPLES / f"mcp_{bed}" / "seeds.jsonl")


def server_figures(bed: str, k: int, n: int, calls: int) -> dict:
    """server_start_ms and call_ms of an MCP bed, with and without the warm pool (bench/mcp_env.py)."""
    from mcp_env import beds, call_latency, ms, rollout_start, server_start

    manifest = beds()[bed]
    return {"server_start_ms": {"no_pool": ms(server_start(manifest, n)),
                                "warm_pool": ms(rollout_start(manifest, k, max(1, n // k), warm=k))},
            "call_ms": {"no_pool": ms(call_latency(manifest, calls)),
                        "warm_pool": ms(call_latency(manifest, calls, warm=k))}}


def print_server_table(figures: dict) -> None:
    rows = {name: f for name, f in figures.items() if "server_start_ms" in f}
    if not rows:
        return
    print(f"{'MCP server':<14}{'start, no pool':>16}{'warm pool':>12}{'call, no pool':>16}{'warm pool':>12}")
    for name, f in rows.items():
        start, call = f["server_start_ms"], f["call_ms"]
        print(f"{name:<14}{start['no_pool']:>13.1f} ms{start['warm_pool']:>9.1f} ms"
              f"{call['no_pool']:>13.1f} ms{call['warm_pool']:>9.1f} ms")


def replays(task: Task) -> bool:
    result = score(task, replay(task))
    return result.progress == 1.0 and result.binary == 1


def trajectories(task: Task, k: int) -> list:
    """K trajectories: the ground truth's replay, then perturbations cycling through the kinds."""
    out, seed = [replay(task)], 0
    kinds = [kind for kind in KINDS if kind not in ("replay", "truncated")]
    while len(out) < k and seed < 10 * k:
        steps = perturb(task, kinds[seed % len(kinds)], seed)
        seed += 1
        if steps is not None:
            out.append(steps)
    return out


def cpu_ms(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return 1000 * (time.process_time() - start)


def measure(name: str, seeds: list[Task], per_seed: int, k: int, workers: int) -> dict:
    replay_ok = sum(replays(t) for t in seeds)

    ms, count = 0.0, 0
    for task in seeds:
        clear_ground_truth_cache()
        trajs = trajectories(task, k)
        ms += cpu_ms(lambda task=task, trajs=trajs: [score(task, steps) for steps in trajs])
        count += len(trajs)

    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=per_seed, workers=workers))
    start = time.perf_counter()
    accepted = pipeline(seeds)
    seconds = time.perf_counter() - start
    by_id = {t.id: t for t in seeds}
    matched = shape_changed = call_errors = 0
    for variant in accepted:
        parent = by_id.get(variant.provenance.parent_id or "")
        matched += parent is not None and profile_of(variant).matches(profile_of(parent))
        shape_changed += parent is not None and shapes(variant.initial_config) != shapes(materialize_config(parent))
        call_errors += len(trace_task(variant).errors)
    report = pipeline.report()
    rejections = ", ".join(f"{k} {v}" for k, v in sorted(report["rejections"].items(), key=lambda kv: -kv[1])[:4])
    print(f"  {name}: synthesis {seconds:.0f}s; top rejections: {rejections or 'none'}")
    print(f"  {name}: {strategies_line(report)}")
    return {
        "seeds": len(seeds),
        "replay_ok": replay_ok,
        "synth_seeds_ok": len({t.provenance.parent_id for t in accepted}),
        "variants": len(accepted),
        "profile_match": round(matched / len(accepted), 4) if accepted else None,
        "reward_ms_per_traj": round(ms / max(1, count), 2),
        "shape_changed": shape_changed,
        "gold_call_errors": call_errors,
        "strategies": {k: [row["tried"], row["accepted"]] for k, row in report["strategies"].items()},
        "recast_unavailable": report["recast_unavailable"],
    }


def strategies_line(report: dict) -> str:
    """Variants tried and accepted per strategy (`rods.synth.recast`), and a recast's rejections."""
    rows = ", ".join(f"{k} {row['accepted']}/{row['tried']}" for k, row in report["strategies"].items())
    recast = ", ".join(f"{k} {v}" for k, v in sorted(report["rejections"].items(), key=lambda kv: -kv[1])
                       if k.startswith("recast:"))
    return (f"accepted/tried by strategy: {rows or 'none'} ({report['recast_unavailable']} drawn recasts "
            f"re-planned: nothing to recast); recast rejections: {recast or 'none'}")


def shapes(config: dict) -> dict:
    """Each class's state shape (`config_shape`), the replayed history of a turn slice left out."""
    from rods.envs.classes import REPLAY_KEY

    return {cls: config_shape({k: v for k, v in state.items() if k != REPLAY_KEY}) for cls, state in config.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bfcl-seeds", type=int, default=8, help="BFCL train seeds, spread over the categories")
    parser.add_argument("--per-seed", type=int, default=1, help="template synthesis attempts per seed")
    parser.add_argument("--k", type=int, default=4, help="trajectories per seed for the reward timing")
    parser.add_argument("--limit", type=int, default=3,
                        help="at most this many seeds of each environment but BFCL (0: all of them)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--envs", nargs="+", default=None, help="measure only these environments (names as above)")
    parser.add_argument("--starts", type=int, default=4, help="MCP server starts timed per figure")
    parser.add_argument("--calls", type=int, default=20, help="MCP calls timed per figure")
    parser.add_argument("--smoke", action="store_true", help=f"tiny run of every code path: {SMOKE}")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)

    envs = {"bfcl": bfcl_seeds(args.bfcl_seeds), "tau2_airline": tau2_seeds("airline"),
            "tau2_retail": tau2_seeds("retail")}
    envs |= {f"mcp_{bed}": mcp_seeds(bed) for bed in MCP_BEDS} | {"library": library_seeds()}
    envs = {name: seeds for name, seeds in envs.items() if args.envs is None or name in args.envs}
    os.chdir(EXAMPLES.parent)  # MCP tasks name their manifest from the repository root
    figures = {}
    for name, seeds in envs.items():
        if name != "bfcl" and args.limit:
            seeds = seeds[: args.limit]
        figures[name] = measure(name, seeds, args.per_seed, args.k, args.workers)
    for bed in MCP_BEDS:
        if f"mcp_{bed}" in figures:
            figures[f"mcp_{bed}"] |= server_figures(bed, args.k, args.starts, args.calls)

    print(f"{'environment':<14}{'seeds':>7}{'replay ok':>11}{'synth ok':>10}{'variants':>10}"
          f"{'profile':>9}{'reward ms/traj':>16}{'shape changed':>15}{'call errors':>13}")
    for name, f in figures.items():
        profile = "-" if f["profile_match"] is None else f"{f['profile_match']:.0%}"
        print(f"{name:<14}{f['seeds']:>7}{f['replay_ok']:>11}{f['synth_seeds_ok']:>10}{f['variants']:>10}"
              f"{profile:>9}{f['reward_ms_per_traj']:>16.1f}{f['shape_changed']:>15}{f['gold_call_errors']:>13}")
    print_server_table(figures)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
