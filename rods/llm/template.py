"""The model-free `template` backend: deterministic answers for the synthesis stages.

**An offline fallback, not the paper's method.** The paper's synthesis agents are
a large language model (Qwen3-32B). This backend answers the same requests
without any model, from the structured ``context`` each stage sends with its
``purpose``, so that synthesis runs offline, in CI and inside a training loop
with no inference server. Its language is plain and repetitive: queries are
built from the function docs' descriptions and the call's parameter values;
narratives from the API classes involved; judge verdicts from simple
heuristics; config patches are left to the executor's deterministic rules.

Purposes answered (anything else is an error):

* ``plan.narrative``: one narrative for the whole task, written before the calls are fixed;
* ``plan.sequence``: pick one of the planner's candidate call sequences (a seeded draw);
* ``rewrite``: one user query per turn;
* ``judge``: verdicts for the criteria that need judgement (``natural``, ``intent``);
* ``config_patch``: an empty patch (no knowledge beyond the deterministic rules).
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from rods.llm.base import ChatRequest, Completion, LLMBackend, LLMConfig, LLMError

#: What each API class is about, in the user's words.
SUBJECTS = {
    "GorillaFileSystem": "my project files",
    "MathAPI": "a few calculations",
    "MessageAPI": "messages with my colleagues",
    "TwitterAPI": "my social media account",
    "TicketAPI": "a support ticket",
    "TradingBot": "my trading account",
    "TravelAPI": "an upcoming trip",
    "VehicleControlAPI": "my car",
}

#: Seeded closing sentences of template narratives.
GOALS = [
    "I want each step done in order and to check the results as I go.",
    "I have a deadline this afternoon, so I want it settled in one sitting.",
    "A colleague is waiting on me, so I need everything in good shape soon.",
    "I keep putting this off; today I want it finished properly.",
]

OPENERS = ["First,", "Next,", "After that,", "Then,", "Now,", "Building on that,", "Also,"]


def label(param: str) -> str:
    """`file_name` / `fuelAmount` -> "file name" / "fuel amount"."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", param).replace("_", " ").lower().strip()


def say(value: Any) -> str:
    """A value as a user would type it: strings quoted, lists joined."""
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(say(v) for v in value) + "]"
    if isinstance(value, dict):
        return json.dumps(value)
    return str(value)


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


def phrase(call: dict[str, Any], missing: str | None = None) -> str:
    """One call in words: its action, then each argument the user must give."""
    parts, flags = [], []
    bound = set(call.get("bound", []))
    helps = call.get("params", {})
    for key, value in call.get("arguments", {}).items():
        if key == missing:
            continue
        whole_list = isinstance(value, list) and value and all(f"{key}[{i}]" in bound for i in range(len(value)))
        if key in bound or whole_list:
            parts.append(f"the {label(key)} from the earlier result")
        elif isinstance(value, bool):
            hint = action(helps.get(key, "")) if helps.get(key) else ""
            flags.append(f"and {hint}" if value and hint and len(hint) < 60 else f"({label(key)}: {'yes' if value else 'no'})")
        else:
            parts.append(f"{label(key)} {say(value)}")
    for i, value in enumerate(call.get("args", [])):
        if f"#{i}" in bound:
            parts.append("using the value from the earlier result")
        else:
            parts.append(say(value))
    text = action(call.get("description", "") or call["function"].replace("_", " "))
    text += " with " + ", ".join(parts) if parts else ""
    return " ".join([text, *flags])


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
            "judge": self._judge,
            "config_patch": self._patch,
        }.get(request.purpose)
        if handler is None:
            raise LLMError(f"the template backend cannot answer purpose {request.purpose!r}", kind="bad_request")
        return Completion(text=json.dumps(handler(ctx)))

    # ------------------------------------------------------------ purposes

    @staticmethod
    def _choose_sequence(ctx: dict) -> dict:
        candidates = ctx.get("candidates") or [[]]
        return {"choice": random.Random(ctx.get("seed", 0)).randrange(len(candidates))}

    @staticmethod
    def _narrative(ctx: dict) -> dict:
        classes = ctx.get("classes", [])
        about = " and ".join(SUBJECTS.get(c, c) for c in classes) or "my tasks"
        goal = random.Random(ctx.get("seed", 0)).choice(GOALS)
        return {"narrative": f"I am sorting out {about} today. {goal}"}

    @staticmethod
    def _rewrite(ctx: dict) -> dict:
        narrative = ctx.get("narrative")
        queries = []
        spoken = 0
        for turn in ctx.get("turns", []):
            kind = turn.get("kind", "calls")
            if kind == "reveal":
                queries.append("")
                continue
            opener = OPENERS[min(spoken, len(OPENERS) - 1)] if spoken else ""
            if kind == "supply_missing":
                miss = turn["missing"]
                queries.append(f"Sorry, I forgot to say: the {label(miss['param'])} is {say(miss['value'])}.")
            else:
                missing = turn.get("missing", {}).get("param") if kind == "ask_missing" else None
                steps = [phrase(c, missing if c.get("index") == turn.get("missing", {}).get("index") else None)
                         for c in turn.get("calls", [])]
                body = "; then ".join(steps) if steps else "just check where things stand"
                text = f"Could you {body}?" if not opener else f"{opener} could you {body}?"
                if spoken == 0 and narrative:
                    text = f"{narrative} {text}"
                elif narrative and spoken == len(ctx.get("turns", [])) - 1:
                    text = f"To wrap up what we have been doing: {text[0].lower()}{text[1:]}"
                queries.append(text)
            spoken += 1
        return {"queries": queries}

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
