"""Dependencies point one way, along the data's path (docs/design.md §1.2).

The packages of `rods`, lowest first::

    tasks / llm -> envs -> reward -> rollout -> engine / eval -> synth -> integrations
    -> report / train -> compare -> cli

with `rods.config` (the base class of every settings section) and `rods.cache` (where
recomputable files are kept) beneath them all.
`rods.llm` (language-model backends, the Hermes tool-call format) needs no
task, so rollouts and synthesis alike build on it.
A module may import its own package and any package at a lower level, never
one above it (module-level and function-level imports alike: a lazy import is
still a dependency), and no two packages may import each other, even
indirectly. `rods/__init__.py` and `rods/__main__.py` stand outside the layers.

Inside and above `rods.envs`, each environment family is a domain (docs/design.md
§2.9): nothing outside BFCL's folder and the task loader names a BFCL class or
field or compares with its environment name, and the packages above the
environments reach them through `rods.envs.contract`, never a private field.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "rods"

#: Package -> level; a module may import only packages of its level or lower.
LAYERS: dict[str, int] = {
    "config": -1,
    "cache": -1,
    "tasks": 0,
    "llm": 0,
    "envs": 1,
    "reward": 2,
    "rollout": 3,
    "engine": 4,
    "eval": 4,
    "synth": 5,
    "integrations": 6,
    "report": 7,
    "train": 7,
    "compare": 8,
    "cli": 9,
}
#: Data folders hold no code.
NOT_CODE = {"data"}


def _package_of(path: Path) -> str | None:
    rel = path.relative_to(ROOT)
    return rel.parts[0] if len(rel.parts) > 1 else None


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def rods_imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every import of a `rods` module in `path`, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    module = _module_name(path)
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "rods"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import: resolve against this module
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            if name.split(".")[0] == "rods":
                found.append((node.lineno, name))
    return found


def package_graph() -> dict[str, dict[str, list[str]]]:
    """Package -> imported package -> places (``file:line``) that import it."""
    graph: dict[str, dict[str, list[str]]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        source = _package_of(path)
        if source is None:
            continue
        for line, name in rods_imports(path):
            parts = name.split(".")
            if len(parts) < 2 or parts[1] == source:
                continue
            graph.setdefault(source, {}).setdefault(parts[1], []).append(f"{path.relative_to(ROOT.parent)}:{line}")
    return graph


def test_every_package_has_a_layer():
    packages = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))} - NOT_CODE
    packages |= {p.stem for p in ROOT.glob("*.py") if not p.stem.startswith("_")}
    assert packages <= set(LAYERS), f"add {sorted(packages - set(LAYERS))} to LAYERS (and to the docstring)"


def test_no_upward_import():
    upward = [
        f"{place}: rods.{source} (level {LAYERS[source]}) imports rods.{target} (level {LAYERS.get(target, '?')})"
        for source, targets in package_graph().items()
        for target, places in targets.items()
        if target not in LAYERS or LAYERS[target] > LAYERS[source]
        for place in places
    ]
    assert not upward, "imports against the data's path:\n" + "\n".join(upward)


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` as a list of nodes, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_cycle_between_packages():
    graph = {source: set(targets) for source, targets in package_graph().items()}
    cycle = _cycle(graph)
    assert cycle is None, "packages import each other: " + " -> ".join(f"rods.{p}" for p in cycle)


@pytest.mark.parametrize(
    ("graph", "has_cycle"),
    [
        ({"a": {"b"}, "b": {"c"}}, False),
        ({"a": {"b"}, "b": {"a"}}, True),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}}, True),
        ({"a": {"b", "c"}, "b": {"c"}, "c": set()}, False),
    ],
)
def test_cycle_finder(graph, has_cycle):
    assert (_cycle(graph) is not None) == has_cycle


def test_import_walker_sees_function_level_and_relative_imports(tmp_path, monkeypatch):
    pkg = tmp_path / "rods" / "tasks"
    pkg.mkdir(parents=True)
    module = pkg / "m.py"
    module.write_text("import json\ndef f():\n    from rods.train import x\n    from . import model\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path / "rods")
    assert rods_imports(module) == [(3, "rods.train"), (4, "rods.tasks")]


# -- the environments' domains: no layer above them knows BFCL (docs/design.md §2.9) -----------------

#: Where BFCL may be named: its domain's folder, the task loader, and the dispatch that finds a domain.
BFCL_ALLOWED = ("envs/bfcl/", "tasks/", "envs/domains.py")  # domains.py finds a key's domain
#: Field names of BFCL's states that are plain words any environment may use.
GENERIC_FIELDS = frozenset({
    "name", "content", "contents", "destination", "password", "root", "orders", "stocks", "inbox", "comments",
    "username", "long_context", "access_token", "tweets", "retweets", "message_count", "user_count",
})


def _outside_bfcl() -> list[Path]:
    return [p for p in sorted(ROOT.rglob("*.py")) if not str(p.relative_to(ROOT)).startswith(BFCL_ALLOWED)]


def _bfcl_names() -> tuple[frozenset[str], frozenset[str]]:
    """(BFCL's class names, the distinctive public field names of BFCL's loaded states and their records)."""
    from rods.envs.contract import environment_for
    from rods.tasks import load_split
    from rods.tasks.bfcl import API_CLASSES

    fields: set[str] = set()
    for task in load_split("all"):
        seen: set[int] = set()
        stack = list(environment_for(task).state().values())
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, dict):
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
            elif hasattr(node, "__dict__"):
                public = {k: v for k, v in vars(node).items() if not k.startswith("_") and k != "parent"}
                fields |= set(public)
                stack.extend(public.values())
        fields |= {k for state in environment_for(task).state().values() for k in state}
    return frozenset(API_CLASSES), frozenset(fields - GENERIC_FIELDS)


def test_no_layer_above_the_environments_names_bfcl():
    classes, fields = _bfcl_names()
    assert {"authenticated", "market_status", "fuelLevel", "credit_card_list"} <= fields  # the list can catch
    found = []
    for path in _outside_bfcl():
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT.parent)
        found += [f"{rel}: names the BFCL class {c}" for c in classes if re.search(rf"\b{c}\b", text)]
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in fields:
                found.append(f"{rel}:{node.lineno}: the BFCL field name {node.value!r}")
            if isinstance(node, ast.Attribute) and node.attr in fields:
                found.append(f"{rel}:{node.lineno}: the BFCL field .{node.attr}")
            if isinstance(node, ast.Compare) and any(
                    (isinstance(x, ast.Constant) and x.value == "bfcl") or (isinstance(x, ast.Name | ast.Attribute)
                                                                           and "BFCL_ENVIRONMENT" in ast.unparse(x))
                    for x in [node.left, *node.comparators]):
                found.append(f"{rel}:{node.lineno}: compares with BFCL's environment name")
            if isinstance(node, ast.ImportFrom) and node.module and (
                    node.module.startswith("rods.envs.bfcl") or any(a.name == "BFCL_ENVIRONMENT" for a in node.names)):
                found.append(f"{rel}:{node.lineno}: imports {node.module}")
    assert not found, "BFCL outside its domain's folder:\n" + "\n".join(found)


def _private_environment_fields() -> frozenset[str]:
    """Private attribute names of the environment classes and of loaded instances of every domain."""
    from rods.envs.environment import EnvTemplate, ToolEnvironment
    from rods.envs.replayed import ReplayedEnvironment
    from rods.tasks import load_split

    names: set[str] = set()
    for klass in (ToolEnvironment, EnvTemplate, ReplayedEnvironment):
        names |= {n for n in vars(klass) if n.startswith("_") and not n.startswith("__")}
    task = next(t for t in load_split("train") if len(t.involved_classes) >= 2)
    env = ToolEnvironment(task)
    names |= {n for n in vars(env) if n.startswith("_")}
    for instance in env.instances.values():
        names |= {n for n in vars(instance) if n.startswith("_") and not n.startswith("__")}
    return frozenset(names)


#: Packages above the environments: they use `rods.envs.contract`, not the concrete classes.
ABOVE_ENVS = ("reward", "rollout", "engine", "eval", "synth", "integrations", "report", "train", "compare", "cli")


def test_layers_above_the_environments_type_against_the_contract():
    private = _private_environment_fields()
    assert {"_current_dir", "_owners", "_live", "_frozen"} & private  # the list can catch
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        if _package_of(path) not in ABOVE_ENVS:
            continue
        rel = path.relative_to(ROOT.parent)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("rods.envs"):
                found += [f"{rel}:{node.lineno}: imports {a.name}" for a in node.names
                          if a.name in ("ToolEnvironment", "EnvTemplate", "ReplayedEnvironment")]
            if isinstance(node, ast.Attribute) and node.attr in private and not (
                    isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(f"{rel}:{node.lineno}: reads the private field {node.attr}")
    assert not found, "layers above rods.envs must use rods.envs.contract:\n" + "\n".join(found)
