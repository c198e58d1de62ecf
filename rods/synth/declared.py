"""The categories an environment declares: its tools' schemas, their parameters' descriptions, its code.

A category a variant must keep is often written down before any seed shows
it (docs/design.md §4.2): a `Literal` hint or a schema enum, a list in a
parameter's description ("one of 'none', 'breakfast' or 'half'"), the string
constants the class's module compares a value with (`board not in {...}`,
`room["type"] == "suite"`) or looks it up by (`DISCOUNTS[guest["tier"]]`,
`status in OPEN_STATES`, `CARRIERS.get(carrier.lower())`, a table made from a
literal: `{c.lower(): c for c in ("DPD", "GLS")}`). Only literals are read: a
set the code builds from its state at run time is not seen.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from rods.envs.calls import ast_parse, source_of
from rods.envs.domains import domain_of
from rods.synth.parameters import enum_values

_QUOTED = re.compile(r"'([^'\s][^']{0,30})'|\"([^\"\s][^\"]{0,30})\"")
_ONE = r"(?:'[^'\s][^']{0,30}'|\"[^\"\s][^\"]{0,30}\")"
#: Quoted values listed together ("'none', 'breakfast' or 'half'", `["on", "off"]`), not a format and its example
#: ("in the format 'YYYY-MM-DD', such as '2024-05-01'").
_QUOTED_LIST = re.compile(_ONE + r"(?:\s*(?:,|;|/|\||,?\s*or|,?\s*and)\s*" + _ONE + ")+")
_LISTED = re.compile(r"(?:one of|either|such as|values?:?|:)\s+((?:[a-z][\w-]*,\s*)+[a-z][\w-]*,?\s+(?:or|and)\s+"
                     r"[a-z][\w-]*)", re.I)
#: Methods that give a text back in another case or trimmed (`carrier.strip().lower()` is still the carrier).
_SAME_TEXT = frozenset({"lower", "upper", "strip", "casefold", "title", "capitalize", "lstrip", "rstrip"})


def declared_sets(docs: Mapping[str, Mapping[str, Any]], sources: Mapping[str, str]) -> tuple[
        dict[str, set[str]], dict[str, set[str]]]:
    """(`function.param` -> values, `owner/name` -> values): the values a schema's enum, a parameter's description
    or the code of the owner's module names for a parameter or a field (by its name, for fields and parameters
    alike)."""
    by_param: dict[str, set[str]] = defaultdict(set)
    for function, doc in docs.items():
        for param, spec in doc.get("parameters", {}).get("properties", {}).items():
            values = _described(spec) if _holds_text(spec) else set()
            if values:
                by_param[f"{function}.{param}"] |= values
    by_name: dict[str, set[str]] = defaultdict(set)
    for owner, source in sources.items():
        for name, values in compared(source).items():
            by_name[f"{owner}/{name}"] |= values
    return dict(by_param), dict(by_name)


def _holds_text(spec: Mapping[str, Any]) -> bool:
    """Whether a parameter takes a text or a list of texts (a list of records' description quotes their keys)."""
    items = spec.get("items") if isinstance(spec.get("items"), dict) else {}
    kinds = {spec.get("type"), *(o.get("type") for o in spec.get("anyOf", []) if isinstance(o, dict))}
    return "string" in kinds or (spec.get("type") == "array" and items.get("type") == "string") \
        or (not kinds - {None} and "$ref" not in items)


def _described(spec: Mapping[str, Any]) -> set[str]:
    """The values a parameter's schema lists (its enum, an optional's or a list's) or its description quotes or
    names in a list."""
    options = [o for o in [*spec.get("anyOf", []), *spec.get("oneOf", []), spec.get("items")] if isinstance(o, dict)]
    values = {v for v in [*enum_values(dict(spec)), *(e for o in options for e in o.get("enum", []))]
              if isinstance(v, str)}
    text = spec.get("description", "") or ""
    for listed_together in _QUOTED_LIST.finditer(text):
        quoted = [a or b for a, b in _QUOTED.findall(listed_together.group(0))]
        if all(len(q.split()) <= 2 for q in quoted):
            values |= set(quoted)
    listed = _LISTED.search(text)
    if listed and not values:
        values |= {w.strip() for w in re.split(r",\s*|\s+(?:or|and)\s+", listed.group(1)) if w.strip()}
    return values


def compared(source: str) -> dict[str, set[str]]:
    """Name -> the string constants the code compares it with (`x in {...}`, `x == '...'`, `x in TABLE`) or looks
    it up by (`TABLE[x]`), where TABLE is a module's or class's literal dict, set, list or tuple of strings. A name
    is a variable, an attribute, a subscript by a string (`room["type"]`) or a `.get("type")`."""
    try:
        tree = ast_parse(source)
    except SyntaxError:
        return {}
    tables = _tables(tree)
    out: dict[str, set[str]] = defaultdict(set)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            name, left = _named(node.left), _constants(node.left)
            for op, right in zip(node.ops, node.comparators):
                if name and isinstance(op, (ast.In, ast.NotIn, ast.Eq, ast.NotEq)):
                    out[name] |= _constants(right)
                if name and isinstance(op, (ast.In, ast.NotIn)):
                    out[name] |= tables.get(_named(right) or "", set())
                other = _named(right)
                if other and left and isinstance(op, (ast.Eq, ast.NotEq)):
                    out[other] |= left
        elif isinstance(node, ast.Subscript) and _named(node.value) in tables:
            name = _named(node.slice)
            if name:
                out[name] |= tables[_named(node.value) or ""]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and node.args and _named(node.func.value) in tables:  # CARRIERS.get(carrier.strip().lower())
            name = _named(node.args[0])
            if name and not isinstance(node.args[0], ast.Constant):
                out[name] |= tables[_named(node.func.value) or ""]
    return {k: {v for v in vs if len(v) <= 30 and len(v.split()) <= 3} for k, vs in out.items() if vs}


def rates(source: str) -> frozenset[float]:
    """The numbers of the code's tables of rates: a constant (a module's or class's name in capitals) assigned a
    literal dict from names to numbers, `RENT = {"full": 96.0, "half": 52.0}`. They are the environment's, not an
    errand's: a variant that re-drew a full plot's £96 in its state held rents the class never charges. A dict of
    anything else (a default state's records) is no table of rates."""
    try:
        tree = ast_parse(source)
    except SyntaxError:
        return frozenset()
    out: set[float] = set()
    bodies = [tree.body, *(n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef))]
    for node in (n for body in bodies for n in body):
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or not isinstance(node.value, ast.Dict):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not all(isinstance(t, ast.Name) and t.id.isupper() for t in targets):
            continue
        table = node.value
        if table.keys and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in table.keys) \
                and all(isinstance(v, ast.Constant) and isinstance(v.value, (int, float))
                        and not isinstance(v.value, bool) for v in table.values):
            out |= {float(v.value) for v in table.values}  # type: ignore[union-attr]
    return frozenset(out)


def _tables(tree: ast.AST) -> dict[str, set[str]]:
    """Name -> the strings of a literal dict's keys, or of a literal set, list or tuple, assigned to it."""
    tables: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        value = node.value
        if isinstance(value, ast.Call) and value.args and isinstance(value.func, (ast.Name, ast.Attribute)):
            value = value.args[0]  # frozenset({...}), MappingProxyType({...})
        if isinstance(value, (ast.DictComp, ast.SetComp, ast.ListComp, ast.GeneratorExp)):
            value = value.generators[0].iter  # {c.lower(): c for c in ("DPD", "GLS")}: the strings it is made of
        if isinstance(value, ast.Dict):
            keys = {k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            size = len(value.keys)
        else:
            keys, size = _constants(value), len(getattr(value, "elts", ()))
        if len(keys) >= 2 and len(keys) == size:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            tables.update((name, keys) for name in map(_named, targets) if name)
    return tables


def _named(node: ast.AST) -> str | None:
    """The name a value is known by in the code: `x`, `self.x`, `record["x"]`, `record.get("x")`,
    `x.strip().lower()`."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
        return node.slice.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr in _SAME_TEXT:
            return _named(node.func.value)
        first = node.args[0] if node.args else None
        if node.func.attr == "get" and isinstance(first, ast.Constant) and isinstance(first.value, str):
            return first.value
    return None


def _constants(node: ast.AST) -> set[str]:
    """The strings of a string constant, or of a set, list or tuple of nothing but string constants."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        values = {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
        return values if len(values) == len(node.elts) else set()
    return set()


def class_source(key: str) -> str:
    """The source of the module that defines an environment's class ("" when it cannot be read)."""
    try:
        module = inspect.getmodule(domain_of(key).load_class(key))
        return source_of(module) if module is not None else ""
    except Exception:  # a hosted environment's stand-in, a class without source: nothing declared
        return ""
