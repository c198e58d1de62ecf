"""Reading `TrainConfig` from YAML, with `base:` inheritance and `--set key=value` overrides.

An experiment file may start from another one (``base: paper_qwen3_4b.yaml``,
relative to the file) and change only what differs, so every baseline and
ablation of docs/design.md §7.1 is a few lines. Errors name the file and the dotted key.
The reading itself is `rods.config`'s, shared by every settings section.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from rods.config import ConfigError, apply_overrides, commented_yaml, read_yaml, validate
from rods.train.config import TrainConfig

__all__ = ["ConfigError", "apply_overrides", "config_from_dict", "dump_config", "explain_config", "load_config"]


def config_from_dict(data: dict[str, Any], source: str = "<config>") -> TrainConfig:
    """Validate a mapping; errors name `source` and the key."""
    return validate(TrainConfig, data, source)


def load_config(path: str | Path, overrides: list[str] | None = None) -> TrainConfig:
    """Read, inherit, override and validate one experiment file."""
    path = Path(path)
    data = read_yaml(path.resolve())
    if overrides:
        data = apply_overrides(data, overrides)
    return config_from_dict(data, str(path))


def dump_config(config: TrainConfig) -> str:
    """The resolved config as YAML (what a run directory keeps)."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True)


def explain_config(config: TrainConfig) -> str:
    """The resolved config as YAML with every field's help as a comment (`rods train --print-config`)."""
    return commented_yaml(config)
