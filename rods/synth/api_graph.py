"""The API graph over an environment's tools (docs/design.md §4.1, §4.8).

Nodes are the functions of the environment's classes (a domain's API classes,
a Python environment's tools, an MCP server's), with typed parameters and
responses read from their function docs. An edge f -> g says f enables g: in
some train-split ground truth, an argument of a g call equals a value in an f
call's result or a value the f call created in the state (the data-flow edges
of :mod:`rods.synth.profile`, from executions). Each node also records its
*effect*, seen in those executions: "write" if a call ever changed the state,
"read" if none did (always for a stateless class), "unknown" if the
function was never executed (no siblings). A tool whose docs declare its
effect (`@tool("read")` / `@tool("write")`) keeps the declared one.

A domain with reference tasks (`Domain.reference_tasks`: BFCL's train split)
has one graph learned from them (`reference_graph`); any other environment's
is learned from the seed tasks at hand (`graph_for`, cached per environment
and grown as new seeds arrive).

The planner samples new call sequences from it (:mod:`rods.synth.planner`):
each position draws a function of its class, preferring the seed position's
effect, functions the graph has seen taking values from the functions chosen
at the position's data-flow sources (`edges`), and, where later calls need a
value, functions seen feeding their class. `siblings` (same class, effect and
typed required parameters: `cat` / `tail`, `add` / `multiply`) remain as a
description of the graph.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rods.envs.domains import domain_of
from rods.envs.schemas import function_docs as schema_docs
from rods.synth.declared import class_source
from rods.synth.value_kinds import field_values, is_filler, is_phrase, is_prose, leaves
from rods.synth.value_model import ValueModel
from rods.tasks.model import Task

if TYPE_CHECKING:
    from rods.synth.phrasings import Phrasing

logger = logging.getLogger(__name__)


def function_docs(classes: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Function name -> doc (with its class under "class"), read by `rods.envs.schemas`."""
    return _docs(tuple(classes))


@lru_cache(maxsize=64)
def _docs(classes: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    return {
        doc["name"]: dict(doc, **{"class": cls})
        for cls, docs in schema_docs(classes).items()
        for doc in docs
    }


def describe(doc: dict[str, Any]) -> str:
    """The plain description of a function, without a class preamble ("... Tool description: ...")."""
    text = doc.get("description", "")
    if "Tool description:" in text:
        text = text.split("Tool description:", 1)[1]
    return text.strip()


@dataclass
class FunctionNode:
    """One function: its class, typed parameters, response fields, observed effect."""

    name: str
    api_class: str
    params: dict[str, str]
    required: tuple[str, ...]
    response: dict[str, str]
    description: str
    effect: str = "read"
    calls_seen: int = 0

    def signature(self) -> tuple:
        """What a sibling must share: class, effect, typed required parameters."""
        return (self.api_class, self.effect, tuple(sorted((p, self.params[p]) for p in self.required)))


@dataclass
class APIGraph:
    """Functions and the enabling edges between them, with counts."""

    nodes: dict[str, FunctionNode]
    edges: Counter = field(default_factory=Counter)  # (f, g) -> times seen
    #: (f, g, parameter): a value f produced given to g as that parameter, in the tasks learned from.
    flows: set[tuple[str, str, str]] = field(default_factory=set)
    #: class -> the sentences (`is_prose`) its human tasks hold in their configs and pass in their calls: what a
    #: variant's text is drawn from (`ValueRemapper`), so a file says something, not "Glade Apple Bucket".
    prose: dict[str, list[str]] = field(default_factory=dict)
    #: "class/field" -> the phrases (`is_phrase`: titles, names, notes, sentences) its human tasks' configs hold
    #: under that field: what a variant's phrase there is drawn from (a file's text for a file's text).
    field_texts: dict[str, list[str]] = field(default_factory=dict)
    #: function -> parameter -> the numbers its human tasks gave it: the size of a variant's own number there
    #: (`rods.synth.planner.seed_scales`; a certificate of 150, not of 18147).
    numbers: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    #: What each state field and parameter may hold (`rods.synth.value_model`), inferred from the same tasks.
    values: ValueModel = field(default_factory=ValueModel)
    #: function -> the optional arguments each human call of it passed, for a function every human call passes
    #: some to (`update_patient` always changes a phone or a plan): a variant's call passes one of those sets too.
    usual_optional: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: function -> how the human tasks' people asked for it (`rods.synth.phrasings`), mined from the same tasks.
    phrasings: dict[str, list[Phrasing]] = field(default_factory=dict)

    @cached_property
    def typical_numbers(self) -> dict[str, dict[str, float]]:
        """Function -> parameter -> the middle of the numbers its human tasks gave it (`numbers`), computed once."""
        return {name: {p: sorted(v)[len(v) // 2] for p, v in params.items() if v}
                for name, params in self.numbers.items()}

    @classmethod
    def from_docs(cls, classes: Iterable[str]) -> APIGraph:
        nodes = {}
        for name, doc in function_docs(classes).items():
            props = doc.get("parameters", {}).get("properties", {})
            resp = doc.get("response", {}).get("properties", {})
            nodes[name] = FunctionNode(
                name=name,
                api_class=doc["class"],
                params={p: spec.get("type", "any") for p, spec in props.items()},
                required=tuple(doc.get("parameters", {}).get("required", [])),
                response={p: spec.get("type", "any") for p, spec in resp.items()},
                description=describe(doc),
                effect=doc["effect"] if doc.get("effect") in ("read", "write") else "read",
            )
        return cls(nodes)

    @classmethod
    def learn(cls, tasks: list[Task], classes: Iterable[str]) -> APIGraph:
        """The graph from the docs of `classes` and the executions of the tasks' ground truth."""
        from rods.synth.coherence import flows_of
        from rods.synth.phrasings import mine as mine_phrasings
        from rods.synth.profile import data_flow_edges, trace_task

        graph = cls.from_docs(classes)
        params = {name: list(node.params) for name, node in graph.nodes.items()}
        docs = function_docs(classes)
        declared = {name: doc["effect"] for name, doc in docs.items()
                    if doc.get("effect") in ("read", "write")}
        writes: Counter = Counter()
        prose: dict[str, set[str]] = defaultdict(set)
        field_texts: dict[str, set[str]] = defaultdict(set)
        optional: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for task in tasks:
            for owner, state in task.initial_config.items():
                prose[owner] |= {v for v in leaves(state) if is_prose(v) and not is_filler(v)}
                for at, value in field_values(state):
                    if is_phrase(value) and not is_filler(value):
                        field_texts[f"{owner}/{at}"].add(value)
            trace = trace_task(task)
            for call, changed in zip(trace.calls, trace.changed):
                for param, value in call.arguments.items():
                    if isinstance(value, (int, float)) and not isinstance(value, bool):
                        graph.numbers.setdefault(call.name, {}).setdefault(param, []).append(value)
                if call.name in graph.nodes:
                    graph.nodes[call.name].calls_seen += 1
                    optional[call.name].append({p: v for p, v in call.arguments.items()
                                                if p not in graph.nodes[call.name].required})
                    prose[graph.nodes[call.name].api_class] |= {v for v in call.arguments.values()
                                                                  if is_prose(v) and not is_filler(v)}
                    if changed:
                        writes[call.name] += 1
            for i, j in data_flow_edges(trace):
                graph.edges[(trace.calls[i].name, trace.calls[j].name)] += 1
            graph.flows |= {(trace.calls[f.source].name, trace.calls[f.target].name, f.param)
                            for f in flows_of(trace, params)}
        for name, node in graph.nodes.items():
            if name in declared:
                node.effect = declared[name]  # the environment says so (@tool)
            elif domain_of(node.api_class).stateless(node.api_class):
                node.effect = "read"  # no state to change
            else:
                node.effect = "unknown" if not node.calls_seen else "write" if writes[name] else "read"
        graph.prose = {owner: sorted(texts) for owner, texts in sorted(prose.items()) if texts}
        graph.field_texts = {at: sorted(texts) for at, texts in sorted(field_texts.items())}
        graph.values = ValueModel.infer(tasks, docs, {c: class_source(c) for c in classes})
        graph.phrasings = mine_phrasings(tasks)
        graph.usual_optional = {name: passed for name, passed in sorted(optional.items()) if all(passed)}
        logger.info("API graph: %d functions, %d edges from %d tasks", len(graph.nodes), len(graph.edges), len(tasks))
        return graph

    def successors(self, name: str) -> list[str]:
        return sorted(g for (f, g) in self.edges if f == name)

    def siblings(self, name: str) -> list[str]:
        """Functions that can replace `name` in a plan (same class, effect, typed required params).

        Only read functions have siblings: swapping a write (touch for rm, mkdir for
        rmdir) changes what later calls find, which the seed's structure relies on.
        """
        node = self.nodes.get(name)
        if node is None or node.effect != "read":
            return []
        sig = node.signature()
        return sorted(n for n, other in self.nodes.items() if n != name and other.signature() == sig)

    # ------------------------------------------------------------ export

    def to_json(self) -> dict[str, Any]:
        return {
            "nodes": [
                {"name": n.name, "class": n.api_class, "params": n.params, "required": list(n.required),
                 "response": n.response, "effect": n.effect, "calls_seen": n.calls_seen,
                 "siblings": self.siblings(n.name)}
                for n in self.nodes.values()
            ],
            "edges": [{"source": f, "target": g, "count": c} for (f, g), c in sorted(self.edges.items())],
        }

    def save(self, path: str | Path) -> tuple[Path, Path]:
        """Write the graph as JSON at `path` and as a PNG next to it; return both paths."""
        path = Path(path)
        json_path = path if path.suffix == ".json" else path.with_suffix(".json")
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(self.to_json(), indent=1), encoding="utf-8")
        png_path = json_path.with_suffix(".png")
        self.draw(png_path)
        return json_path, png_path

    def draw(self, path: Path) -> None:
        """A PNG of the graph (matplotlib only): functions on a circle grouped by class, edge width by count."""
        import math

        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        classes = sorted({n.api_class for n in self.nodes.values()})
        order = sorted(self.nodes, key=lambda n: (classes.index(self.nodes[n].api_class), n))
        slots = len(order) + len(classes)  # one empty slot between classes
        pos, slot, previous = {}, 0, None
        for name in order:
            if previous is not None and self.nodes[name].api_class != previous:
                slot += 1
            angle = 2 * math.pi * slot / slots
            pos[name] = (math.cos(angle), math.sin(angle))
            previous, slot = self.nodes[name].api_class, slot + 1
        cmap = plt.get_cmap("tab10")
        colour = {c: cmap(i) for i, c in enumerate(classes)}
        fig, ax = plt.subplots(figsize=(14, 14))
        for (f, g), count in self.edges.items():
            if f in pos and g in pos and f != g:
                ax.annotate("", xy=pos[g], xytext=pos[f],
                            arrowprops={"arrowstyle": "->", "lw": 0.3 + min(3.0, count / 5), "alpha": 0.45,
                                        "color": colour[self.nodes[f].api_class],
                                        "connectionstyle": "arc3,rad=0.15"})
        for name, (x, y) in pos.items():
            ax.scatter([x], [y], s=40, color=colour[self.nodes[name].api_class], zorder=3)
            angle = math.degrees(math.atan2(y, x))
            flip = 90 < abs(angle)
            ax.text(1.04 * x, 1.04 * y, name, fontsize=6, rotation=angle + (180 if flip else 0),
                    ha="right" if flip else "left", va="center", rotation_mode="anchor")
        for c in classes:
            ax.scatter([], [], color=colour[c], label=c)
        ax.legend(loc="upper left", fontsize=8)
        ax.set_title(f"API graph: {len(self.nodes)} functions, {len(self.edges)} enabling edges")
        ax.set_xlim(-1.5, 1.5)
        ax.set_ylim(-1.5, 1.5)
        ax.set_aspect("equal")
        ax.axis("off")
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)


#: domain name -> its reference graph, or None for a domain without reference tasks.
_REFERENCE: dict[str, APIGraph | None] = {}


def reference_graph(environment: str) -> APIGraph | None:
    """The graph learned from the reference tasks of an environment's domain (cached per process), or None.

    The cache is looked at before the reference tasks are asked for: loading them (BFCL's train split,
    deep-copied) costs a third of a second, and the pipeline asks for an environment's graph at every stage.
    """
    domain = domain_of(environment)
    with _GRAPHS_LOCK:
        if domain.name in _REFERENCE:
            return _REFERENCE[domain.name]
    reference = domain.reference_tasks()
    graph = None if reference is None else APIGraph.learn(list(reference[1]), reference[0])
    with _GRAPHS_LOCK:
        return _REFERENCE.setdefault(domain.name, graph)


#: environment -> (ids of the seeds its graph was learned from, the graph); environment -> those seeds.
_GRAPHS: dict[str, tuple[frozenset[str], APIGraph]] = {}
_GRAPH_SEEDS: dict[str, list[Task]] = {}
_GRAPHS_LOCK = threading.Lock()


def graph_for(environment: str, seeds: Iterable[Task] = ()) -> APIGraph:
    """The API graph of an environment: its domain's `reference_graph`, else one learned from its seed tasks.

    Without reference tasks the graph comes from the tool docs plus the
    executed ground truths of every seed of the environment seen so far in
    this process (cached per environment; learned again when new seeds arrive).
    """
    reference = reference_graph(environment)
    if reference is not None:
        return reference
    mine = [s for s in seeds if s.environment == environment]
    with _GRAPHS_LOCK:
        known_ids, graph = _GRAPHS.get(environment, (frozenset(), None))
        if graph is not None:  # grow it from human seeds only (variants repeat their seeds' structure)
            mine = [s for s in mine if s.origin == "seed"]
        ids = known_ids | {s.id for s in mine}
        if graph is not None and ids == known_ids:
            return graph
        pool = {s.id: s for s in _GRAPH_SEEDS.get(environment, [])}
        pool.update({s.id: s for s in mine})
        _GRAPH_SEEDS[environment] = list(pool.values())
        classes = sorted({c for s in pool.values() for c in s.involved_classes}) or [environment]
        graph = APIGraph.learn(list(pool.values()), classes)
        _GRAPHS[environment] = (ids, graph)
        return graph


def seeds_of(environment: str) -> list[Task]:
    """The seed tasks an environment's graph was learned from (so far in this process; none for a reference graph)."""
    with _GRAPHS_LOCK:
        return list(_GRAPH_SEEDS.get(environment, []))
