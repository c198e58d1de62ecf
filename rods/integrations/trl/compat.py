"""What rods relies on inside TRL beyond its public API, each use guarded (docs/design.md §6.3).

* **The tested release.** `TESTED_TRL` is the range `pyproject.toml` pins and CI
  installs; `check_trl_version()` warns once when another release is installed,
  because `rollout_func` is an experimental TRL API and the LM-head patch below
  names a private function.
* **The CPU LM-head patch.** TRL 1.16 projects *every* position (prompt included)
  through the LM head when Triton is not used, a choice made for compiled
  accelerators (fixed tile shapes); on CPU that multiplies the cost of a GRPO
  step by prompt/completion length (~10x here). `score_only_completions_on_cpu()`
  makes `trl.trainer.utils._use_triton` answer True for CPU tensors, so only
  positions with a label are scored: the same log-probabilities, less work. It
  checks that the target is still there and warns once if not (training then
  runs, only slower).
* **The experimental notice.** TRL warns on every `GRPOTrainer(rollout_func=...)`
  unless the process sets `TRL_EXPERIMENTAL_SILENCE`. Library code never sets
  environment variables; `quiet_rollout_func_notice()` filters that one warning
  while the trainer is built, and the version guard above is what stands for it.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

log = logging.getLogger(__name__)

#: The TRL releases rods is tested with (the `trl` pin of pyproject.toml's `train` extra).
TESTED_TRL = ">=1.16,<1.17"
#: The private function the CPU LM-head patch replaces.
PATCH_TARGET = "trl.trainer.utils._use_triton"

_warned: set[str] = set()


def _warn_once(key: str, message: str, *args: Any) -> None:
    if key not in _warned:
        _warned.add(key)
        log.warning(message, *args)


def trl_version() -> str:
    from importlib.metadata import version

    return version("trl")


def check_trl_version() -> bool:
    """True if the installed TRL is in `TESTED_TRL`; otherwise warn once and return False."""
    from packaging.specifiers import SpecifierSet

    installed = trl_version()
    if installed in SpecifierSet(TESTED_TRL):
        return True
    _warn_once(
        "version", "TRL %s is installed; rods is tested with trl%s (rollout_func and the CPU LM-head patch "
        "depend on that release)", installed, TESTED_TRL,
    )
    return False


def score_only_completions_on_cpu() -> bool:
    """Make TRL's chunked LM head score only labelled positions on CPU; True if the patch is active.

    Idempotent. If TRL no longer has `PATCH_TARGET`, nothing is changed and a warning says so once.
    """
    try:
        from trl.trainer import utils as trl_utils
    except ImportError:  # pragma: no cover - the train extra is not installed
        _warn_once("patch-import", "trl.trainer.utils cannot be imported; CPU LM-head patch not applied")
        return False
    original = getattr(trl_utils, "_use_triton", None)
    if not callable(original):
        _warn_once(
            "patch-target", "%s is gone in TRL %s: the CPU LM-head patch is not applied, so GRPO steps on CPU "
            "score every prompt position (slower, same results)", PATCH_TARGET, trl_version(),
        )
        return False
    if getattr(original, "_rods_cpu_compact", False):
        return True

    def use_compact(device: Any) -> bool:
        return True if getattr(device, "type", None) == "cpu" else bool(original(device))

    use_compact._rods_cpu_compact = True  # type: ignore[attr-defined]
    use_compact.__wrapped__ = original  # type: ignore[attr-defined]
    trl_utils._use_triton = use_compact
    return True


def cpu_patch_active() -> bool:
    """Whether `score_only_completions_on_cpu` is in effect in this process."""
    try:
        from trl.trainer import utils as trl_utils
    except ImportError:  # pragma: no cover
        return False
    return bool(getattr(getattr(trl_utils, "_use_triton", None), "_rods_cpu_compact", False))


@contextmanager
def quiet_rollout_func_notice() -> Iterator[None]:
    """Filter TRL's "rollout_func is experimental" warning inside this block only (no environment change)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"You are using 'rollout_func'", category=UserWarning)
        yield
