"""One typed configuration system: pydantic settings sections, YAML with `base:` layering, `--set` overrides.

Each package defines the settings it consumes next to the code that consumes
them (`rods.envs.seeds.DataSettings`, `rods.rollout.settings.RolloutSettings`,
`rods.engine.config.EngineConfig`, `rods.llm.base.LLMConfig`, the verl
`rods:` section, ...), each a `Section`: every field has its help text
(`Field(description=...)`), bounds and the paper's value as the default, and
unknown keys are an error. `rods.train.config.TrainConfig` puts the training
sections together. This module reads them: `read_yaml` (a file and its
``base:`` parents), `apply_overrides` (``section.key=value``), `validate`
(errors name the file and the dotted key) and `commented_yaml` (the resolved
tree with its help). It sits below every package, so any of them may use it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, TypeVar, get_args

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

S = TypeVar("S", bound=BaseModel)


class Section(BaseModel):
    """A settings section: unknown keys rejected, assignments validated."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class ConfigError(ValueError):
    """A config file that cannot be read or does not validate; the message names file and key."""


#: The key that names a parent config file.
BASE_KEY = "base"


def read_yaml(path: Path, chain: tuple[Path, ...] = ()) -> dict[str, Any]:
    """A YAML mapping with its `base:` chain merged in (parents first); errors name the file."""
    if path in chain:
        raise ConfigError(f"{path}: circular 'base:' chain {' -> '.join(map(str, chain + (path,)))}")
    if path.is_dir():
        raise ConfigError(f"{path}: is a directory, not a config file")
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
    parent = read_yaml((path.parent / base).resolve(), chain + (path,))
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


def format_validation_error(err: ValidationError, source: str, model: type[BaseModel] | None = None) -> str:
    """One line per problem: ``source: dotted.key: what is wrong`` (unknown keys list the known ones)."""
    lines = []
    for problem in err.errors():
        key = ".".join(str(p) for p in problem["loc"]) or "(top level)"
        if problem["type"] == "extra_forbidden":
            parent = _model_at(model, problem["loc"][:-1]) if model is not None else None
            known = sorted(parent.model_fields) if parent is not None else []
            msg = f"unknown key; known keys here: {', '.join(known)}" if known else "unknown key"
        else:
            msg = problem["msg"].removeprefix("Value error, ")
        lines.append(f"{source}: {key}: {msg}")
    return "\n".join(lines)


def _section_type(annotation: Any) -> type[BaseModel] | None:
    """The settings class of a field's annotation (`X`, `X | None`), or None."""
    for candidate in (annotation, *get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _model_at(model: type[BaseModel], loc: tuple) -> type[BaseModel] | None:
    current: type[BaseModel] | None = model
    for part in loc:
        field = current.model_fields.get(part) if current is not None and isinstance(part, str) else None
        if field is None:
            return None
        current = _section_type(field.annotation)
    return current


def validate(model: type[S], data: Any, source: str) -> S:
    """`model` validated from `data`; a `ConfigError` names `source` and every dotted key at fault."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise ConfigError(format_validation_error(err, source, model)) from None


def commented_yaml(section: BaseModel, indent: int = 0) -> str:
    """`section` as YAML with each field's help as a comment above it (`rods train --print-config`)."""
    pad = "  " * indent
    data = section.model_dump(mode="json")
    lines = []
    for name, field in type(section).model_fields.items():
        if field.description:
            width = max(40, 100 - len(pad))  # hyphens stay whole: "no-feedback-repair" is one word
            lines += [f"{pad}# {chunk}" for chunk in textwrap.wrap(field.description, width, break_on_hyphens=False)]
        value = getattr(section, name)
        if isinstance(value, BaseModel):
            lines.append(f"{pad}{name}:")
            lines.append(commented_yaml(value, indent + 1))
        else:
            dumped = yaml.safe_dump({name: data[name]}, default_flow_style=False, sort_keys=False,
                                    allow_unicode=True, width=10_000)
            lines += [pad + line for line in dumped.rstrip("\n").splitlines()]
    return "\n".join(lines)
