"""The checks of a tool surface and of the calls that ran on it: schemas, read and write tools, errors.

Pure functions of the tool docs and of the steps (`rods.envs.check.runs.Step`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rods.envs.check.findings import Finding, fail, passed, warn
from rods.envs.check.probes import clip, short
from rods.envs.check.runs import Step
from rods.envs.domains import domain_of
from rods.envs.protocol import ToolSpec
from rods.envs.schemas import JSON_TYPES, function_docs, tool_specs
from rods.tasks.model import environment_kind

#: The types a JSON schema knows.
SCHEMA_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})


def schema_problem(schema: Any) -> str | None:
    """What keeps a tool's parameters from being a JSON-schema object (BFCL's type names allowed), or None."""
    if not isinstance(schema, Mapping):
        return f"its parameters are a {type(schema).__name__}, not a JSON-schema object"
    kind = schema.get("type", "object")
    if not isinstance(kind, str) or JSON_TYPES.get(kind, kind) != "object":
        return f"its parameters have type {kind!r}, not 'object'"
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        return "its 'properties' is not an object"
    for name, sub in properties.items():
        if not isinstance(sub, Mapping):
            return f"parameter {name!r}: its schema is a {type(sub).__name__}, not an object"
        types = sub.get("type", [])
        for one in types if isinstance(types, list) else [types]:
            if not isinstance(one, str) or JSON_TYPES.get(one, one) not in SCHEMA_TYPES:
                return f"parameter {name!r}: {one!r} is not a JSON-schema type"
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return "its 'required' is not a list of parameter names"
    missing = [r for r in required if r not in properties]
    if missing:
        return f"required parameter(s) {missing} are not among its properties"
    return None


def list_tools(environment: str) -> tuple[dict[str, list[dict[str, Any]]], list[ToolSpec]]:
    """(class -> function docs, tool specs) of an environment name; ValueError naming why for a name that
    names no environment or whose tools cannot be listed (a missing manifest, a class that does not import)."""
    environment_kind(environment)
    try:
        classes = domain_of(environment).classes(environment)
        return function_docs(classes), tool_specs(classes)
    except ValueError:
        raise
    except Exception as err:
        raise ValueError(f"environment {environment!r}: cannot list its tools: {type(err).__name__}: {err}") from err


def check_tools(docs: Mapping[str, list[dict[str, Any]]], specs: Sequence[ToolSpec]) -> list[Finding]:
    """The tools listed (name, effect, required parameters), each schema checked."""
    if not specs:
        return [fail("tools", "the environment has no tools")]
    findings = [fail("tools", f"{doc.get('name')}: {problem}")
                for cls_docs in docs.values() for doc in cls_docs
                if (problem := schema_problem(doc.get("parameters", {}))) is not None]
    findings += [warn("tools", f"{name} is a tool of {count} classes: the last one's runs")
                 for name, count in Counter(s.name for s in specs).items() if count > 1]
    effects = Counter(s.effect for s in specs)
    listing = tuple(f"{s.name:<32} {s.effect:<8} requires: {', '.join(s.required) or '-'}" for s in specs)
    findings.insert(0, passed("tools", f"{len(specs)} tools ({effects['read']} read, {effects['write']} "
                                       f"write, {effects['unknown']} undeclared)", listing))
    if effects["unknown"]:
        findings.append(warn("tools", f"{effects['unknown']} tool(s) declare no effect (read or write): "
                                      "what they do to the state is not checked"))
    return findings


def _by_tool(steps: Iterable[Step], specs: Mapping[str, ToolSpec], effect: str) -> dict[str, list[Step]]:
    grouped: dict[str, list[Step]] = {name: [] for name, s in sorted(specs.items()) if s.effect == effect}
    for step in steps:
        if step.tool in grouped:
            grouped[step.tool].append(step)
    return grouped


def check_reads(steps: Sequence[Step], specs: Mapping[str, ToolSpec]) -> list[Finding]:
    """No call of a tool marked read changed the snapshot."""
    reads = _by_tool(steps, specs, "read")
    if not reads:
        return [passed("read-tools", "no tool is marked read")]
    findings = [fail("read-tools", f"{tool} is marked read but {clip(bad.text)} changed the state "
                                   f"({bad.change})")
                for tool, calls in reads.items() if (bad := next((s for s in calls if s.changed), None))]
    calls = sum(len(c) for c in reads.values())
    return findings or [passed("read-tools", f"{len(reads)} read tools left the state as it was in "
                                             f"{calls} calls")]


def check_writes(steps: Sequence[Step], specs: Mapping[str, ToolSpec]) -> list[Finding]:
    """Every tool marked write changed the snapshot in some successful call (judged when a gold call succeeded)."""
    findings = []
    writes = _by_tool(steps, specs, "write")
    for tool, calls in writes.items():
        done = [s for s in calls if s.error is None]
        gold = [s for s in done if s.source == "gold"]
        if any(s.changed for s in done):
            continue
        if gold:
            findings.append(fail("write-tools", f"{tool} is marked write but changed nothing in "
                                                f"{len(done)} successful calls, {len(gold)} of them gold "
                                                f"(e.g. {clip(gold[0].text)})"))
        elif done:
            findings.append(warn("write-tools", f"{tool} changed nothing in {len(done)} successful drawn "
                                                "calls (no gold call of it to judge by)"))
        else:
            findings.append(warn("write-tools", f"{tool} never succeeded in {len(calls)} calls: give "
                                                "seeds that call it to check it"))
    if not writes:
        return [passed("write-tools", "no tool is marked write")]
    changed = len(writes) - len(findings)
    if changed and not any(f.status == "FAIL" for f in findings):
        findings.insert(0, passed("write-tools", f"{changed} of {len(writes)} write tools changed the state "
                                                 "in a successful call"))
    return findings


def check_errors(steps: Sequence[Step]) -> list[Finding]:
    """Calls that cannot succeed (an unknown tool, a missing required argument) come back as errors."""
    expected = [s for s in steps if s.source in ("unknown tool", "missing argument")]
    findings = [fail("errors", f"{clip(s.text)} ({s.source}) returned {short(s.result)}, which is no error by "
                               "the domain's convention") for s in expected if s.error is None]
    missing = sum(s.source == "missing argument" for s in expected)
    return findings or [passed("errors", f"an unknown tool and {missing} calls without a required argument "
                                         "come back as errors")]


def check_error_convention(steps: Sequence[Step]) -> list[Finding]:
    """No result the convention takes for a success reads as an error (data the call or state holds aside)."""
    findings, seen = [], set()
    for step in steps:
        if step.error_word is not None and step.tool not in seen:
            seen.add(step.tool)
            findings.append(fail("error-convention", f"undetected error convention: {clip(step.text)} returned "
                                 f"{short(step.result)}, which reads as an error ({step.error_word!r}) but is no "
                                 "error by the domain's convention (raise, return {\"error\": ...}, or declare "
                                 "rods_error)"))
    return findings or [passed("error-convention", "no successful result reads as an error")]
