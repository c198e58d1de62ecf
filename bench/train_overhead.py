"""Training overhead of the data engine: plain TRL GRPO vs GRPO with the rods engine + async synthesis.

Same model (a small random Llama with SmolLM2's tokenizer, or `--model embedded`),
same seed tasks, same rollout caps, in one process. Rounds alternate the two
arms (plain, rods, plain, rods, ...) so machine load hits both alike; each round
trains a fresh copy of the same initial weights for `--steps` optimizer steps.
The rods arm runs everything the engine does during training: every group's
rewards observed, seeds selected after every step, synthesis (template backend)
in its own process (as `rods train` runs it), and epoch boundaries
(retire/inject) every 2 steps. Both arms train on the same task stream unless `--closed-loop` is given (then the
rods arm trains on its live pool, whose injected tasks have other lengths, so
the ratio also carries the curriculum's own cost).

The seeds mix miss_param tasks whose first turn has empty ground truth (a
random model scores 1/N on them: boundary) with one-call turn slices (hard),
so selection and synthesis really run. Replies are cut at a fixed length, so
both arms do the same model work.

Prints a table, then as its last line one JSON object: {"overhead_ratio", "plain_step_s",
"rods_step_s", "steps_per_arm", "engine_ms_per_step", "model", "closed_loop", "engine_selected",
"engine_accepted", "engine_injected", "engine_produced_in_steps", "engine_produced"} (candidates the
niced synthesis process delivered during the timed steps, and in all once it was drained, untimed);
overhead_ratio is the median rods step time / the median plain step time (the first step of every
round is a warm-up and is dropped; the synthesis process has started before the first step, as a
run starts it while it loads the policy).

    python bench/train_overhead.py [--steps 5] [--rounds 2] [--model tiny|embedded] [--closed-loop] [--smoke]

The defaults are the published run (a few minutes on two cores); `--smoke` (1 round of 2 steps per
arm, so one timed step and one epoch boundary each) takes every code path.
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

#: --smoke: one round of two steps: a warm-up step, a timed one, and an epoch boundary after it.
SMOKE = {"steps": 2, "rounds": 1}


def seed_tasks(n_boundary: int, n_hard: int):
    from rods.envs.slices import turn_slices
    from rods.tasks import load_split

    train = load_split("train")
    boundary = [t for t in train if t.category == "miss_param" and t.num_turns == 3 and not t.ground_truth[0]]
    return boundary[:n_boundary] + turn_slices(train, max_calls=1)[:n_hard]


def build_model_dir(kind: str, folder: Path) -> Path:
    """Save the initial policy once; every round loads the same weights from here."""
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from rods.llm.embedded import embedded_gguf_path

    gguf = embedded_gguf_path()
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    if kind == "embedded":
        from rods.train.config import ModelSettings
        from rods.train.trainer import load_policy

        model, tokenizer = load_policy(ModelSettings())
    else:
        torch.manual_seed(0)
        model = LlamaForCausalLM(LlamaConfig(
            vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=4096,
            eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
        ))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def run_arm(arm: str, model_dir: Path, seeds, steps: int, out: Path, closed_loop: bool = False) -> dict:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from rods.engine import DataEngine
    from rods.train import config_from_dict
    from rods.train.run import make_synthesis_worker
    from rods.train.trainer import build_trainer

    config = config_from_dict({
        "rollout": {"max_steps_per_turn": 1, "max_reply_tokens": 8, "max_completion_tokens": 512,
                    "tool_docs": "signatures"},
        "grpo": {"num_generations": 4, "tasks_per_step": 2, "steps_per_epoch": 2, "max_steps": steps,
                 "save_steps": 10_000, "learning_rate": 1e-4, "logging_steps": 10_000},
        "engine": {"K": 4, "min_observations": 4, "burn_in_rollouts": 4, "max_seeds_per_step": 2,
                   "quotas": {"basic": 1, "miss_func": 0, "miss_param": 1}, "exclusion_window": 1,
                   "capacity": 16, "max_injection_fraction": 0.5},
        # The rods arm's synthesis worker is the one `rods train` builds from these settings.
        "synthesis": {"backend": "template"},
    })
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    engine = worker = None
    by_id = {t.id: t for t in seeds}
    lookup, source = by_id.__getitem__, lambda: list(seeds)
    if arm == "rods":
        engine = DataEngine(config.engine_config(), seeds, run_dir=out / "engine")
        worker = make_synthesis_worker(config.synthesis)
        engine.attach_worker(worker)
        # A run starts its worker while it loads the policy; here the steady steps are timed, not that start.
        worker.wait_started(timeout=120)
        # By default both arms train on the same task stream (the seeds), so the ratio
        # measures what running the engine costs, not what the injected tasks cost to
        # train on; the engine still observes, selects, synthesizes and injects into its
        # own pool. --closed-loop trains the rods arm on the live pool instead.
        lookup, source = engine.task, (engine.active_tasks if closed_loop else (lambda: list(seeds)))
    trainer = build_trainer(config, model, tokenizer, output_dir=out / "ckpt", lookup=lookup, pool_source=source,
                            engine=engine, max_steps=steps)
    trainer.train()
    result = {"durations": list(trainer.rods_timer.durations)}
    if engine is not None:
        from rods.integrations.trl.callbacks import EngineCallback

        cb = next(c for c in trainer.callback_handler.callbacks if isinstance(c, EngineCallback))
        result["engine_seconds"] = cb.select_seconds + cb.boundary_seconds + trainer.rods_reward.observe_seconds
        metrics = engine.metrics(steps)
        during = worker.produced
        # Untimed: what the niced worker still owed once training left it the cores (it ran, not starved).
        worker.close(wait=True)
        result.update(selected=metrics["total_selected"], accepted=metrics["total_accepted"],
                      injected=metrics["total_injected"], produced_in_steps=during, produced=worker.produced)
        engine.close()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=("tiny", "embedded"), default="tiny")
    parser.add_argument("--steps", type=int, default=5, help="optimizer steps per round")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per arm (alternating)")
    parser.add_argument("--closed-loop", action="store_true",
                        help="train the rods arm on the engine's live pool (different tasks than plain)")
    parser.add_argument("--smoke", action="store_true", help=f"tiny run of every code path: {SMOKE}")
    args = parser.parse_args(argv)
    if args.smoke:
        vars(args).update(SMOKE)
    logging.basicConfig(level=logging.WARNING)
    import os

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    seeds = seed_tasks(4, 4)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model_dir = build_model_dir(args.model, tmp / "model")
        arms: dict[str, list[float]] = {"plain": [], "rods": []}
        engine_info: dict = {}
        engine_seconds = 0.0
        for r in range(args.rounds):
            for arm in ("plain", "rods"):
                res = run_arm(arm, model_dir, seeds, args.steps, tmp / f"{arm}{r}", args.closed_loop)
                arms[arm] += res["durations"][1:]  # first step: warm-up
                engine_seconds += res.get("engine_seconds", 0.0)
                for key in ("selected", "accepted", "injected", "produced_in_steps", "produced"):
                    if key in res:
                        engine_info[key] = engine_info.get(key, 0) + res[key]
                print(f"round {r} {arm:5s}: steps {', '.join(f'{d:.2f}' for d in res['durations'])} s", flush=True)
    plain, rods = statistics.median(arms["plain"]), statistics.median(arms["rods"])
    ratio = rods / plain
    print()
    print(f"{'arm':8s} {'steps':>6s} {'median s/step':>14s} {'mean s/step':>12s}")
    for arm, values in arms.items():
        print(f"{arm:8s} {len(values):6d} {statistics.median(values):14.3f} {statistics.mean(values):12.3f}")
    engine_per_step = engine_seconds / (args.rounds * args.steps)
    print(f"engine work in the rods arm: {engine_info}; engine calls inside the step "
          f"(observe + select_seeds + epoch boundaries): {engine_per_step * 1000:.1f} ms/step "
          f"= {engine_per_step / plain:.2%} of a plain step")
    print(f"overhead ratio (median rods / median plain): {ratio:.3f}   [target <= 1.05]   "
          f"total {time.perf_counter() - started:.0f}s, model={args.model}")
    print(json.dumps({
        "overhead_ratio": round(ratio, 4),
        "plain_step_s": round(plain, 4),
        "rods_step_s": round(rods, 4),
        "steps_per_arm": len(arms["plain"]),
        "engine_ms_per_step": round(engine_per_step * 1000, 2),
        "model": args.model,
        "closed_loop": args.closed_loop,
        **{f"engine_{k}": v for k, v in engine_info.items()},
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
