"""Ground truths kept on disk between `rods reward` runs (docs/design.md §2.5).

In a training process `ground_truth_for` computes each task's ground truth once
and keeps it in memory. A `rods reward` process starts empty, and computing
the ground truths of a few hundred tasks is a quarter of its work (loading
BFCL's scenarios, replaying every turn, freezing each turn's state), so the
command keeps them in a cache folder, one pickle per task.

An entry's file name is a hash of everything the ground truth depends on: the
task's id and fingerprint (config, classes, calls, long-context flag), the
source of the code that executes and snapshots it (the modules its domain
names, `Domain.cache_code`: BFCL's API classes and mpmath; `rods.envs`,
`rods.reward.ground_truth`) and the Python version. Changing any
of them misses the cache; nothing is ever reused across versions. A file that
cannot be read is recomputed and rewritten. Writes are atomic (temp file +
rename), so concurrent runs never read half a file.

The folder is `$RODS_CACHE_DIR/ground_truth` (default `~/.cache/rods`); pickles
execute code when loaded, so it must be a folder only you can write.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rods.cache import cache_dir

if TYPE_CHECKING:
    from rods.reward.ground_truth import GroundTruth

logger = logging.getLogger(__name__)

#: Modules whose code decides what any ground truth holds (our executor and snapshotting); their
#: source is part of every key, beside the modules of the task's domain (named in the key itself).
_CODE = (
    "rods.envs",
    "rods.reward.ground_truth",
)


def default_cache_dir() -> Path:
    """`$RODS_CACHE_DIR/ground_truth`, or `~/.cache/rods/ground_truth` (honouring `$XDG_CACHE_HOME`)."""
    return cache_dir("ground_truth")


@lru_cache(maxsize=16)
def code_version(modules: tuple[str, ...] = ()) -> str:
    """A hash of the source of the ground truth's code (`_CODE` and `modules`) and the Python version."""
    from importlib.util import find_spec

    digest = hashlib.sha256()
    digest.update(sys.version.encode())
    for name in (*_CODE, *modules):
        spec = find_spec(name)
        if spec is None or spec.origin is None:
            continue
        paths = [Path(spec.origin)]
        if spec.submodule_search_locations:  # a package: every module in it
            paths = sorted(Path(p) for loc in spec.submodule_search_locations for p in Path(loc).glob("*.py"))
        for path in paths:
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


class GroundTruthDiskCache:
    """One pickle per task under `folder`, keyed by the task's fingerprint and `code_version()`."""

    def __init__(self, folder: str | Path):
        self.folder = Path(folder)
        self.hits = self.misses = 0

    def path_for(self, fingerprint: str) -> Path:
        """The file of a key: the key's last line names the domain's code modules (one per line after the 2nd)."""
        modules = tuple(m for m in fingerprint.split("\n")[2:] if m)
        key = hashlib.sha256(f"{code_version(modules)}\n{fingerprint}".encode()).hexdigest()
        return self.folder / key[:2] / f"{key}.pickle"

    def load(self, fingerprint: str) -> GroundTruth | None:
        """The stored ground truth for this fingerprint, or None (missing or unreadable)."""
        from rods.envs.classes import thaw

        path = self.path_for(fingerprint)
        try:
            blob = path.read_bytes()
        except OSError:
            self.misses += 1
            return None
        try:
            gt: Any = thaw(blob)
        except Exception as err:  # a truncated or foreign file: recompute it
            logger.warning("ignoring unreadable ground-truth cache file %s: %s", path, err)
            self.misses += 1
            return None
        self.hits += 1
        return gt

    def store(self, fingerprint: str, gt: GroundTruth) -> None:
        """Write atomically; a cache that cannot be written is logged, never fatal."""
        from rods.envs.classes import freeze

        path = self.path_for(fingerprint)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(freeze(gt))
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except (OSError, RuntimeError) as err:
            logger.warning("cannot write the ground-truth cache under %s: %s", self.folder, err)
