"""Where rods keeps what it can recompute: `$RODS_CACHE_DIR`, or `~/.cache/rods` (honouring `$XDG_CACHE_HOME`).

Two things live there: ground truths of `rods reward` (`ground_truth/`) and float
copies of GGUF weights (`float_weights/`). Deleting the folder only costs time.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable naming the cache folder.
ENV_VAR = "RODS_CACHE_DIR"


def cache_dir(name: str) -> Path:
    """The cache sub-folder `name` (not created here)."""
    root = os.environ.get(ENV_VAR)
    if root:
        return Path(root) / name
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rods" / name
