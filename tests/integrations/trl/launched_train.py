"""What each process of `accelerate launch ... launched_train.py CONFIG OUT [CHECKPOINT]` runs.

It trains with `rods.train.run.train` and writes this rank's `RunSummary` to
`OUT/rank-<r>.json`, so the test can compare what every rank served and scored.
"""

import json
import sys
from dataclasses import asdict
from pathlib import Path

from rods.train import config_from_dict
from rods.train.run import train


def main() -> None:
    config = config_from_dict(json.loads(Path(sys.argv[1]).read_text()))
    out = Path(sys.argv[2])
    resume = sys.argv[3] if len(sys.argv) > 3 else False
    summary = train(config, resume=resume)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"rank-{summary.rank}.json").write_text(json.dumps(asdict(summary)))


if __name__ == "__main__":
    main()
