"""Would a person ask this? Rule checks for a task's coherence (the paper's challenge C3; docs/design.md §4.11).

A variant can be valid by execution and still mean nothing: values that are
placeholders, a result fed into a parameter that means something else, writes
that change nothing in the end, reads nobody uses, turns with no common goal.
Each rule is a detector over a task executed on its own environment
(`rods.synth.profile.trace_task`), and reports `Violation`s by kind:

* ``degenerate_value``: a placeholder (`'None'`, `'null'`, `''`, `'Unknown'`),
  the name of a parameter or of one of the state's attributes given as a value
  (`'user_first_name'`, `name='books'`), a run of zeros (`'00000'`), or an
  amount, price or count below zero (a refund's `-688` as a certificate);
* ``precision``: a number the user would never type (7+ decimals: `35.795306000000004`)
  that no earlier call produced;
* ``id_as_name``: an id (`'M102'`, `'bk-203'`, `'USR001'`, `'raj_sanchez_7340'`:
  a word ending in two or more digits, or four digits or more; not a file name)
  given where a name, author or title is asked for;
* ``role_mismatch_flow``: a value one call produced fed into a parameter of
  another call that plays a different role: neither the source's role (the
  parameter it was given as, the result field or state map it came from) nor a
  flow the human seeds showed (`observed`) matches the parameter;
* ``superfluous_write``: a call that changes the state, whose removal leaves the
  task's final state unchanged (undone, redone, or overwritten later); or a
  call that changes the state and repeats an earlier one, arguments and all
  (cancelling one reservation three times: each refunds again, so each
  changes the state, and no one asks for it), or changes a thing an earlier
  call cancelled, deleted or removed (bags added to a cancelled reservation),
  or makes one more of a thing no later call uses beside one of the same call
  that a later call uses (two contacts added, one messaged);
* ``unused_read``: a call that changes no state, whose result no later call
  takes (a data flow, or a later text that mentions it), whose removal changes
  no later result nor the final state (nothing relied on what it set up: a
  `cd` that later calls rely on is used), and whose answer its turn's query
  does not ask for (the query neither says one of its values nor a content
  word of its name or description; the last call of a turn is always asked
  for); or a repeat of an earlier identical read with no write between; or
  a read whose answer the task already knows (`Known`: every value of it was
  in an earlier result or call), more such reads than its seed has (a variant
  beside its seed only: people ask for what they know, too);
* ``no_goal``: calls that share nothing: the task's calls fall into more
  groups than its seed's, calls joined when one feeds another, when they use a
  common distinctive value, when one's text mentions what another returned,
  or when they run on the same class; or a turn that shares nothing with the
  task's other turns (more such turns than its seed has): no flow, common
  value or mention joins it to another turn, and it neither relies on what an
  earlier turn set up nor sets up what a later one reads (its removal changes
  no later result, and its own results stay the same without the turns
  before it). The same class is not enough here: a disk-usage check and a
  folder copy run on one file system and still serve two goals. Likewise a
  read (not the task's last call) that shares no flow, mention or distinctive
  value with any other call and that no later call relies on (more such reads
  than its seed has), even when its turn asks for it: a disk-usage check
  before a copy, two orders looked up on the way to correcting a product's
  stock;
* ``out_of_domain``: a value of the state or of a call that leaves what the
  environment's value model (`rods.synth.value_model`, inferred from its
  schema, code and seeds) lets that slot hold: a category value outside its
  set (a room type the hotel has no such rooms of), a person named with words
  for things, a date far further from today than the seeds' dates are.

Rules know no domain: roles come from names (parameters, result fields, state
paths), the domain's nouns (`Domain.nouns`) and the flows seen in human seeds.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from rods.envs.calls import ToolCall
from rods.envs.contract import environment_for
from rods.envs.domains import domain_of
from rods.synth.parameters import name_words
from rods.synth.profile import Trace, linkable, produced_values, result_value, trace_task, value_paths
from rods.synth.value_kinds import is_distinctive, vocabulary_of
from rods.tasks.model import Task, content_hash

KINDS = ("degenerate_value", "precision", "id_as_name", "role_mismatch_flow", "superfluous_write",
         "unused_read", "no_goal", "out_of_domain")
#: The rules a ground truth can be held to before its queries exist (`unused_read` then only finds repeats).
PLAN_KINDS = KINDS

#: Values no person gives for a parameter.
PLACEHOLDERS = frozenset({"", "none", "null", "nil", "nan", "unknown", "undefined", "n/a", "na", "placeholder",
                          "tbd", "todo", "xxx", "string", "value"})
#: Parameter-name pieces of a sum of money or a number of things: never below zero.
QUANTITY_ROLES = frozenset({"amount", "price", "cost", "fee", "total", "quantity", "count", "balance"})
#: Parameter-name pieces that ask for a person's or a thing's name (not an id).
NAME_ROLES = frozenset({"name", "names", "author", "title", "first", "last", "surname", "nickname"})
#: Parameter-name pieces of free text a person writes (a message, a post, a note).
TEXT_ROLES = frozenset({"content", "message", "comment", "text", "body", "note", "description", "summary",
                        "title", "resolution", "reason"})
#: Name pieces that say nothing about a value's role.
GENERIC = frozenset({"id", "ids", "the", "of", "to", "a", "an", "new", "value", "values", "key", "keys", "data",
                     "info", "item", "items", "list", "result", "results", "number", "num", "str", "text"})
#: An id: a word ending in two or more digits (`M102`, `bk-203`, `USR001`, `raj_sanchez_7340`), or 4+ digits.
ID_SHAPE = re.compile(r"[A-Za-z][A-Za-z_:-]*\d{2,}|\d{4,}")


class SeedCounts(NamedTuple):
    """How much of what the relative rules count a task may have: its seed's own figures (a seed that does two
    unrelated things lets its variants do so too); the defaults judge a task on its own."""

    groups: int = 1
    isolated_turns: int = 0
    stray_reads: int = 0
    known_reads: int = 0
    undone_writes: int = 0


@dataclass(frozen=True)
class Violation:
    """One rule broken: its kind, the call (index into the task's flattened calls, or -1) and why; `turn` when
    the whole turn of that call is at fault (a turn that shares nothing with the others)."""

    kind: str
    call: int
    detail: str
    turn: bool = False

    def __str__(self) -> str:
        where = f"call {self.call}: " if self.call >= 0 else ""
        return f"{self.kind}: {where}{self.detail}"


@functools.lru_cache(maxsize=8192)
def pieces(name: str) -> frozenset[str]:
    """The lower-case words of a name (`fuelLevel`, `user_first_name`, `orders/o1#key`), plurals made singular
    (cached: the resolver asks for the same few hundred names' roles at every trial)."""
    words = re.findall(r"[a-z]+", re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).lower())
    return frozenset(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words)


def role(name: str, nouns: dict[str, str]) -> frozenset[str]:
    """What a parameter (or field) is about: its name's words but generic ones, and the domain's noun for it."""
    out = pieces(name) - GENERIC
    if name in nouns:
        out |= pieces(nouns[name]) - GENERIC
    return out or pieces(name)


@dataclass(frozen=True)
class Flow:
    """A value call `source` produced, given to call `target` as `param`."""

    source: int
    target: int
    param: str
    value: Any


def arguments_of(call: ToolCall, params: list[str]) -> list[tuple[str, Any]]:
    """(parameter, scalar) pairs of a call, positional arguments named by `params`, lists flattened, and the
    fields of records a list holds named by their keys (`lines=[{'sku': ..., 'qty': 5}]`: ('sku', ...))."""
    named = dict(call.arguments)
    for i, value in enumerate(call.args):
        named.setdefault(params[i] if i < len(params) else f"arg{i}", value)
    out: list[tuple[str, Any]] = []
    stack = list(reversed(named.items()))
    while stack:
        param, value = stack.pop()
        if isinstance(value, list):
            stack.extend((param, v) for v in reversed(value))
        elif isinstance(value, dict):
            stack.extend((k, v) for k, v in reversed(list(value.items())) if isinstance(k, str))
        else:
            out.append((param, value))
    return out


def flows_of(trace: Trace, params: dict[str, list[str]]) -> list[Flow]:
    """Every data flow of a trace: for each linkable argument, the latest earlier call that produced it."""
    produced = [produced_values(r, c) for r, c in zip(trace.results, trace.created)]
    out = []
    for j, call in enumerate(trace.calls):
        for param, value in arguments_of(call, params.get(call.name, [])):
            if not linkable(value) or not isinstance(value, (str, int, float)):
                continue
            source = next((i for i in range(j - 1, -1, -1) if value in produced[i]), None)
            if source is not None:
                out.append(Flow(source, j, param, value))
    return out


class Coherence:
    """The rule checks for tasks of one environment (see the module docstring).

    `observed`: (source function, target function, parameter) flows seen in the
    environment's human seeds, which count as role-matched whatever their names.
    """

    def __init__(self, environment: str, classes: Iterable[str], observed: Iterable[tuple[str, str, str]] = ()):
        self.observed: set[tuple[str, str, str]] = set()
        from rods.synth.api_graph import function_docs

        self.environment = environment
        self.docs = function_docs(list(classes))
        self.params = {name: list(doc.get("parameters", {}).get("properties", {})) for name, doc in self.docs.items()}
        self.words = vocabulary_of(environment)
        self.nouns: dict[str, str] = {}
        for cls in classes:
            self.nouns.update(domain_of(cls).nouns())
        self.observe(observed)
        self._seed_groups: dict[str, SeedCounts] = {}
        self._roles_in: dict[str, dict[Any, set[str]]] = {}  # result text -> `_result_roles`, a few recent
        self.parameter_names = {p for names in self.params.values() for p in names}

    def observe(self, flows: Iterable[tuple[str, str, str]]) -> None:
        """Count (source function, target function, parameter) flows as role-matched, and any flow from that
        source function into a parameter of that name."""
        self.observed |= set(flows)
        self.observed_into = {(f, p) for f, _, p in self.observed}

    @classmethod
    def learned(cls, seeds: list[Task]) -> Coherence:
        """Rules for the seeds' environment, with the flows their executions show."""
        classes = sorted({c for s in seeds for c in s.involved_classes})
        return cls(seeds[0].environment, classes, observed_flows(seeds, rules_params(classes)))

    # -- the rules -----------------------------------------------------------------------------------

    def violations(self, task: Task, trace: Trace | None = None, seed: Task | None = None,
                   kinds: Iterable[str] = KINDS, queries: bool = True) -> list[Violation]:
        """Every rule of `kinds` the task breaks (an empty list: none); a variant's `no_goal` is judged against
        its seed's own grouping (a seed that does two unrelated things lets its variants do so too). Without
        `queries` (a ground truth whose queries are not written yet), `unused_read` finds only repeats."""
        wanted = set(kinds)
        allowed = SeedCounts() if seed is None or "no_goal" not in wanted else self.seed_groups(seed)
        trace = trace or trace_task(task)
        flows = flows_of(trace, self.params)
        found = [*self.degenerate_values(task, trace, flows), *self.id_as_name(trace),
                 *self.role_mismatches(trace, flows)]
        if "superfluous_write" in wanted:
            found += self.superfluous_writes(task, trace)
            undone = self.undone_writes(trace)
            if len(undone) > (self.seed_groups(seed).undone_writes if seed is not None else 0):
                found += [Violation("superfluous_write", j, f"{trace.calls[j].name}: ends what an earlier call of "
                                    "the task did (booked, then cancelled)") for j in undone]
        if "unused_read" in wanted:
            found += self.unused_reads(task, trace, flows, queries)
            if seed is not None and (not found or found[-1].kind != "unused_read"):  # judged beside its seed only
                found += self.known_read(task, trace, self.seed_groups(seed).known_reads)
        if "out_of_domain" in wanted:
            found += self.out_of_domain(task, trace)
        if "no_goal" in wanted:
            found += self.no_goal(trace, flows, allowed.groups)
            if not found or found[-1].kind != "no_goal":
                found += self.isolated_turn(task, trace, flows, allowed.isolated_turns)
            if not found or found[-1].kind != "no_goal":
                found += self.stray_read(task, trace, flows, allowed.stray_reads)
        return [v for v in found if v.kind in wanted]

    def out_of_domain(self, task: Task, trace: Trace) -> list[Violation]:
        """Values the environment's value model does not admit (one violation, naming the first few)."""
        from rods.synth.api_graph import graph_for

        broken = graph_for(self.environment).values.violations(task, trace.calls)
        return [Violation("out_of_domain", -1, "; ".join(broken[:3]))] if broken else []

    def seed_groups(self, seed: Task) -> SeedCounts:
        """What a variant of `seed` is allowed (`SeedCounts`), computed once per seed content."""
        key = content_hash(seed)
        if key not in self._seed_groups:
            trace = trace_task(seed)
            flows = flows_of(trace, self.params)
            self._seed_groups[key] = SeedCounts(self.groups(trace, flows), len(self.isolated_turns(seed, trace, flows)),
                                                len(self.stray_reads(seed, trace, flows)),
                                                len(self.known_reads(seed, trace)),
                                                len(self.undone_writes(trace)))
        return self._seed_groups[key]

    def degenerate_values(self, task: Task, trace: Trace, flows: list[Flow]) -> list[Violation]:
        attributes = {k for state in task.initial_config.values() for k in state}
        fed = {(f.target, f.param) for f in flows}
        out = []
        for j, call in enumerate(trace.calls):
            enum = self._enums(call.name)
            for param, value in arguments_of(call, self.params.get(call.name, [])):
                if value in enum.get(param, ()):
                    continue
                if isinstance(value, str):
                    text = value.strip()
                    if text.lower() in PLACEHOLDERS:
                        out.append(Violation("degenerate_value", j, f"{call.name}({param}={value!r}): a placeholder"))
                    elif text in self.parameter_names or text in attributes:
                        out.append(Violation("degenerate_value", j,
                                             f"{call.name}({param}={value!r}): a parameter or attribute name as a "
                                             "value"))
                    elif len(text) >= 3 and set(text) == {"0"}:
                        out.append(Violation("degenerate_value", j, f"{call.name}({param}={value!r}): a filler"))
                elif (isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0
                      and pieces(param) & QUANTITY_ROLES):
                    out.append(Violation("degenerate_value", j, f"{call.name}({param}={value!r}): a negative amount"))
                elif isinstance(value, float) and (j, param) not in fed and _decimals(value) >= 7:
                    out.append(Violation("precision", j, f"{call.name}({param}={value!r}): no one types that"))
        return out

    def id_as_name(self, trace: Trace) -> list[Violation]:
        out = []
        for j, call in enumerate(trace.calls):
            for param, value in arguments_of(call, self.params.get(call.name, [])):
                names = pieces(param)
                if not (names & NAME_ROLES) or names & {"id", "ids"} or not isinstance(value, str):
                    continue
                if ID_SHAPE.fullmatch(value) and not _file_like(value):
                    out.append(Violation("id_as_name", j, f"{call.name}({param}={value!r}): an id where a name goes"))
        return out

    def flow_fits(self, source: ToolCall, result: str, created_at: dict[Any, str], target: str, param: str,
                  value: Any) -> bool:
        """Whether `value`, which call `source` produced (its result, or created at `created_at[value]`), plays
        the role of `target`'s parameter `param`: a flow the seeds showed from that function into that parameter,
        or a role in common (see `source_roles`)."""
        if (source.name, param) in self.observed_into or (source.name, target, param) in self.observed:
            return True
        return bool(role(param, self.nouns) & self.source_roles(source, result, created_at, value))

    def role_mismatches(self, trace: Trace, flows: list[Flow]) -> list[Violation]:
        out = []
        for flow in flows:
            source, target = trace.calls[flow.source], trace.calls[flow.target]
            created_at = trace.created_at[flow.source] if trace.created_at else {}
            if self.flow_fits(source, trace.results[flow.source], created_at, target.name, flow.param, flow.value):
                continue
            out.append(Violation("role_mismatch_flow", flow.target,
                                 f"{source.name} -> {target.name}({flow.param}={flow.value!r}): the value plays "
                                 "another role where it comes from"))
        return out

    def undone_writes(self, trace: Trace) -> list[int]:
        """Writes that end (cancel, delete, remove: `_ends`) a thing an earlier write of the task made or changed:
        a plan that undoes itself, which no person asks for unless the seed does so."""
        ends = [set(_ends(call, self.params.get(call.name, []))) if changed else set()
                for call, changed in zip(trace.calls, trace.changed)]
        return [j for j, ended in enumerate(ends) if ended and any(
            trace.changed[i] and not ends[i]
            and (ended & _named_values(trace.calls[i]) or any(v in trace.results[i] for v in ended))
            for i in range(j))]

    def superfluous_writes(self, task: Task, trace: Trace) -> list[Violation]:
        writes = [j for j, changed in enumerate(trace.changed) if changed]
        if not writes:
            return []
        out = []
        ended: dict[Any, str] = {}  # value -> the call that cancelled, deleted or removed the thing it names
        for j in writes:  # no human seed of BFCL's or tau2 airline's does either of these
            call = trace.calls[j]
            gone = ended.keys() & _named_values(call)
            if any(same_call(trace.calls[i], call) for i in writes if i < j):
                out.append(Violation("superfluous_write", j, f"{call.name}: the same call again"))
            elif gone:
                out.append(Violation("superfluous_write", j, f"{call.name}: changes what "
                                     f"{ended[next(iter(gone))]} ended"))
            ended.update(dict.fromkeys(_ends(call, self.params.get(call.name, [])), call.name))
        used = {f.source for f in flows_of(trace, self.params)}  # calls whose results a later call takes
        for j in writes:  # two contacts added and one messaged: the other is made for nothing
            name = trace.calls[j].name
            if j not in used and any(i in used and trace.calls[i].name == name for i in writes) \
                    and j not in {v.call for v in out}:
                out.append(Violation("superfluous_write", j, f"{name}: makes one more that nothing uses, beside "
                                     "one that a later call uses"))
        flagged = {v.call for v in out}
        final = _final_state(task, trace.calls)
        for j in writes:
            if j in flagged:
                continue
            kept = trace.calls[:j] + trace.calls[j + 1:]
            if _final_state(task, kept) == final:
                out.append(Violation("superfluous_write", j, f"{trace.calls[j].name}: without it the task ends in "
                                     "the same state"))
        return out

    def unused_reads(self, task: Task, trace: Trace, flows: list[Flow], queries: bool = True) -> list[Violation]:
        last_of_turn = {max(j for j, t in enumerate(trace.turn_of) if t == turn) for turn in set(trace.turn_of)}
        taken = {f.source for f in flows} | self._mentioned(trace)
        full: tuple[list[str], str] | None = None
        out = []
        for j, call in enumerate(trace.calls):
            if trace.changed[j]:
                continue
            earlier = [i for i in range(j) if same_call(trace.calls[i], call)]
            if earlier and not any(trace.changed[k] for k in range(earlier[-1] + 1, j)):
                out.append(Violation("unused_read", j, f"{call.name}: asks again what an earlier call just read"))
                continue
            if not queries or j in last_of_turn or j in taken or self._asked(task, trace, j):
                continue
            full = full or _run(task, trace.calls)
            results, final = _run(task, trace.calls[:j] + trace.calls[j + 1:])
            if results[j:] == full[0][j + 1:] and final == full[1]:
                out.append(Violation("unused_read", j, f"{call.name}: nothing later uses what it reads, and the "
                                     "turn asks for another call's answer"))
        return out

    def known_read(self, task: Task, trace: Trace, allowed: int = 0) -> list[Violation]:
        known = self.known_reads(task, trace)
        if len(known) <= allowed:
            return []
        return [Violation("unused_read", known[-1], f"{trace.calls[known[-1]].name}: its answer is already known "
                          f"(its seed has {allowed} such reads)")]

    def known_reads(self, task: Task, trace: Trace) -> list[int]:
        """The reads whose answer the task already knows (`Known.answers`). A read later calls rely on (a `cd`:
        without it a later result or the final state differs) is not counted."""
        out: list[int] = []
        final: list[str] = []
        earlier = Known()
        for j, call in enumerate(trace.calls):
            mine = [v for _, v in arguments_of(call, self.params.get(call.name, []))]
            if not trace.changed[j] and earlier.answers(trace.results[j], mine) and _unneeded(task, trace, j, final):
                out.append(j)
            earlier.add(trace.results[j], mine)
        return out

    def no_goal(self, trace: Trace, flows: list[Flow], allowed: int = 1) -> list[Violation]:
        groups = self.groups(trace, flows)
        if groups <= allowed:
            return []
        return [Violation("no_goal", -1, f"its calls fall into {groups} groups that share no value, flow or "
                          f"class (its seed: {allowed})")]

    def isolated_turn(self, task: Task, trace: Trace, flows: list[Flow], allowed: int = 0) -> list[Violation]:
        alone = self.isolated_turns(task, trace, flows)
        if len(alone) <= allowed:
            return []
        return [Violation("no_goal", min(j for j, t in enumerate(trace.turn_of) if t == alone[-1]),
                          f"turn {alone[-1]} shares no value, flow or state with the other turns (its seed has "
                          f"{allowed} such turns)", turn=True)]

    def isolated_turns(self, task: Task, trace: Trace, flows: list[Flow]) -> list[int]:
        """The turns with calls that share nothing with the task's other turns (see the module docstring): one
        replay without each turn, until every turn is joined."""
        turns = sorted(set(trace.turn_of))
        if len(turns) < 2:
            return []
        linked: set[int] = set()

        def link(i: int, j: int) -> None:
            a, b = trace.turn_of[i], trace.turn_of[j]
            if a != b:
                linked.update((a, b))

        for flow in flows:
            link(flow.source, flow.target)
        for i, j in self._mentions(trace):
            link(i, j)
        for i, j in self._common_values(trace):
            link(i, j)
        final = None
        for t in turns[:-1]:  # what a turn sets up: without it, a later turn reads or ends differently
            if linked >= set(turns):
                break
            others = [j for j, u in enumerate(trace.turn_of) if u != t]
            results, state = _run(task, [trace.calls[j] for j in others])
            for j, r in zip(others, results):
                if trace.turn_of[j] > t and r != trace.results[j]:
                    linked.update((t, trace.turn_of[j]))
            if not any(trace.changed[j] for j, u in enumerate(trace.turn_of) if u == t):
                final = final or _final_state(task, trace.calls)
                if state != final:  # it changed nothing itself (a `cd`): a later turn's write relied on it
                    later = [u for j, u in enumerate(trace.turn_of) if u > t and trace.changed[j]]
                    linked.update((t, *later))
        return [t for t in turns if t not in linked]

    def stray_read(self, task: Task, trace: Trace, flows: list[Flow], allowed: int = 0) -> list[Violation]:
        stray = self.stray_reads(task, trace, flows)
        if len(stray) <= allowed:
            return []
        return [Violation("no_goal", stray[-1], f"{trace.calls[stray[-1]].name}: a read that shares no value, flow "
                          f"or state with the task's other calls (its seed has {allowed} such reads)")]

    def stray_reads(self, task: Task, trace: Trace, flows: list[Flow]) -> list[int]:
        """The reads (but the task's last call, its closing question) that share nothing with the task's other
        calls: no flow, mention or distinctive value joins them to another call, and without them no later call
        reads or ends differently (a `cd` the later calls rely on is not stray). A disk-usage check in a task
        about copying a file serves no goal of that task, even when its turn asks for it; nor does looking up two
        orders on the way to correcting a product's stock ("get order 'SO-2927', get order 'SO-0686', and then
        adjust the stock ..."), a step a reader takes for an unrelated opening."""
        joined = {f.source for f in flows} | {f.target for f in flows}
        for i, j in self._mentions(trace):
            joined |= {i, j}
        for i, j in self._common_values(trace):
            joined |= {i, j}
        final: list[str] = []
        out = []
        for j in range(len(trace.calls) - 1):
            if trace.changed[j] or j in joined:
                continue
            if _unneeded(task, trace, j, final):
                out.append(j)
        return out

    def groups(self, trace: Trace, flows: list[Flow] | None = None) -> int:
        """How many groups of calls share nothing (see the module docstring)."""
        n = len(trace.calls)
        group = list(range(n))

        def find(i: int) -> int:
            while group[i] != i:
                group[i] = group[group[i]]
                i = group[i]
            return i

        def join(i: int, j: int) -> None:
            group[find(i)] = find(j)

        for flow in flows if flows is not None else flows_of(trace, self.params):
            join(flow.source, flow.target)
        for i, j in self._mentions(trace):
            join(i, j)
        for i, j in self._common_values(trace):
            join(i, j)
        owners: dict[str, int] = {}
        for j, call in enumerate(trace.calls):
            join(owners.setdefault(self.docs.get(call.name, {}).get("class", ""), j), j)
        return len({find(j) for j in range(n)})

    def _common_values(self, trace: Trace) -> list[tuple[int, int]]:
        """(i, j): call j names a distinctive value the first call i naming it named too (the same file, order)."""
        first: dict[str, int] = {}
        out = []
        for j, call in enumerate(trace.calls):
            for _, value in arguments_of(call, self.params.get(call.name, [])):
                if isinstance(value, (str, int, float)) and is_distinctive(value, self.words):
                    i = first.setdefault(json.dumps(value), j)
                    if i != j:
                        out.append((i, j))
        return out

    def _mentions(self, trace: Trace) -> list[tuple[int, int]]:
        """(i, j): an argument of call j mentions a distinctive word or a number (3+ digits) call i returned or
        was given as text (a result retold: "post the sorted lines", "write the total, 205 bytes")."""
        said = [(mentioned_words(r) | {w for _, v in arguments_of(c, self.params.get(c.name, [])) if isinstance(v, str)
                              for w in mentioned_words(v)}) - self.words for r, c in zip(trace.results, trace.calls)]
        out = []
        for j, call in enumerate(trace.calls):
            for _, value in arguments_of(call, self.params.get(call.name, [])):
                if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                    out += [(i, j) for i in range(j) if mentioned_words(str(value)) & said[i]]
        return out

    def _mentioned(self, trace: Trace) -> set[int]:
        return {i for i, _ in self._mentions(trace)}

    # -- helpers ---------------------------------------------------------------------------------------

    def _asked(self, task: Task, trace: Trace, j: int) -> bool:
        """Whether call j's turn's query asks for it: says one of its values, or a content word of its name or
        description (compared by stem)."""
        turn = trace.turn_of[j]
        while turn > 0 and not task.question[turn]:  # a reveal turn: the request is the turn before it
            turn -= 1
        query = " ".join(m.content for m in task.question[turn])
        call = trace.calls[j]
        if any(isinstance(v, (str, int, float)) and is_distinctive(v, self.words) and str(v).lower() in query.lower()
               for _, v in arguments_of(call, self.params.get(call.name, []))):
            return True
        from rods.synth.api_graph import describe

        about = _stems(call.name.replace("_", " ") + " " + describe(self.docs.get(call.name, {})).split(". ")[0])
        return bool(about & _stems(query))

    def _enums(self, function: str) -> dict[str, list[Any]]:
        props = self.docs.get(function, {}).get("parameters", {}).get("properties", {})
        return {p: list(spec.get("enum", [])) + list((spec.get("items") or {}).get("enum", []))
                for p, spec in props.items()}

    def source_roles(self, source: ToolCall, result: str, created_at: dict[Any, str], value: Any) -> set[str]:
        """What a value meant where it came from: the source call's parameter it was given as, the result
        field or key it sat under, the state map or field it was created in; else what the source returns."""
        out: set[str] = set()
        for param, given in arguments_of(source, self.params.get(source.name, [])):
            if given == value:
                out |= role(param, self.nouns)
        try:
            out |= self._result_roles(result).get(value, frozenset())
        except TypeError:  # an unhashable value (a list) is no field's scalar and no map's key
            pass
        where = created_at.get(value)
        if where:
            steps = [s for s in re.split(r"[/.]", where) if s]
            if steps:
                last = steps[-1]
                if last.endswith("#key"):  # a key of a map: the map's name says what it is
                    out |= role(steps[-2], self.nouns) if len(steps) >= 2 else set()
                else:
                    out |= role(last, self.nouns)
        if not out:  # a bare result (a number, a sentence): what the source function returns
            out = role(source.name, self.nouns)
        return out

    def _result_roles(self, result: str) -> dict[Any, set[str]]:
        """Each scalar of a result, and each key of a map in it, with the roles it plays there: the field it sits
        under, or the map's own name (a synthesis asks this for many values of the same few results)."""
        found = self._roles_in.get(result)
        if found is None:
            found = {}
            stack: list[tuple[str | None, Any]] = [(None, result_value(result))]
            while stack:  # `name`: the nearest field name above the node
                name, node = stack.pop()
                if isinstance(node, dict):
                    if name:
                        for key in node:
                            found.setdefault(key, set()).update(role(name, self.nouns))
                    stack.extend((k if isinstance(k, str) else name, v) for k, v in node.items())
                elif isinstance(node, (list, tuple)):
                    stack.extend((name, v) for v in node)
                elif name:
                    found.setdefault(node, set()).update(role(name, self.nouns))
            if len(self._roles_in) >= 64:
                self._roles_in.clear()
            self._roles_in[result] = found
        return found


class Known:
    """What a task's earlier calls told: their results' and arguments' texts and numbers; `answers` says
    whether a read's result adds nothing to it."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.numbers: set[float] = set()

    def add(self, result: str, arguments: Iterable[Any]) -> None:
        values = [v for _, v in value_paths(result_value(result)) if not isinstance(v, bool)]
        self.texts += [v for v in [*values, *arguments] if isinstance(v, str)]
        self.numbers |= {v for v in values if isinstance(v, (int, float))}

    def answers(self, result: str, arguments: Iterable[Any]) -> bool:
        """Whether the result is known already: it tells something (a text or a number), and every text and
        number in it appears in an earlier result or call (the end of a file whose whole text was just shown, a
        reservation the cancellation just returned). A result that only repeats the call's own arguments (a
        `cd`'s new folder) is an acknowledgement, not an answer; an empty one is left to the other rules."""
        mine = [v for v in arguments if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
        told = [v for _, v in value_paths(result_value(result)) if not isinstance(v, bool)
                and (isinstance(v, (int, float)) or (isinstance(v, str) and v.strip()))]
        if not told or all(v in mine for v in told):
            return False
        return all(v in self.numbers if isinstance(v, (int, float)) else any(v.strip() in t for t in self.texts)
                   for v in told)


def rules_params(classes: list[str]) -> dict[str, list[str]]:
    """Function -> its parameters in doc order, for the classes."""
    from rods.synth.api_graph import function_docs

    return {name: list(doc.get("parameters", {}).get("properties", {})) for name, doc in function_docs(classes).items()}


def observed_flows(tasks: Iterable[Task], params: dict[str, list[str]]) -> set[tuple[str, str, str]]:
    """(source function, target function, parameter) of every data flow in the tasks' executed ground truths."""
    out = set()
    for task in tasks:
        trace = trace_task(task)
        out |= {(trace.calls[f.source].name, trace.calls[f.target].name, f.param) for f in flows_of(trace, params)}
    return out


def _keys(state: Any) -> set[str]:
    out: set[str] = set()
    stack = [state]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            out |= {k for k in node if isinstance(k, str)}
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return out


def _file_like(value: str) -> bool:
    return re.fullmatch(r"[\w-]+\.[A-Za-z]{1,5}", value) is not None


def _decimals(value: float) -> int:
    text = repr(value)
    return len(text.split(".")[1]) if "." in text and "e" not in text else 0


#: First words of a function that ends the thing it names (`cancel_reservation`, `rm`, `delete_message`).
END_VERBS = frozenset({"cancel", "delete", "remove", "rm", "rmdir", "close", "revoke", "terminate", "void", "drop"})


def _ends(call: ToolCall, params: list[str]) -> list[Any]:
    """The values naming what `call` ends: its arguments whose parameter is the thing its name says it ends
    (`cancel_reservation(reservation_id=...)`; a bare `rm(file_name=...)` ends what it is given;
    `remove_stock_from_watchlist(symbol=...)` ends a watchlist entry, not the stock)."""
    verb = (name_words(call.name) or [""])[0]
    if verb not in END_VERBS:
        return []
    thing = pieces(call.name) - {verb}
    return [v for p, v in arguments_of(call, params)
            if isinstance(v, str) and (not thing or pieces(p) - {"id", "name"} <= thing)]


def _named_values(call: ToolCall) -> set:
    return {v for v in [*call.arguments.values(), *call.args] if isinstance(v, str)}


def same_call(a: ToolCall, b: ToolCall) -> bool:
    """The same function with the same arguments."""
    return a.name == b.name and a.arguments == b.arguments and a.args == b.args


def _unneeded(task: Task, trace: Trace, j: int, final: list[str]) -> bool:
    """Whether no later call relies on call j: replayed without it, every later result and the final state stay
    the same. `final` caches the whole task's final state between calls (empty until first needed)."""
    if not final:
        final.append(_final_state(task, trace.calls))
    results, state = _run(task, trace.calls[:j] + trace.calls[j + 1:])
    return results[j:] == list(trace.results[j + 1:]) and state == final[0]


def _final_state(task: Task, calls: list[ToolCall]) -> str:
    return _run(task, calls)[1]


def _run(task: Task, calls: list[ToolCall]) -> tuple[list[str], str]:
    """The results of `calls` run on a fresh environment of the task, and its final state (JSON)."""
    env = environment_for(task)
    results = [env.execute(call) for call in calls]
    return results, json.dumps(env.snapshot(), sort_keys=True, default=str)


#: Words too common to show what a query asks for.
_PLAIN = frozenset("""the and for with from into that this what which when each every some there about
    above after before given other only also been have will would should could does made make using used more
    most than then them they these those your whose where just like must based returns return whether list item
    items value values name names current file files please could want need know""".split())


def _stems(text: str) -> set[str]:
    return {w.rstrip("s")[:5] for w in re.findall(r"[a-z]{4,}", text.lower()) if w not in _PLAIN}


def mentioned_words(text: str) -> set[str]:
    """The distinctive-looking words of a text (4+ letters, lower case) and its numbers of 3+ digits (their
    integer part), for mentions of results."""
    words = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9_.-]{3,}", text)}
    return words | {n for n in re.findall(r"(?<![\d.])(\d{3,})(?:\.\d+)?(?![\d])", text)}
