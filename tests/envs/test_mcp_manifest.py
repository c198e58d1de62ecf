"""The MCP manifest: the examples load, and a bad manifest names the file and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mcp")

from rods.envs.mcp import load_manifest
from rods.envs.mcp.manifest import fill_workdir

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("example", ["mcp_git", "mcp_sqlite"])
def test_examples_load(example):
    manifest = load_manifest(ROOT / "examples" / example / "manifest.yaml")
    assert manifest.base_dir == ROOT / "examples" / example
    assert manifest.state and manifest.server.command


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\nserver: {command: a, python: 'b:c'}\nstate: [{kind: dir}]", "exactly one of"),
        ("name: x\nserver: {}\nstate: [{kind: dir}]", "exactly one of"),
        ("name: x\nserver: {command: a}\nstate: []", "state"),
        ("name: x\nserver: {command: a}\nstate: [{kind: tool}]", "needs `tool`"),
        ("name: x\nserver: {command: a}\nstate: [{kind: python}]", "needs `function`"),
        ("name: x\nserver: {command: a}\nstate: [{kind: dir}, {kind: dir}]", "distinct `name`s"),
        ("name: x\nserver: {command: a}\nstate: [{kind: blob}]", "kind"),
        ("name: x\nserver: {command: a}\nstate: [{kind: dir}]\nsurprise: 1", "surprise"),
        ("name: x\nserver: {command: a}\ntemplate: nowhere\nstate: [{kind: dir}]", "not a directory"),
        ("- just a list", "mapping"),
        ("name: [unclosed", "not YAML"),
    ],
)
def test_bad_manifest_names_file_and_field(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as err:
        load_manifest(path)
    assert str(path) in str(err.value)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="cannot read"):
        load_manifest(tmp_path / "none.yaml")


def test_fill_workdir_reaches_nested_values(tmp_path):
    value = {"a": ["{workdir}/db", 3], "b": {"c": "{workdir}"}}
    assert fill_workdir(value, tmp_path) == {"a": [f"{tmp_path}/db", 3], "b": {"c": str(tmp_path)}}
