"""The model-free `template` backend: deterministic answers for the synthesis stages.

**An offline fallback, not the paper's method.** The paper's synthesis agents are
a large language model (Qwen3-32B). This backend answers the same requests
without any model, from the structured ``context`` each stage sends with its
``purpose``, so that synthesis runs offline, in CI and inside a training loop
with no inference server. Its language is plain: the first query states one
goal derived from the calls' effects (`goal`: what the person wants done, and
what they want to know when the task ends on a read); each turn asks for its
outcome in a person's words (the phrase table of `rods.llm.outcomes`), as a
question when it only reads and an instruction when it changes something,
never reciting a docstring or a parameter name, and refers back to earlier
results ("that file") with no filler between turns;
narratives come from the API classes involved; judge verdicts from simple
heuristics; config patches are left to the executor's deterministic rules.

Purposes answered (anything else is an error):

* ``plan.narrative``: one narrative for the whole task, written before the calls are fixed: what it is
  about, without the filler sentences a template would repeat in every task;
* ``plan.sequence``: propose one of the planner's sampled candidate call sequences (a seeded draw);
* ``rewrite``: one user query per turn, all turns at once (the first opens with the goal; the narrative,
  written before the calls were known, is not recited);
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
from rods.llm.outcomes import imperative, indefinite, is_plural, named_arguments, noun, outcome, say, singular, that
from rods.llm.pronouns import it_for_repeats


def subject(cls: str) -> str:
    """What a class is about, in the user's words, when its domain does not say: "my" and its class name's
    words (`pkg.mod:Tau2AirlineEnv` -> "my airline")."""
    name = cls.rpartition(":")[2].rpartition("/")[2]
    words = [w for w in re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").lower().split()
             if w not in ("env", "environment", "api", "tools")]
    words = [w for w in words if not any(ch.isdigit() for ch in w)] or words  # "tau2 airline" -> "airline"
    return "my " + (" ".join(words) or "tools")


def action(description: str) -> str:
    """The first sentence of a function description, as a lower-case imperative phrase."""
    text = re.sub(r"\s+", " ", description.strip().split(". ")[0].rstrip(". "))
    if not text:
        return "do this step"
    first, _, rest = text.partition(" ")
    return (imperative(first) + (" " + rest if rest else "")).strip()


def call_outcome(call: dict[str, Any], missing: str | None) -> str:
    """One call of a turn context as the outcome a person asks for (`rods.llm.outcomes`)."""
    params = list(call.get("params", {}))
    arguments, rename = named_arguments(call.get("arguments", {}), call.get("args", []), params)
    bound = {rename.get(b, b) for b in call.get("bound", [])}
    picks = {rename.get(k, k): v for k, v in call.get("picks", {}).items()}
    text = outcome(call["function"], arguments, params=params, bound=bound, missing=missing,
                   description=call.get("description", ""), phrase=call.get("phrase"), nouns=call.get("nouns"),
                   forms=call.get("forms"), effect=_effect(call), picks=picks, said=retold(call),
                   param_docs=call.get("params") or {})
    for param, (field, what, _) in call.get("field_of", {}).items():  # "'Kasimir Andrade' (that book's author)"
        value = arguments.get(param)
        if param != missing and isinstance(value, str) and say(value) in text:
            told = f"{say(value)} ({that(what)}'s {field.replace('_', ' ')})"
            text = text.replace(say(value), told, 1)
    return text


def retold(call: dict[str, Any]) -> dict[str, str]:
    """A text passed on from an earlier result, said so that one text fits (the context's `retold_as`):
    "'Update:' followed by that text", "the items of that text, separated by commas", or the user's own words."""
    out = {}
    for param, shape in call.get("retold_as", {}).items():
        what = that(noun(param, call.get("nouns")))
        if "prefix" in shape:
            part = f"the {shape['part']} of {what}" if shape.get("part") else what
            out[param] = f"{say(shape['prefix'])} followed by {part}"
        elif "joined" in shape:
            mark = shape["joined"].strip()
            items = f"the first {shape['first']} items" if shape.get("first") else "the items"
            out[param] = f"{items} of {what}, separated by {'commas' if mark == ',' else say(mark)}"
        elif "said" in shape:
            out[param] = say(shape["said"])
    return out


#: How a person gives the value they left out of their last request, as BFCL's people do ("the directory name is
#: temp."): adding it, not correcting a name they never gave ("I meant 'cinder' for the folder" read to the twelfth
#: blind reader as a correction of nothing), nor filling a form ("Use 'notebook' for the folder", the thirteenth).
SUPPLIED = ("The {what} {be} {value}.", "Sorry, the {what} {be} {value}.", "Oh, the {what} {be} {value}.")
#: The same for the one person a request left as "someone" ("Oh, it's '@Anouk'", not "the person is").
SUPPLIED_SOMEONE = ("It's {value}.", "Sorry, it's {value}.", "Oh, it's {value}.")


def request(turn: dict[str, Any]) -> str:
    """One turn's request: its calls' outcomes (a question when the turn only reads, an instruction when it
    changes something), or the value a miss_param turn left out."""
    if turn.get("kind") == "supply_missing":
        miss = turn["missing"]
        what = _one_of(noun(miss["param"], turn.get("nouns")), miss["value"])
        frames = SUPPLIED_SOMEONE if indefinite(what) == "someone" else SUPPLIED
        frame = frames[len(str(miss["value"])) % len(frames)]
        return frame.format(value=say(miss["value"]), what=what, be="are" if is_plural(what) else "is")
    missing = turn.get("missing", {}) if turn.get("kind") == "ask_missing" else {}
    told = "" if missing else in_their_words(turn.get("calls", []))
    if told:
        return told
    calls = grouped(turn.get("calls", []), missing.get("index"))
    calls = [_left_out(c, missing) for c in calls]
    steps = [call_outcome(c, missing.get("param") if c.get("index") == missing.get("index") else None)
             for c in calls]
    if not steps:
        return "Where do things stand now?"
    steps = it_for_repeats(_collapsed(steps, [_place(c) for c in calls]), calls)
    last = ", and then " if len(steps) > 2 else " and then "
    body = steps[0] if len(steps) == 1 else ", ".join(steps[:-1]) + last + steps[-1]
    if not any(_writes(c) for c in calls):
        return f"Can you {body}?"
    return f"Please {body}."


def in_their_words(calls: list[dict[str, Any]]) -> str:
    """A turn asked for as the environment's own users asked for its tools (each call's `asked`: a seed's request
    with this call's values), a run of calls with none in the template's words between them; "" when no call
    has one."""
    if not any(c.get("asked") for c in calls):
        return ""
    parts: list[str] = []
    run: list[dict[str, Any]] = []
    for call in calls:
        if call.get("asked"):
            if run:
                parts.append(request({"kind": "calls", "calls": run}))
                run = []
            told = call["asked"]
            parts.append(told[sum(map(ord, json.dumps(call.get("arguments", {}), default=str))) % len(told)])
        else:
            run.append(call)
    if run:
        parts.append(request({"kind": "calls", "calls": run}))
    return " ".join(parts)


#: Words that open a request continuing an earlier turn ("And take ...", "Also, ..."): not how a task opens.
_CONTINUING = re.compile(r"^(?:(?:oh|ok|okay|great|thanks|right|so|and|also|then|now)\b[,:]?\s+)+", re.I)


def opening(text: str) -> str:
    """A request as the first of a task: without the words that continue an earlier turn."""
    stripped = _CONTINUING.sub("", text)
    return stripped[:1].upper() + stripped[1:] if stripped else text


def made_named(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turns with a value an earlier write made for a name said by that name (the context's `made_for`):
    "send that text to 'Ines Yilmaz'" for the user id `add_contact(user_name='Ines Yilmaz')` made."""
    out = []
    for turn in turns:
        calls = []
        for call in turn.get("calls", []):
            made = call.get("made_for", {})
            if made:
                positional = {f"#{i}" for i in range(len(call.get("args", [])))}
                named = {k: v for k, v in made.items() if k not in positional}
                call = {**call, "arguments": {**call.get("arguments", {}), **named},
                        "bound": [b for b in call.get("bound", []) if b not in named]}
            calls.append(call)
        out.append({**turn, "calls": calls} if "calls" in turn else turn)
    return out


def _one_of(what: str, value: Any) -> str:
    """The noun for a list of one value said as one ("the person", not "the people", for ['@Ana'])."""
    return singular(what) if isinstance(value, list) and len(value) == 1 else what


def _left_out(call: dict[str, Any], missing: dict[str, Any]) -> dict[str, Any]:
    """The call with the noun of the value a miss_param turn leaves out fitting that value ("mentioning someone"
    for one handle, not "some people")."""
    if call.get("index") != missing.get("index") or "param" not in missing:
        return call
    param = missing["param"]
    return {**call, "nouns": {**call.get("nouns", {}), param: _one_of(noun(param, call.get("nouns")),
                                                                       missing.get("value"))}}


def said_again(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turns with a value taken from a result said as it is where the user said it in an earlier call:
    "look up reservation 'QW4873', ..., look up reservation '1DMPHR', and then cancel reservation 'QW4873'", not
    "cancel that reservation" (which reads as the last one named). A text passed on stays as it is said."""
    spoken: set[Any] = set()
    out = []
    for turn in turns:
        calls = []
        for call in turn.get("calls", []):
            arguments, rename = named_arguments(call.get("arguments", {}), call.get("args", []),
                                                list(call.get("params", {})))
            bound = set(call.get("bound", []))
            known = {b for b in bound - set(call.get("retold", []))
                     if _scalar(arguments.get(rename.get(b, b))) and arguments[rename.get(b, b)] in spoken}
            calls.append({**call, "bound": sorted(bound - known)})
            given = {rename.get(b, b) for b in bound - known}
            spoken |= {v for k, v in arguments.items() if k not in given and _scalar(v)}
        out.append({**turn, "calls": calls} if "calls" in turn else turn)
    return out


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int, float)) and not isinstance(value, bool)


def _effect(call: dict[str, Any]) -> str:
    """A tool's declared effect, else what it did when it ran ("read", "write" or "unknown")."""
    declared = call.get("effect", "unknown")
    if declared != "unknown" or call.get("changed") is None:
        return declared
    return "write" if call["changed"] else "read"


def _writes(call: dict[str, Any]) -> bool:
    """Whether a call changes something: as it ran (`changed`), else as its tool is declared."""
    changed = call.get("changed")
    return call.get("effect") != "read" if changed is None else bool(changed)


def _collapsed(steps: list[str], places: list[tuple[int, int] | None] | None = None) -> list[str]:
    """The same request for several earlier results in a row said once: "... for each of those reservations",
    "look up the first, third and last of those reservations" (in the list's order: the turn's calls are scored
    as a set), "look up each of those reservations" when every one is picked. `places`: per step, the (index,
    count) of the one item it picks from an earlier result, if it picks one."""
    places = places or [None] * len(steps)
    out: list[str] = []
    picked: list[tuple[str, dict[int, str], str, int] | None] = []  # per step said: (head, place -> word, tail, n)
    for step, place in zip(steps, places):
        pick = _PICK.fullmatch(step)
        last = picked[-1] if picked else None
        if out and (out[-1] == step or out[-1] == _each(step)) and re.search(r"\bthat \w", step):
            out[-1] = _each(step)
        elif out and pick and place and last and last[0] == pick["head"] and last[2] == pick["tail"] \
                and last[3] == place[1] and place[0] not in last[1]:
            head, which, tail, count = last
            which[place[0]] = pick["which"]
            words = [which[i] for i in sorted(which)]
            out[-1] = (f"{head}each of those {tail}" if len(which) == count > 2 else
                       f"{head}the {', '.join(words[:-1])} and {words[-1]} of those {tail}")
        else:
            out.append(step)
            picked.append((pick["head"], {place[0]: pick["which"]}, pick["tail"], place[1])
                          if pick and place else None)
    return out


#: One request for an item picked from an earlier result by its place ("look up the fifth of those reservations").
_PICK = re.compile(r"(?P<head>.*?)the (?P<which>first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth"
                   r"|last) of those (?P<tail>.*)")


def _place(call: dict[str, Any]) -> tuple[int, int] | None:
    """The (index, count) of the one item a call picks from an earlier result, if it picks exactly one."""
    picks = list(call.get("picks", {}).values())
    return (int(picks[0][0]), int(picks[0][1])) if len(picks) == 1 else None


def _each(step: str) -> str:
    return re.sub(r"\bthat (\w+)", r"each of those \1s", step, count=1)


def _gist(call: dict[str, Any], missing: str | None = None) -> str:
    """A call's outcome as part of a goal: values the user gives kept, but a long text ("write some text into
    'notes.md'": its turn says it), values taken from results as "a ...", the value a miss_param turn leaves out
    as "a ..." (the goal must not give it away)."""
    params = list(call.get("params", {}))
    arguments, rename = named_arguments(call.get("arguments", {}), call.get("args", []), params)
    bound = {rename.get(b, b) for b in call.get("bound", [])}
    said = {k: v if "said" in call["retold_as"][k] else "what we find" for k, v in retold(call).items()}
    for param, value in arguments.items():  # a long text is said in its turn, not recited in the goal too
        if param not in bound and isinstance(value, str) and len(value.split()) >= 4 and param not in said:
            what = noun(param, call.get("nouns"))
            said[param] = "some text" if what == "text" else indefinite(what)
    text = outcome(call["function"], arguments, params=params, bound=bound, missing=missing,
                   description=call.get("description", ""), phrase=call.get("phrase"), nouns=call.get("nouns"),
                   forms=call.get("forms"), effect=_effect(call), said=said, param_docs=call.get("params") or {})
    for param in sorted(bound):
        what = noun(param.split("[")[0], call.get("nouns"))
        told = what in ("text", "message", "note", "content", "comment", "post")
        text = text.replace(that(what), "what we find" if told else indefinite(what))
    for spoken, meant in (("show me", "see"), ("tell me", "find out"), ("give me", "get"), ("let me know", "find out")):
        text = re.sub(rf"(^|\band ){spoken}\b", rf"\g<1>{meant}", text)  # "I'd like to ... and find out ..."
    return text


def goal(turns: list[dict[str, Any]]) -> str:
    """One sentence of what the person wants at the end, from the calls' effects: the last writes as what they
    want done, the last read (when the task ends on one) as what they want to know; "" for a task without calls,
    and none for what the first request itself asks (a person does not announce it and then ask it), nor for a
    closing look at what the first request changed ("I'm trying to look up book 'bk-2'. First, return it.")."""
    calls, left_out = [], {}
    first: set[Any] = set()
    for turn in turns:
        if turn.get("kind") in ("calls", "ask_missing"):
            if not calls:
                first = {c.get("index") for c in turn.get("calls", [])}
            calls += [_left_out(c, turn.get("missing", {})) for c in turn.get("calls", [])]
        if turn.get("kind") == "ask_missing":
            left_out[turn["missing"].get("index")] = turn["missing"].get("param")
    if len({c.get("index") for c in calls}) < 2:
        return ""  # one call: its request is the goal
    writes = [c for c in calls if _writes(c)]
    ends = writes[-2:] + ([] if writes and _writes(calls[-1]) else calls[-1:])
    ends = [c for c in ends if c.get("index") not in first]  # what the first request asks is not announced
    if ends == calls[-1:] and not _writes(calls[-1]) and any(
            _named(calls[-1]) & _named(w) for w in writes if w.get("index") in first):
        return ""  # a look at what the first request changed is a check, not a goal to announce before it
    asked = {_gist(c, left_out.get(c.get("index"))) for c in calls if c.get("index") in first}
    by_gist: dict[str, dict[str, Any]] = {}  # each outcome once, none the first request asks in its words
    for c in ends:
        by_gist.setdefault(_gist(c, left_out.get(c.get("index"))), c)
    by_gist = {g: c for g, c in by_gist.items() if g not in asked}
    wanted = it_for_repeats(list(by_gist), list(by_gist.values()))
    if not wanted:
        return ""
    what = wanted[0] if len(wanted) == 1 else ", ".join(wanted[:-1]) + " and " + wanted[-1]
    frame = GOALS[sum(map(ord, "".join(c["function"] for c in calls))) % len(GOALS)]
    return frame.format(what=what)


def _named(call: dict[str, Any]) -> set[Any]:
    """The names and numbers a call is given (not switches): what it is about."""
    return {v for v in [*call.get("arguments", {}).values(), *call.get("args", [])] if _scalar(v)}


#: Ways a person states what they are after (one per task, picked by its calls, so tasks do not all open alike);
#: the first request follows as the first step towards it (`FIRST`).
GOALS = ("I need to {what}.", "I'd like to {what}.", "I want to {what}.", "I'm trying to {what}.")
#: How the first request follows a goal: as the first step ("First, can you ...?").
FIRST = ("First,", "To start,", "Before that,", "To begin,")


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


def _lower(text: str) -> str:
    """A request continuing a sentence: "Can you ..." -> "can you ..." (a quoted name keeps its case)."""
    return text[:1].lower() + text[1:] if text[:2] != "I " else text


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
        """A seeded draw among the candidates the planner prefers (its first `preferred`), else among all,
        proposed as the sequence (step index -> function)."""
        candidates = ctx.get("candidates") or [[]]
        preferred = ctx.get("preferred") or len(candidates)
        chosen = candidates[random.Random(ctx.get("seed", 0)).randrange(min(preferred, len(candidates)))]
        return {"sequence": {str(j): name for j, name in enumerate(chosen)}}

    @staticmethod
    def _narrative(ctx: dict) -> dict:
        subjects = ctx.get("subjects") or [subject(c) for c in ctx.get("classes", [])]
        about = " and ".join(subjects) or "my tasks"
        return {"narrative": f"I am sorting out {about}."}

    @staticmethod
    def _rewrite(ctx: dict) -> dict:
        """All turns at once: the goal first (`goal`), then each turn's outcome in a person's words, referring
        back to earlier results ("that file"), with no filler between turns."""
        turns = said_again(made_named(ctx.get("turns", [])))
        stated = goal(turns)
        last = max((i for i, t in enumerate(turns) if t.get("kind") == "calls"), default=-1)
        queries = []
        spoken = 0
        for i, turn in enumerate(turns):
            if turn.get("kind") == "reveal":
                queries.append("")
                continue
            body = request(turn) if spoken else opening(request(turn))
            if spoken == 0 and stated:  # the goal, then the first step towards it
                body = f"{stated} {FIRST[len(stated) % len(FIRST)]} {_lower(body)}"
            elif spoken and i == last and stated:  # the step the goal announced
                body = f"Now {_lower(body)}"
            queries.append(body)
            spoken += 1
        return {"queries": queries}

    @staticmethod
    def _rewrite_turn(ctx: dict) -> dict:
        """The no-rewrite ablation: one turn on its own (no narrative, no other turns)."""
        turn = ctx.get("turn", {})
        return {"query": "" if turn.get("kind") == "reveal" else request(turn)}

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
