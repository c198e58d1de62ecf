"""One (arm, seed) run of a comparison, in its own process: ``python -m rods.compare.job RUN_DIR [HELDOUT]``.

Reads the resolved config the runner left in ``RUN_DIR/arm.yaml``, trains it
with `rods.train.run.train` (resuming from the newest checkpoint when the run
directory has one, else starting afresh), evaluates the held-out split before
and after GRPO (`rods.compare.heldout`), and writes ``RUN_DIR/done.json``
last: a run with that marker is finished and is never run again.

A process per run keeps runs independent (memory, torch threads, global
state) and makes an interrupted comparison safe to kill and resume.
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
import time
from pathlib import Path

from rods.compare.arms import DONE_FILE, RUN_CONFIG
from rods.compare.heldout import AFTER, BEFORE, HeldoutCallback

log = logging.getLogger(__name__)



def run_job(run_dir: str | Path, heldout: str | Path | None = None) -> dict:
    """Train (or resume) the run in `run_dir`, evaluate it on `heldout`, write and return its done marker."""
    from rods.tasks import read_tasks
    from rods.train.load import load_config
    from rods.train.run import latest_checkpoint, train
    from rods.train.trainer import load_policy

    start = time.time()
    run_dir = Path(run_dir)
    config = load_config(run_dir / RUN_CONFIG)
    if Path(config.run_dir).resolve() != run_dir.resolve():
        raise ValueError(f"{run_dir / RUN_CONFIG}: output_dir {config.run_dir} is not this run directory {run_dir}")
    tasks = read_tasks(heldout) if heldout else []
    checkpoint = latest_checkpoint(run_dir)
    if checkpoint is None:  # a fresh start: nothing of an interrupted attempt may count
        for name in (BEFORE, AFTER):
            shutil.rmtree(run_dir / name, ignore_errors=True)
    log.info("%s: %s (%d held-out tasks)", run_dir, f"resuming from {checkpoint}" if checkpoint else "starting",
             len(tasks))
    model, tokenizer = load_policy(config.model)
    summary = train(config, resume=checkpoint is not None, model=model, tokenizer=tokenizer,
                    callbacks=[HeldoutCallback(config, tokenizer, tasks, run_dir)])
    if summary.steps < config.grpo.max_steps:
        raise RuntimeError(f"{run_dir}: trained {summary.steps} of {config.grpo.max_steps} steps")
    if tasks and not (run_dir / AFTER / "report.json").is_file():
        raise RuntimeError(f"{run_dir}: no held-out evaluation after training")
    done = {
        "run_dir": str(run_dir),
        "steps": summary.steps,
        "resumed_from": summary.resumed_from,
        "seconds": round(time.time() - start, 2),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    (run_dir / DONE_FILE).write_text(json.dumps(done, indent=2), encoding="utf-8")
    return done


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not 1 <= len(argv) <= 2:
        print("usage: python -m rods.compare.job RUN_DIR [HELDOUT.jsonl]", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    run_job(argv[0], argv[1] if len(argv) > 1 else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
