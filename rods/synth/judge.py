"""Stage 4, Judge: five recorded verdicts per candidate, and a diagnosis.

The five criteria of docs/design.md §4.5, each a :class:`Verdict` (pass + reason):

* ``intent``: each query asks for its turn's calls. Deterministic part: every
  call is evidenced in the query that asks for it (one of its user-given values,
  or a content word of its description, compared by stem, for calls without
  such values); plus the
  backend's verdict (purpose ``"judge"``).
* ``values``: every non-missing argument value is recoverable from the queries
  so far, the initial config or an earlier result (or is one of the values any
  user may leave implicit: booleans, small integers, environment vocabulary).
* ``progress``: the ground truth replays without errors and every turn with
  calls changes the state or returns something.
* ``natural``: queries read like a real user: no function names or call syntax,
  and no recited description or parameter name (:func:`rods.synth.leak.leaks`)
  (deterministic, for every backend), then the backend's verdict.
* ``structure``: miss_func / miss_param in BFCL's exact representation;
* ``coherence`` (when the pipeline gives the rules): no read is left unused,
  now that the queries say what the user asks for (`rods.synth.coherence`; the
  ground truth's other rules are checked when it runs, before the rewrite);
  the reason names the rule.

Diagnosis: a failed ``progress``, ``structure`` or ``coherence`` is a
ground-truth fault (the candidate is discarded); a failed ``intent``,
``values`` or ``natural`` is a query fault (sent back to the rewriter once).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from rods.llm.base import LLMBackend
from rods.llm.schema import MAX_REASON_CHARS, closed_object
from rods.synth.coherence import Coherence
from rods.synth.executor import Execution
from rods.synth.leak import leaks
from rods.synth.profile import result_value, trace_task, value_paths
from rods.synth.value_kinds import is_distinctive, leaves, vocabulary_of
from rods.tasks.model import Task

QUERY_CRITERIA = ("intent", "values", "natural")
GT_CRITERIA = ("progress", "structure", "coherence")

class CriterionVerdict(BaseModel):
    """One criterion's verdict as the judge model writes it (``pass`` is a Python keyword, hence the alias)."""

    model_config = ConfigDict(populate_by_name=True)

    passed: bool = Field(alias="pass")
    reason: str = Field("", max_length=MAX_REASON_CHARS)


class JudgeVerdicts(BaseModel):
    """The reply of purpose "judge": criterion name -> verdict (the schema asks for exactly
    ``natural`` and ``intent``; a missing one counts as "no verdict")."""

    verdicts: dict[str, CriterionVerdict] = Field(
        json_schema_extra=lambda schema: _ask_for(schema, "natural", "intent"))


def _ask_for(schema: dict[str, Any], *names: str) -> None:
    """Close the ``verdicts`` object's schema to exactly `names`, each a verdict (in place, for pydantic)."""
    verdict = schema["additionalProperties"]  # CriterionVerdict's reference
    schema.update(closed_object({name: verdict for name in names}, required=list(names)))


@dataclass
class Verdict:
    passed: bool
    reason: str
    #: Every failure found, the first of which is `reason` (for `Judgement.beside`); empty when it passed.
    failures: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.passed and not self.failures:
            self.failures = (self.reason,)


@dataclass
class Judgement:
    """The five verdicts and the diagnosis (None, "query" or "ground_truth")."""

    verdicts: dict[str, Verdict] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(v.passed for v in self.verdicts.values())

    @property
    def fault(self) -> str | None:
        if any(not self.verdicts[c].passed for c in GT_CRITERIA if c in self.verdicts):
            return "ground_truth"
        if any(not self.verdicts[c].passed for c in QUERY_CRITERIA if c in self.verdicts):
            return "query"
        return None

    def failed_reasons(self) -> list[str]:
        return [f"{k}: {v.reason}" for k, v in self.verdicts.items() if not v.passed]

    def to_dict(self) -> dict[str, Any]:
        return {k: {"passed": v.passed, "reason": v.reason} for k, v in self.verdicts.items()}

    def beside(self, seed: Judgement, translate: Callable[[str], str] = str) -> Judgement:
        """A recast's judgement held to its seed's (`rods.synth.recast`): a criterion it fails only where its seed,
        judged the same way, fails it too (every failure one of the seed's, its values `translate`d to the
        recast's: the human's own way of asking, not the recast's) counts as passed, and says so."""
        out = Judgement()
        for name, verdict in self.verdicts.items():
            own = seed.verdicts.get(name)
            if not verdict.passed and own is not None and set(verdict.failures) <= set(map(translate, own.failures)):
                verdict = Verdict(True, f"as its seed: {verdict.reason}")
            out.verdicts[name] = verdict
        return out


def _mentions(text: str, value: Any) -> bool:
    low = text.lower()
    if isinstance(value, str):
        return value.lower() in low
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        whole = str(int(value)) if float(value).is_integer() else str(value)
        low = re.sub(r"(?<=\d),(?=\d{3}\b)", "", low)  # "50,000 RMB" says 50000
        return any(s in low for s in {str(value), f"{value:g}", whole})
    if isinstance(value, list):
        return all(_mentions(text, v) for v in value)
    return True


def content_words(text: str) -> set[str]:
    """Stems of the words of 4+ letters ("navigates" and "navigate" share one)."""
    return {w.rstrip("s")[:5] for w in re.findall(r"[a-z]{4,}", text.lower())}


class Judge:
    """Checks a candidate against the five criteria (see the module docstring)."""

    def __init__(self, backend: LLMBackend):
        self.backend = backend

    def judge(self, task: Task, execution: Execution, turns: list[dict[str, Any]],
              coherence: Coherence | None = None, seed: Task | None = None, ask: bool = True) -> Judgement:
        """The verdicts on a candidate; `ask`: with the backend's verdict on ``natural`` and ``intent`` (off for a
        recast, whose words are its seed's: `rods.synth.recast`; its deterministic checks stay)."""
        queries = [" ".join(m.content for m in q) for q in task.question]
        out = Judgement()
        if coherence is not None:  # the ground truth's own rules were checked when it ran: the queries' one now
            broken = coherence.violations(task, seed=seed, kinds=("unused_read",))
            out.verdicts["coherence"] = Verdict(not broken, str(broken[0]) if broken else "no rule broken",
                                                tuple(map(str, broken)))
        out.verdicts["intent"] = self._intent(queries, turns, vocabulary_of(task.environment))
        out.verdicts["values"] = self._values(task, execution, queries, turns)
        out.verdicts["progress"] = self._progress(task, execution)
        out.verdicts["structure"] = structure_verdict(task)
        llm = self._ask(task, queries, turns) if ask else {"natural": Verdict(True, "the seed's own words")}
        out.verdicts["natural"] = (_code_like(queries, {c.name for c in execution.calls})
                                   or _leaking(queries, turns, task.involved_classes)
                                   or llm.get("natural", Verdict(False, "the judge gave no verdict")))
        if "intent" in llm and not llm["intent"].passed and out.verdicts["intent"].passed:
            out.verdicts["intent"] = llm["intent"]
        return out

    def _ask(self, task: Task, queries: list[str], turns: list[dict[str, Any]]) -> dict[str, Verdict]:
        context = {"queries": queries, "turns": turns, "category": task.category}
        reply = self.backend.chat(
            [{"role": "system", "content": "You review synthetic conversations between users and tool agents."},
             {"role": "user", "content": "For these user queries and the tool calls each turn needs, judge: "
              "'natural' (do the queries read like a real user asking for outcomes, without reciting function "
              "descriptions or parameter names?) and 'intent' (does each query ask for exactly "
              f"its calls?). Queries: {json.dumps(queries)[:3000]}. Calls: {json.dumps(turns, default=str)[:3000]}. "
              "Answer as JSON {\"verdicts\": {\"natural\": {\"pass\": bool, \"reason\": str}, "
              "\"intent\": {\"pass\": bool, \"reason\": str}}}."}],
            json_schema=JudgeVerdicts, purpose="judge", context=context,
        )
        return {k: Verdict(v.passed, v.reason) for k, v in reply.parsed.verdicts.items() if k in ("natural", "intent")}

    @staticmethod
    def _intent(queries: list[str], turns: list[dict[str, Any]], words: frozenset[str]) -> Verdict:
        failures = []
        for turn in turns:
            text = queries[turn["turn"]]
            missing = turn.get("missing", {}) if turn["kind"] == "ask_missing" else {}
            for call in turn["calls"]:
                given = [v for k, v in call["arguments"].items()
                         if k not in call["bound"] and k != missing.get("param") and is_distinctive(v, words)]
                given += [v for i, v in enumerate(call["args"])
                          if f"#{i}" not in call["bound"] and is_distinctive(v, words)]
                if given:
                    if not any(_mentions(text, v) for v in given):
                        failures.append(f"turn {turn['turn']}: nothing in the query asks for {call['function']}")
                elif not (content_words(call["description"]) & content_words(text)) and text:
                    failures.append(f"turn {turn['turn']}: the query does not describe {call['function']}")
        if failures:
            return Verdict(False, failures[0], tuple(failures))
        return Verdict(True, "every call is asked for in its turn's query")

    @staticmethod
    def _values(task: Task, execution: Execution, queries: list[str], turns: list[dict[str, Any]]) -> Verdict:
        config_values = {json.dumps(v) for v in leaves(task.initial_config)}
        words = vocabulary_of(task.environment)
        produced: set[str] = set()
        described = {c["index"]: t["turn"] for t in turns for c in t["calls"]}
        retold = {text for t in turns for c in t["calls"] for text in _retold_text(execution, c)}
        said_until: list[str] = []
        failures = []
        text = ""
        for q in queries:
            text += " " + q
            said_until.append(text)
        for j, call in enumerate(execution.calls):
            turn = max(described.get(j, 0), execution_turn(task, j))
            # a miss_param value is supplied in the turn after it is asked for
            said = said_until[min(turn + 1, task.num_turns - 1)]
            scalars = [x for v in [*call.args, *call.arguments.values()] for x in (v if isinstance(v, list) else [v])]
            for value in scalars:
                if not is_distinctive(value, words) or _mentions(said, value):
                    continue
                if json.dumps(value) in config_values or json.dumps(value) in produced:
                    continue
                if isinstance(value, str) and value in retold:  # a text that retells an earlier result
                    continue
                failures.append(f"{call.name}: value {value!r} is neither said by the user nor in the state")
            produced.update(json.dumps(v) for _, v in value_paths(result_value(execution.results[j])))
        if failures:
            return Verdict(False, failures[0], tuple(failures))
        return Verdict(True, "every value is said by the user or found in the state")

    @staticmethod
    def _progress(task: Task, execution: Execution) -> Verdict:
        if not execution.ok:
            return Verdict(False, f"ground truth fails: {execution.failure}")
        trace = trace_task(task)
        if trace.errors:
            return Verdict(False, f"ground truth fails on replay at call {trace.errors[0][0]}")
        for t in range(task.num_turns):
            idx = [j for j, turn in enumerate(trace.turn_of) if turn == t]
            if idx and not any(trace.changed[j] or result_value(trace.results[j]) not in ("", None, "None", {}, [])
                               for j in idx):
                return Verdict(False, f"turn {t}: its calls neither change the state nor return anything")
        return Verdict(True, "every turn's calls run and change the state or return something")


def _retold_text(execution: Execution, call: dict[str, Any]) -> list[str]:
    """The values of a call's arguments that retell an earlier result (the context's `retold` parameters)."""
    arguments = execution.calls[call["index"]].arguments
    return [arguments[p] for p in call.get("retold", []) if isinstance(arguments.get(p), str)]


def _code_like(queries: list[str], functions: set[str]) -> Verdict | None:
    """A deterministic failure of "natural": a query that names a function or holds a call."""
    for t, q in enumerate(queries):
        named = [f for f in functions if ("_" in f or any(ch.isupper() for ch in f[1:])) and f in q]
        if named or re.search(r"\b\w+\((\w+=|\))", q):
            return Verdict(False, f"turn {t}: reads like code ({(named or ['a call'])[0]}), not like a user")
    return None


def _leaking(queries: list[str], turns: list[dict[str, Any]], classes: list[str]) -> Verdict | None:
    """A deterministic failure of "natural": a query that recites its calls' docs (`rods.synth.leak`)."""
    for turn in turns:
        why = leaks(queries[turn["turn"]], [c["function"] for c in turn["calls"]], classes)
        if why:
            return Verdict(False, f"turn {turn['turn']}: {why}, which tells the model which call to make")
    return None


def execution_turn(task: Task, index: int) -> int:
    """The turn of the index-th ground-truth call."""
    seen = 0
    for t, turn in enumerate(task.ground_truth):
        seen += len(turn)
        if index < seen:
            return t
    return task.num_turns - 1


def structure_verdict(task: Task) -> Verdict:
    """miss_func / miss_param in BFCL's exact representation (docs/design.md §2.1)."""
    if task.category == "miss_func":
        if not task.missed_function:
            return Verdict(False, "miss_func task without missed_function")
        for k, names in task.reveal_turns().items():
            if task.question[k] != [] or not task.ground_truth[k] or k == 0 or task.ground_truth[k - 1]:
                return Verdict(False, f"reveal turn {k}: needs question [] and calls, after a turn without calls")
            before = {c.split("(")[0].strip() for turn in task.ground_truth[:k] for c in turn}
            if any(n in before for n in names):
                early = sorted(set(names) & before)
                return Verdict(False, f"held-out functions {early} used before their reveal turn {k}")
        return Verdict(True, "held-out functions are revealed exactly where they are needed")
    if task.missed_function:
        return Verdict(False, f"{task.category} task with missed_function")
    if any(not q for q in task.question):
        return Verdict(False, "a turn without a user message outside miss_func")
    if task.category == "miss_param":
        empty = [t for t, gt in enumerate(task.ground_truth) if not gt]
        if not empty or any(not any(task.ground_truth[t + 1:]) for t in empty):
            return Verdict(False, "miss_param needs an under-specified turn followed by one that supplies the value")
        return Verdict(True, "the under-specified turn is followed by the value")
    return Verdict(True, "every turn has a user message")
