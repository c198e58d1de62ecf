"""Stage 3, Rewrite: every turn's user query in one call, anchored to the narrative.

The rewriter sees all turns' executed calls (with the values the user must
say, and which values come from earlier results) plus the narrative, and writes
all queries at once (purpose ``"rewrite"``), so later turns can refer to
earlier ones. Turn kinds tell it what each turn is for:

* ``calls``: ask for this turn's calls (for the turn before a miss_func reveal:
  the next turn's calls, which the model cannot make yet);
* ``ask_missing``: a miss_param turn: ask for the next turn's calls but leave
  out one value (``missing``);
* ``supply_missing``: give that value;
* ``reveal``: BFCL's reveal turn, no query (``question[t] == []``).

Each call carries how the environment's own users asked for its tool, with
this call's values (``asked``, `rods.synth.phrasings`), where its seeds say so.

With joint rewriting switched off (the paper's no-rewrite ablation) each
turn's query is written on its own (:meth:`Rewriter.rewrite_each`, purpose
``"rewrite.turn"``): one backend call per turn that sees only that turn's
calls, no other turn and no narrative, so cross-turn coherence is lost.

The reply model (:func:`queries_model`, whose JSON schema goes with the request)
pins the array's length to the number of turns and caps each query's length, and the call's
`max_tokens` leaves room for every query at that cap, so servers with constrained decoding get it
right and are not cut off mid-string; an answer of the wrong shape (6 queries for 5 turns) goes back to the
model for repair (`LLMBackend.chat`) and, if it still does not fit, counts as
a rejection (``llm_error:rewrite``), never as an internal error.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints, conlist, create_model

from rods.envs.calls import ToolCall
from rods.envs.domains import domain_of
from rods.llm.base import LLMBackend
from rods.llm.outcomes import noun, singular
from rods.synth.api_graph import describe, function_docs
from rods.synth.executor import Execution
from rods.synth.leak import leaks
from rods.synth.parameters import tokens
from rods.synth.phrasings import Phrasing
from rods.synth.plan import Plan
from rods.synth.profile import result_value
from rods.synth.retelling import retold_shape
from rods.synth.value_kinds import leaves
from rods.tasks.model import Task

#: Longest query a reply may hold (characters): the template backend's longest turns
#: (long lists of values) need room; BFCL's train queries: 99% within 490, the longest 932.
MAX_QUERY_CHARS = 4000
#: What the schema sent to a server allows: all queries of one rewrite together at most
#: `REWRITE_CHARS`, each between `MIN_QUERY_CHARS` and `SENT_QUERY_CHARS`.
REWRITE_CHARS = 2400
MIN_QUERY_CHARS = 240
SENT_QUERY_CHARS = 600


Query = Annotated[str, StringConstraints(max_length=MAX_QUERY_CHARS)]


def query_chars(n: int) -> int:
    """The bound of each of `n` queries in the schema a server receives."""
    return min(SENT_QUERY_CHARS, max(MIN_QUERY_CHARS, REWRITE_CHARS // max(1, n)))


def rewrite_max_tokens(n: int, floor: int) -> int:
    """The rewrite call's `max_tokens` for `n` turns (at least `floor`): every query at its bound fits
    even at one token per character, so a grammar-constrained reply always ends inside it."""
    return max(floor, 64 + n * (query_chars(n) + 8))


@functools.cache
def queries_model(n: int) -> type[BaseModel]:
    """The reply of purpose "rewrite": exactly `n` queries (one model per `n`).

    The schema sent bounds each query at `query_chars(n)`; the check allows up to
    `MAX_QUERY_CHARS` (backends that write no JSON under a grammar, like the
    template's long turns). The schema is never looser than the check.
    """

    def bound(schema: dict[str, Any]) -> None:
        schema["items"]["maxLength"] = query_chars(n)

    return create_model("Queries", queries=(conlist(Query, min_length=n, max_length=n),
                                            Field(json_schema_extra=bound)))


class TurnQuery(BaseModel):
    """The reply of purpose "rewrite.turn": one turn's query."""

    query: Query


def narrative_opening(narrative: str | None, functions: list[str], classes: list[str]) -> str:
    """The narrative's sentences that recite none of `functions` (what a first query may open with)."""
    if not narrative:
        return ""
    sentences = re.split(r"(?<=[.!?])\s+", narrative.strip())
    return " ".join(s for s in sentences if s and leaks(s, functions, classes) is None)


def phrasing(cls: str | None, function: str, doc: dict[str, Any]) -> dict[str, Any]:
    """The domain's phrase hints for one call (`Domain.outcome_phrases`, `nouns`, `forms`), for the template
    backend: its outcome phrase if the domain has one, and the nouns and forms of its parameters."""
    if cls is None:
        return {}
    domain = domain_of(cls)
    params = set(doc.get("parameters", {}).get("properties", {}))
    out: dict[str, Any] = {}
    phrase = domain.outcome_phrases().get(function)
    if phrase is not None:
        out["phrase"] = phrase
    nouns = {p: n for p, n in domain.nouns().items() if p in params}
    forms = {p: f for p, f in domain.forms().items() if p in params}
    if nouns:
        out["nouns"] = nouns
    if forms:
        out["forms"] = forms
    return out


def _call_info(plan: Plan, execution: Execution, index: int,
               records: dict[str, dict[str, Any]] | None = None,
               phrasings: dict[str, list[Phrasing]] | None = None) -> dict[str, Any]:
    call = execution.calls[index]
    doc = function_docs(plan.seed.involved_classes).get(call.name, {})
    bound = {*plan.calls[index].bindings, *plan.calls[index].retold}
    chosen = picks(plan.calls[index].bindings, execution.results)
    return {
        **({} if chosen else asked(call, bound, (phrasings or {}).get(call.name, []))),
        **phrasing(doc.get("class"), call.name, doc),
        "index": index,
        "function": call.name,
        "effect": doc.get("effect", "unknown"),
        "changed": plan.calls[index].changed,  # whether the call changed the state when it ran (None: unknown)
        "description": describe(doc) if doc else "",
        "params": {k: v.get("description", "") for k, v in doc.get("parameters", {}).get("properties", {}).items()},
        "arguments": dict(call.arguments),
        "args": list(call.args),
        "bound": sorted({*plan.calls[index].bindings, *plan.calls[index].retold}),
        "picks": chosen,
        "retold": sorted(plan.calls[index].retold),
        "retold_as": retold_as(plan, execution, index),
        "made_for": made_for(plan, execution, index),
        "field_of": field_of(plan, execution, index, records),
    }


def asked(call: ToolCall, bound: set[str], phrasings: list[Phrasing]) -> dict[str, Any]:
    """How the environment's own users asked for this tool, said with this call's values (`rods.synth.phrasings`):
    {"asked": [request, ...]} with those whose said and unsaid arguments fit the call (bound ones unsaid), or {}.
    Not for a call that picks one of several listed results: "send it" cannot say which (`_call_info`)."""
    if call.args or not phrasings:
        return {}
    taken = {b.split("[")[0] for b in bound}
    fits = [p for p in phrasings if p.fits(dict(call.arguments), taken)]
    return {"asked": [p.say(dict(call.arguments)) for p in fits]} if fits else {}


def field_of(plan: Plan, execution: Execution, index: int,
             records: dict[str, dict[str, Any]] | None = None) -> dict[str, list[str]]:
    """Values the user gives that are a field of a record this turn or the one before named: the author of the
    book just lent, the origin of the reservation just looked up -> {param: [field, the record's noun, its key]},
    so the query can say how they relate ("'Kasimir Andrade' (that book's author)"); without it, a lend
    and a search of that book's author read as two chores. `records`: `_records` of the plan's initial config,
    walked once per task by `turn_contexts`."""
    records = _records(plan.initial_config) if records is None else records
    turn = plan.calls[index].turn
    docs = function_docs(plan.seed.involved_classes)
    named = []  # (the record's noun, its key) as earlier calls of this turn and the one before named them
    for j in range(index):
        if plan.calls[j].turn >= turn - 1:
            doc = docs.get(execution.calls[j].name, {})
            nouns = phrasing(doc.get("class"), execution.calls[j].name, doc).get("nouns", {})
            named += [(noun(p, nouns), v) for p, v in execution.calls[j].arguments.items()
                      if isinstance(v, str) and v in records]
    given = {p: v for p, v in execution.calls[index].arguments.items()
             if p not in plan.calls[index].bindings and p not in plan.calls[index].retold
             and isinstance(v, str) and len(v) >= 3}
    out = {}
    for param, value in given.items():
        for key, record in reversed(named):
            field = next((f for f, x in records[record].items() if x == value and isinstance(f, str)), None)
            if field is not None and record != value:
                out[param] = [field, key, record]
                break
    return out


def _records(state: Any) -> dict[str, dict[str, Any]]:
    """The state's records (dicts of fields) by their key in a map, for `field_of`."""
    out: dict[str, dict[str, Any]] = {}
    stack = [state]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, str) and isinstance(value, dict) and value and \
                        all(not isinstance(v, dict) for v in value.values()):
                    out.setdefault(key, value)
                stack.append(value)
        elif isinstance(node, list):
            stack.extend(node)
    return out


def made_for(plan: Plan, execution: Execution, index: int) -> dict[str, str]:
    """Bound values an earlier write made for a name it was given, by that name: the user id that
    `add_contact(user_name='Ines Yilmaz')` made is 'Ines Yilmaz' to the person asking ("send it to 'Ines
    Yilmaz'", not "to that person"), as a member id `add_member(name=...)` made is that member's name."""
    out = {}
    for key, (src, _) in plan.calls[index].bindings.items():
        maker = plan.calls[src] if src < len(plan.calls) else None
        if maker is None or not maker.changed or maker.bindings or maker.retold:
            continue
        given = [*execution.calls[src].arguments.values(), *execution.calls[src].args]
        value = execution.calls[index].arguments.get(key)
        if len(given) == 1 and isinstance(given[0], str) and given[0] != value and " " in given[0].strip():
            out[key] = given[0]
    return out


def retold_as(plan: Plan, execution: Execution, index: int) -> dict[str, dict[str, str]]:
    """Per text the call passes on from an earlier result, how it was made (`rods.synth.retelling.retold_shape`): the
    query says it ("'Update:' followed by that text"), so the text the gold call posts is the one asked for."""
    arguments = execution.calls[index].arguments
    return {param: retold_shape(arguments[param], execution.results[src])
            for param, src in plan.calls[index].retold.items()
            if isinstance(arguments.get(param), str) and src < len(execution.results)}


def picks(bindings: dict[str, tuple[int, tuple]], results: list[str]) -> dict[str, list[int]]:
    """Bound values chosen from among several like items of their source's result (the second of three files
    listed): key -> [index, count], so a query can say which one without saying the value; and, when the value
    is a field of the item picked, what the items are (`["flights", 0, "origin"]` -> [0, 2, "flight"]: "the first
    flight's origin", not "the first of those origins", which the user never saw listed)."""
    out: dict[str, list[Any]] = {}
    for key, (src, path) in bindings.items():
        node = result_value(results[src]) if src < len(results) else None
        for k, step in enumerate(path):
            if _collection(node) and len(node) > 1:
                out[key] = [step if isinstance(node, list) else list(node).index(step), len(node)]
                field = path[k + 1:]
                if field and isinstance(field[-1], str) and k and isinstance(path[k - 1], str):
                    out[key].append(singular(path[k - 1].replace("_", " ")))
                break
            try:
                node = node[step]
            except (KeyError, IndexError, TypeError):
                break
    return out


def _collection(node: Any) -> bool:
    """A list, or a dict of like records keyed by id (every value a dict with the same keys)."""
    if isinstance(node, list):
        return True
    records = list(node.values()) if isinstance(node, dict) else []
    return bool(records) and all(isinstance(r, dict) and r.keys() == records[0].keys() for r in records)


def turn_contexts(plan: Plan, execution: Execution,
                  phrasings: dict[str, list[Phrasing]] | None = None) -> list[dict[str, Any]]:
    """What each turn's query must do (see the module docstring); `phrasings`: the environment's mined requests
    per function (`APIGraph.phrasings`), sent with each call they fit as `asked`."""
    seed = plan.seed
    per_turn: list[list[int]] = [[] for _ in range(seed.num_turns)]
    for j, planned in enumerate(plan.calls):
        per_turn[planned.turn].append(j)
    records = _records(plan.initial_config)  # walked once: a tau2 database is large
    said = [c.arguments for c in execution.calls]  # the goal and later turns say values too
    there = frozenset(map(json.dumps, leaves(plan.initial_config))) if seed.category == "miss_param" else frozenset()
    out: list[dict[str, Any]] = []
    for t in range(seed.num_turns):
        if not seed.question[t]:
            out.append({"turn": t, "kind": "reveal", "calls": []})
            continue
        if per_turn[t] or t + 1 >= seed.num_turns:
            if out and out[-1]["kind"] == "ask_missing":
                asked = out[-1]["missing"]
                nouns = next((c.get("nouns", {}) for c in out[-1]["calls"] if c.get("index") == asked.get("index")), {})
                out.append({"turn": t, "kind": "supply_missing", "calls": [], "missing": asked, "nouns": nouns})
            else:
                out.append({"turn": t, "kind": "calls", "calls": [_call_info(plan, execution, j, records, phrasings)
                                                                  for j in per_turn[t]]})
            continue
        calls = [_call_info(plan, execution, j, records, phrasings) for j in per_turn[t + 1]]
        missing = (_pick_missing(calls, said, there)
                   if seed.category == "miss_param" and seed.question[t + 1] else None)
        if missing:
            out.append({"turn": t, "kind": "ask_missing", "calls": calls, "missing": missing})
        else:
            out.append({"turn": t, "kind": "calls", "calls": calls})
    return out


def _pick_missing(calls: list[dict[str, Any]], said: list[dict[str, Any]] = (),
                  there: frozenset[str] = frozenset()) -> dict[str, Any] | None:
    """The value a miss_param turn leaves out: a user-given value, preferably one no other argument up to that
    turn repeats (otherwise the query would still say it elsewhere), of a call the turn makes once ("go into a
    folder, go into the 'x' folder" read as robotic: a blank beside a named twin), and rather one a person
    leaves open than the thing they ask about (`_openness`): BFCL's people leave out where a copy goes ("into a
    folder right within the same directory") or whom to mention, and readers failed "go into a folder" and
    "search a file" (a name the user plainly knows) in the fourteenth and fifteenth blind reads. `there`: the
    values (JSON) the state held at the start; a destination among them is a place, one not there a new name."""
    def given(key: str, value: Any, bound: list[str]) -> bool:
        if isinstance(value, list):
            return bool(value) and not any(b == key or b.startswith(f"{key}[") for b in bound) \
                and all(given(key, v, []) for v in value)
        return key not in bound and isinstance(value, (str, int, float)) and not isinstance(value, bool)

    candidates = [(call, key, value) for call in calls for key, value in call["arguments"].items()
                  if given(key, value, call["bound"])]

    def repeated(value: Any) -> bool:
        return sum(v == value for args in said for v in args.values()) > 1

    def twinned(call: dict[str, Any]) -> bool:
        return sum(c["function"] == call["function"] for c in calls) > 1

    for call, key, value in sorted(candidates, key=lambda c: (repeated(c[2]), twinned(c[0]),
                                                              _openness(*c, there=there))):
        return {"index": call["index"], "param": key, "value": value}
    return None


def _openness(call: dict[str, Any], param: str, value: Any, there: frozenset[str] = frozenset()) -> int:
    """How plainly a person leaves this value open, least first: where a thing goes, a place the state has (0;
    not a new name: "move it to a destination" for a rename reads as a blank), whom or what a list names (1), a
    call's further value (2), the thing the call is about, its first value (3), a code ('w', 4: no blank a
    person leaves)."""
    if len(str(value)) <= 2:
        return 4
    if tokens(param) & {"destination", "target", "to", "dest"} and json.dumps(value) in there:
        return 0
    if isinstance(value, list):
        return 1
    return 3 if next(iter(call["arguments"]), None) == param else 2


class Rewriter:
    """Writes all user queries of a plan in one backend call."""

    def __init__(self, backend: LLMBackend):
        self.backend = backend

    def rewrite(self, plan: Plan, execution: Execution, feedback: list[str] | None = None,
                turns: list[dict[str, Any]] | None = None) -> list[str]:
        turns = turns or turn_contexts(plan, execution)
        functions = [c["function"] for t in turns for c in t["calls"]]
        context = {"narrative": plan.narrative, "turns": turns, "feedback": feedback or [],
                   "opening": narrative_opening(plan.narrative, functions, plan.seed.involved_classes)}
        prompt = (
            "Write the user's message for every turn of this conversation with a tool-using assistant. "
            "Turns must read as one coherent story that follows the narrative, and later turns may refer back "
            "to earlier ones ('that file', 'the same folder'). Ask for OUTCOMES in a person's own words: never "
            "name functions, never repeat their descriptions, never write parameter names. Mention every value "
            "the user must provide; never give away a value listed in 'bound' (the assistant must get it from "
            "an earlier result). For an 'ask_missing' turn leave out the missing value; for a 'supply_missing' "
            "turn give only that value; for a 'reveal' turn write an empty string. A call's 'asked' lists how this "
            "environment's own users asked for that tool, with this call's values: prefer their words.\n"
            f"Narrative: {plan.narrative or '(none)'}\nTurns: {json.dumps(turns, default=str)[:6000]}\n"
            + (f"Fix these problems of your previous attempt: {feedback}\n" if feedback else "")
            + f"Answer as JSON {{\"queries\": [one string per turn, {len(turns)} in all]}}."
        )
        reply = self.backend.chat(
            [{"role": "system", "content": "You write realistic user requests."}, {"role": "user", "content": prompt}],
            json_schema=queries_model(len(turns)), purpose="rewrite", context=context,
            max_tokens=rewrite_max_tokens(len(turns), self.backend.config.max_tokens),
        )
        queries = reply.parsed.queries
        return ["" if t["kind"] == "reveal" else q.strip() for t, q in zip(turns, queries)]

    def rewrite_each(self, plan: Plan, execution: Execution, turns: list[dict[str, Any]] | None = None) -> list[str]:
        """The no-rewrite ablation: one call per turn, each seeing only its own turn."""
        turns = turns or turn_contexts(plan, execution)
        out = []
        for turn in turns:
            if turn["kind"] == "reveal":
                out.append("")
                continue
            prompt = (
                "Write the user's message to a tool-using assistant that asks for exactly these calls' outcomes "
                "in a person's own words, mentioning every value the user must provide (never one listed in "
                "'bound'), never naming functions, their descriptions or parameter names. 'ask_missing': leave "
                "out the missing value; 'supply_missing': give only that value.\n"
                f"Turn: {json.dumps(turn, default=str)[:3000]}\nAnswer as JSON {{\"query\": string}}."
            )
            reply = self.backend.chat(
                [{"role": "system", "content": "You write realistic user requests."},
                 {"role": "user", "content": prompt}],
                json_schema=TurnQuery, purpose="rewrite.turn", context={"turn": turn},
            )
            out.append(reply.parsed.query.strip())
        return out


def with_queries(task: Task, queries: list[str]) -> list[list[dict[str, str]]]:
    """BFCL `question` lists: one user message per turn, `[]` at reveal turns."""
    return [[] if not task.question[t] else [{"role": "user", "content": q}] for t, q in enumerate(queries)]
