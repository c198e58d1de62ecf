"""The model-free `template` backend: deterministic answers for the synthesis stages.

**An offline fallback, not the paper's method.** The paper's synthesis agents are
a large language model (Qwen3-32B). This backend answers the same requests
without any model, from the structured ``context`` each stage sends with its
``purpose``, so that synthesis runs offline, in CI and inside a training loop
with no inference server. Its language is plain and repetitive: queries ask
for each call's outcome in a person's words (the phrase table of
`rods.llm.outcomes`), never reciting a docstring or a parameter name, and
refer back to values said in earlier turns; narratives come from the API
classes involved; judge verdicts from simple heuristics; config patches are
left to the executor's deterministic rules.

Purposes answered (anything else is an error):

* ``plan.narrative``: one narrative for the whole task, written before the calls are fixed: what it is
  about, without the filler sentences a template would repeat in every task;
* ``plan.sequence``: pick one of the planner's candidate call sequences (a seeded draw);
* ``rewrite``: one user query per turn, all turns at once (the first opens with the context's
  ``opening``: the narrative's sentences that recite no function, which the rewriter picks);
* ``rewrite.turn``: one turn's query on its own (the no-rewrite ablation);
* ``judge``: verdicts for the criteria that need judgement (``natural``, ``intent``);
* ``config_patch``: an empty patch (no knowledge beyond the deterministic rules).
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from rods.llm.base import ChatRequest, Completion, LLMBackend, LLMConfig, LLMError
from rods.llm.outcomes import named_arguments, noun, outcome, say


def subject(cls: str) -> str:
    """What a class is about, in the user's words, when its domain does not say: "my" and its class name's
    words (`pkg.mod:Tau2AirlineEnv` -> "my airline")."""
    name = cls.rpartition(":")[2].rpartition("/")[2]
    words = [w for w in re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").lower().split()
             if w not in ("env", "environment", "api", "tools")]
    words = [w for w in words if not any(ch.isdigit() for ch in w)] or words  # "tau2 airline" -> "airline"
    return "my " + (" ".join(words) or "tools")


OPENERS = ["First,", "Next,", "After that,", "Then,", "Now,", "Building on that,", "Also,"]


def imperative(verb: str) -> str:
    """Docs say "Gets the zipcode"; a user says "get the zipcode"."""
    low = verb.lower()
    if len(low) <= 3 or low.endswith(("ss", "us", "is")) or not low.endswith("s"):
        return low
    if low.endswith(("sses", "shes", "ches", "xes", "zes")):
        return low[:-2]
    if low.endswith("ies"):
        return low[:-3] + "y"
    return low[:-1]


def action(description: str) -> str:
    """The first sentence of a function description, as a lower-case imperative phrase."""
    text = re.sub(r"\s+", " ", description.strip().split(". ")[0].rstrip(". "))
    if not text:
        return "do this step"
    first, _, rest = text.partition(" ")
    return (imperative(first) + (" " + rest if rest else "")).strip()


def call_outcome(call: dict[str, Any], missing: str | None, said: set[str]) -> str:
    """One call of a turn context as the outcome a person asks for (`rods.llm.outcomes`)."""
    params = list(call.get("params", {}))
    arguments, rename = named_arguments(call.get("arguments", {}), call.get("args", []), params)
    bound = {rename.get(b, b) for b in call.get("bound", [])}
    return outcome(call["function"], arguments, params=params, bound=bound, missing=missing, said=said,
                   description=call.get("description", ""), phrase=call.get("phrase"), nouns=call.get("nouns"),
                   forms=call.get("forms"), effect=call.get("effect", "unknown"))


def request(turn: dict[str, Any], said: set[str]) -> str:
    """One turn's request: its calls' outcomes, or the value a miss_param turn left out."""
    if turn.get("kind") == "supply_missing":
        miss = turn["missing"]
        what = noun(miss["param"], turn.get("nouns"))
        return f"Sorry, I forgot to say: I meant {say(miss['value'])} for the {what}."
    missing = turn.get("missing", {}) if turn.get("kind") == "ask_missing" else {}
    steps = [call_outcome(c, missing.get("param") if c.get("index") == missing.get("index") else None, said)
             for c in grouped(turn.get("calls", []), missing.get("index"))]
    if not steps:
        return "Could you check where things stand?"
    body = steps[0] if len(steps) == 1 else ", then ".join(steps[:-1]) + ", and after that " + steps[-1]
    return f"Could you {body}?"


def grouped(calls: list[dict[str, Any]], keep: int | None = None, least: int = 3) -> list[dict[str, Any]]:
    """Runs of `least`+ calls of one function with one user-given argument each become one call with
    a list ("remove 'a', 'b' and 'c'"), as a person lists items instead of repeating the request."""
    def single(call: dict[str, Any]) -> str | None:
        args = call.get("arguments", {})
        if len(args) == 1 and not call.get("args") and not call.get("bound") and call.get("index") != keep:
            (key, value), = args.items()
            return key if isinstance(value, (str, int, float)) else None
        return None

    out: list[dict[str, Any]] = []
    i = 0
    while i < len(calls):
        j, key = i, single(calls[i])
        while j + 1 < len(calls) and key and calls[j + 1]["function"] == calls[i]["function"] \
                and single(calls[j + 1]) == key:
            j += 1
        if key and j - i + 1 >= least:
            out.append({**calls[i], "arguments": {key: [c["arguments"][key] for c in calls[i:j + 1]]}})
        else:
            out.extend(calls[i:j + 1])
        i = j + 1
    return out


def spoken_values(turn: dict[str, Any]) -> set[str]:
    """The string values a turn's query said (later turns may refer back to them)."""
    out = {str(turn["missing"]["value"])} if turn.get("kind") == "supply_missing" else set()
    missing = turn.get("missing", {}) if turn.get("kind") == "ask_missing" else {}
    for call in turn.get("calls", []):
        skip = set(call.get("bound", [])) | ({missing.get("param")} if call.get("index") == missing.get("index")
                                             else set())
        out |= {v for k, v in call.get("arguments", {}).items() if isinstance(v, str) and k not in skip}
    return out


class TemplateBackend(LLMBackend):
    """Deterministic, model-free answers (see the module docstring)."""

    name = "template"

    def __init__(self, config: LLMConfig | None = None, **_: Any):
        super().__init__(config)

    def describe(self) -> str:
        return "template"

    def _complete(self, request: ChatRequest) -> Completion:
        ctx = request.context or {}
        handler = {
            "plan.sequence": self._choose_sequence,
            "plan.narrative": self._narrative,
            "rewrite": self._rewrite,
            "rewrite.turn": self._rewrite_turn,
            "judge": self._judge,
            "config_patch": self._patch,
        }.get(request.purpose)
        if handler is None:
            raise LLMError(f"the template backend cannot answer purpose {request.purpose!r}", kind="bad_request")
        return Completion(text=json.dumps(handler(ctx)))

    # ------------------------------------------------------------ purposes

    @staticmethod
    def _choose_sequence(ctx: dict) -> dict:
        """A seeded draw among the candidates the planner prefers (its first `preferred`), else among all."""
        candidates = ctx.get("candidates") or [[]]
        preferred = ctx.get("preferred") or len(candidates)
        return {"choice": random.Random(ctx.get("seed", 0)).randrange(min(preferred, len(candidates)))}

    @staticmethod
    def _narrative(ctx: dict) -> dict:
        subjects = ctx.get("subjects") or [subject(c) for c in ctx.get("classes", [])]
        about = " and ".join(subjects) or "my tasks"
        return {"narrative": f"I am sorting out {about}."}

    @staticmethod
    def _rewrite(ctx: dict) -> dict:
        """All turns at once: outcomes in a person's words, anchored to the narrative, referring back."""
        turns = ctx.get("turns", [])
        said: set[str] = set()
        queries = []
        spoken = 0
        last = max((i for i, t in enumerate(turns) if t.get("kind") != "reveal"), default=-1)
        for i, turn in enumerate(turns):
            if turn.get("kind") == "reveal":
                queries.append("")
                continue
            body = request(turn, said)
            if spoken == 0:
                intro = ctx.get("opening") or ""  # the narrative's sentences that recite no function
                text = f"{intro} {body}".strip()
            elif turn.get("kind") == "supply_missing":
                text = body
            elif i == last and spoken > 1:
                text = f"To wrap up, {body[0].lower()}{body[1:]}"
            else:
                text = f"{OPENERS[min(spoken, len(OPENERS) - 1)]} {body[0].lower()}{body[1:]}"
            queries.append(text)
            said |= spoken_values(turn)
            spoken += 1
        return {"queries": queries}

    @staticmethod
    def _rewrite_turn(ctx: dict) -> dict:
        """The no-rewrite ablation: one turn on its own (no narrative, no other turns)."""
        turn = ctx.get("turn", {})
        return {"query": "" if turn.get("kind") == "reveal" else request(turn, set())}

    @staticmethod
    def _judge(ctx: dict) -> dict:
        queries = [q for q in ctx.get("queries", []) if q is not None]
        reasons = []
        for i, q in enumerate(queries):
            if q == "":
                continue
            if len(q) < 12:
                reasons.append(f"turn {i}: too short to be a request")
            if re.search(r"\b[a-z]+_[a-z_]+\(", q) or "Error during execution" in q:
                reasons.append(f"turn {i}: reads like code, not a user")
        spoken = [q for q in queries if q]
        if len(set(spoken)) != len(spoken):
            reasons.append("two turns ask the same thing")
        natural = {"pass": not reasons, "reason": "; ".join(reasons) or "plain requests, one per turn"}
        intent = {"pass": True, "reason": "each query names its turn's actions (template wording)"}
        return {"verdicts": {"natural": natural, "intent": intent}}

    @staticmethod
    def _patch(ctx: dict) -> dict:
        return {"patch": {}, "reason": f"no template patch for: {str(ctx.get('error', ''))[:80]}"}
