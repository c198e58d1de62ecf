"""Reading `TrainConfig` from YAML, with `base:` inheritance and `--set key=value` overrides.

An experiment file may start from another one (``base: paper_qwen3_4b.yaml``,
relative to the file) and change only what differs, so every baseline and
ablation of docs/design.md §7.1 is a few lines. Errors name the file and the dotted key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from rods.train.config import TrainConfig

#: The key that names a parent config file.
BASE_KEY = "base"


class ConfigError(ValueError):
    """A config file that cannot be read or does not validate; the message names file and key."""


def _read_yaml(path: Path, chain: tuple[Path, ...]) -> dict[str, Any]:
    if path in chain:
        raise ConfigError(f"{path}: circular 'base:' chain {' -> '.join(map(str, chain + (path,)))}")
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML: {err}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping, got {type(data).__name__}")
    base = data.pop(BASE_KEY, None)
    if base is None:
        return data
    if not isinstance(base, str):
        raise ConfigError(f"{path}: '{BASE_KEY}' must be a file path, got {base!r}")
    parent = _read_yaml((path.parent / base).resolve(), chain + (path,))
    return deep_merge(parent, data)


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """`override` on top of `base`; nested mappings merge, everything else is replaced."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``section.key=value`` strings (values parsed as YAML scalars/lists)."""
    data = dict(data)
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"override {item!r} is not of the form section.key=value")
        value = yaml.safe_load(raw) if raw.strip() else None
        node = data
        parts = key.strip().split(".")
        for part in parts[:-1]:
            child = node.get(part)
            child = dict(child) if isinstance(child, dict) else {}
            node[part] = child
            node = child
        node[parts[-1]] = value
    return data


def format_validation_error(err: ValidationError, source: str) -> str:
    """One line per problem: ``source: dotted.key: what is wrong``."""
    lines = []
    for problem in err.errors():
        key = ".".join(str(p) for p in problem["loc"]) or "(top level)"
        if problem["type"] == "extra_forbidden":
            parent = _model_at(problem["loc"][:-1])
            known = sorted(parent.model_fields) if parent is not None else []
            msg = f"unknown key; known keys here: {', '.join(known)}" if known else "unknown key"
        else:
            msg = problem["msg"].removeprefix("Value error, ")
        lines.append(f"{source}: {key}: {msg}")
    return "\n".join(lines)


def _model_at(loc: tuple) -> type | None:
    model: Any = TrainConfig
    for part in loc:
        field = model.model_fields.get(part) if isinstance(part, str) else None
        if field is None or not isinstance(field.annotation, type):
            return None
        model = field.annotation
    return model if hasattr(model, "model_fields") else None


def config_from_dict(data: dict[str, Any], source: str = "<config>") -> TrainConfig:
    """Validate a mapping; errors name `source` and the key."""
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as err:
        raise ConfigError(format_validation_error(err, source)) from None


def load_config(path: str | Path, overrides: list[str] | None = None) -> TrainConfig:
    """Read, inherit, override and validate one experiment file."""
    path = Path(path)
    data = _read_yaml(path.resolve(), ())
    if overrides:
        data = apply_overrides(data, overrides)
    return config_from_dict(data, str(path))


def dump_config(config: TrainConfig) -> str:
    """The resolved config as YAML (what a run directory keeps)."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
