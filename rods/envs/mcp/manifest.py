"""The MCP manifest: how to start a server, what rods fills in, how to read its state (docs/design.md §2.8).

A manifest is a YAML file beside its task files::

    name: git
    server:
      command: mcp-server-git          # a stdio server, started once per rollout
      args: []
      env: {GIT_AUTHOR_DATE: "2024-01-01T00:00:00+00:00"}
    prepare: [[sh, "{manifest_dir}/make_repo.sh"]]   # builds the template once per pool
    hidden_arguments:                  # filled by rods, never shown to the model
      repo_path: "{workdir}"
    state:
      - kind: git

`server.python` ("module:factory") instead of `server.command` names an
in-repo server built in this process (`factory(workdir) -> MCPServer`) and
reached in memory: the fast tests use it, and it needs no subprocess.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

#: The placeholder for the rollout's own working directory in args, env and hidden arguments.
WORKDIR = "{workdir}"
#: The placeholder for the manifest's directory in `prepare` commands.
MANIFEST_DIR = "{manifest_dir}"
#: The placeholder for this interpreter (`sys.executable`) in `server.command` and `prepare`.
PYTHON = "{python}"

StateKind = Literal["dir", "git", "sqlite", "tool", "python"]


class ServerSpec(BaseModel):
    """How to start one server: a stdio command, or an in-repo factory reached in memory."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = Field(
        None, description="executable of a stdio server (PATH or absolute; '{python}': this interpreter)"
    )
    args: list[str] = Field(default_factory=list, description="its arguments; '{workdir}' is filled in")
    env: dict[str, str] = Field(default_factory=dict, description="fixed environment variables")
    python: str | None = Field(None, description="'module:factory' of an in-repo server, factory(workdir)")

    @model_validator(mode="after")
    def _one_way(self) -> ServerSpec:
        if (self.command is None) == (self.python is None):
            raise ValueError("server: give exactly one of `command` (stdio) or `python` (in memory)")
        return self


class StateSpec(BaseModel):
    """One part of the snapshot (see `rods.envs.mcp.state`)."""

    model_config = ConfigDict(extra="forbid")

    kind: StateKind
    name: str | None = Field(None, description="key in the snapshot; defaults to the kind")
    path: str = Field(".", description="dir/git/sqlite: a path inside the working directory")
    ignore: list[str] = Field(default_factory=list, description="dir: glob patterns left out (volatile files)")
    tool: str | None = Field(None, description="tool: a read-only tool whose result is the state")
    arguments: dict[str, Any] = Field(default_factory=dict, description="tool: its arguments")
    function: str | None = Field(None, description="python: 'module:function', function(workdir) -> JSON data")

    @model_validator(mode="after")
    def _complete(self) -> StateSpec:
        if self.kind == "tool" and not self.tool:
            raise ValueError("state kind 'tool' needs `tool`")
        if self.kind == "python" and not self.function:
            raise ValueError("state kind 'python' needs `function` ('module:function')")
        return self

    @property
    def key(self) -> str:
        return self.name or self.kind


class Manifest(BaseModel):
    """One MCP environment: a server, its per-rollout state template, its hidden arguments, its state."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="the tools' group in prompts and the API graph")
    server: ServerSpec
    template: str | None = Field(None, description="directory copied per rollout (relative to the manifest)")
    prepare: list[list[str]] = Field(
        default_factory=list,
        description="commands (argv) run once per pool in the template's copy, e.g. to build a git repository; "
        "'{manifest_dir}' and '{python}' are filled in",
    )
    hidden_arguments: dict[str, Any] = Field(
        default_factory=dict, description="argument -> value rods passes on every call that takes it"
    )
    state: list[StateSpec] = Field(min_length=1)
    call_timeout_s: float = Field(10.0, gt=0, description="a call running longer ends with an error")
    start_timeout_s: float = Field(30.0, gt=0, description="start + list_tools running longer is an error")
    #: Where the manifest was read from; relative paths resolve against it.
    base_dir: Path = Field(default_factory=Path.cwd, exclude=True)

    @model_validator(mode="after")
    def _unique_state_keys(self) -> Manifest:
        keys = [s.key for s in self.state]
        if len(set(keys)) != len(keys):
            raise ValueError(f"state: two entries share a key in {keys}; give them distinct `name`s")
        return self

    def template_dir(self) -> Path | None:
        if self.template is None:
            return None
        return (self.base_dir / self.template).resolve()


def load_manifest(path: str | Path) -> Manifest:
    """Read and check a manifest YAML; errors name the file and the field."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as e:
        raise ValueError(f"MCP manifest {path}: cannot read it ({e})") from e
    except yaml.YAMLError as e:
        raise ValueError(f"MCP manifest {path}: not YAML ({e})") from e
    if not isinstance(data, dict):
        raise ValueError(f"MCP manifest {path}: expected a mapping at the top, got {type(data).__name__}")
    try:
        manifest = Manifest.model_validate({**data, "base_dir": path.resolve().parent})
    except ValidationError as e:
        raise ValueError(f"MCP manifest {path}: {e}") from e
    template = manifest.template_dir()
    if template is not None and not template.is_dir():
        raise ValueError(f"MCP manifest {path}: template {manifest.template!r} is not a directory ({template})")
    return manifest


def fill_workdir(value: Any, workdir: Path) -> Any:
    """`value` with every '{workdir}' in its strings replaced by the rollout's directory."""
    if isinstance(value, str):
        return value.replace(WORKDIR, str(workdir))
    if isinstance(value, list):
        return [fill_workdir(v, workdir) for v in value]
    if isinstance(value, dict):
        return {k: fill_workdir(v, workdir) for k, v in value.items()}
    return value


def import_object(path: str) -> Any:
    """The object a 'module:name' string names; a clear error when it does not exist."""
    module_name, sep, name = path.partition(":")
    if not sep or not module_name or not name:
        raise ValueError(f"expected 'module:name', got {path!r}")
    try:
        return getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"cannot import {path!r}: {e}") from e
