"""How an environment's own users ask for each tool: requests mined from its human seeds.

A person at a warehouse asks "Where are the nitrile gloves kept at the moment?",
not "find the products for 'nitrile gloves' as the query". A seed turn that
asks for exactly one call is such a request: its values, found in its words,
become slots (`Phrasing`), and a variant's call of the same tool with the same
arguments said and left unsaid is asked for in those words with its own values
("Where are the cable ties kept at the moment?"). The words stay the seeds';
only the values change.

A seed sentence carries its own story, so only what can travel is kept:

* the sentences that hold a value or ask for something ("?", "please", "can you");
  context around them ("Grand, the lads say it's packed.") is left behind;
* none that names what the new task does not have: a number, a proper noun, a
  person as "she" or "his", a word of a name or title the seed's state holds
  ("how many *grinders* have we got") that the tool's docs do not use;
* a value the seed left unsaid (it came from an earlier result) must be pointed
  at ("send *it* with DPD"), and a variant's call fits only if the same value is
  unsaid there too; a switch the seed set without saying it (`low_stock=True`
  behind "at or below its reorder point") must be set the same way;
* none that recites the tool's docs (`rods.synth.leak`), nor a turn that only
  supplies a value asked for before ("Sorry, should have said: GLS").

Mined once per environment with its API graph (`APIGraph.phrasings`); the
rewriter sends the fitting ones with each call (`asked`), which the template
backend says and an LLM backend reads as how this environment's users talk.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from rods.synth.api_graph import describe, function_docs
from rods.synth.judge import content_words
from rods.synth.leak import leaks
from rods.synth.profile import parse_ground_truth
from rods.synth.value_kinds import leaves
from rods.tasks.model import Task

#: A sentence that asks for something even without a value in it.
_ASKS = re.compile(r"\?|\b(?:please|can you|could you|would you|i need|i want|i'd like|let's|go ahead)\b", re.I)
#: Words that point at something named before ("send it", "that order"): what an unsaid value needs.
_POINTS = re.compile(r"\b(?:it|its|that|this|those|these|them|they|there|one)\b", re.I)
#: A person of the seed's own story, unknown to a new task.
_THIRD_PERSON = re.compile(r"\b(?:he|she|him|her|his|hers|himself|herself)\b", re.I)
#: Capitalised words that are no proper noun.
_PLAIN_CAPS = frozenset({"I", "I'm", "I'll", "I've", "I'd", "OK", "Ok"})
#: The most sentences a request keeps.
MAX_SENTENCES = 2
#: The longest request kept (characters).
MAX_CHARS = 280


@dataclass(frozen=True)
class Phrasing:
    """One seed's request for one call, its values as `{param}` slots.

    `unsaid`: the arguments the seed passed without saying them, with their values; `pointed`: those of them
    that came from elsewhere (an earlier result), which the text points at; `lowered`: slots the seed wrote in
    lower case, said the same way with a new value (quotes around a slot stay in the text)."""

    function: str
    text: str
    unsaid: tuple[tuple[str, Any], ...]
    pointed: frozenset[str]
    kinds: tuple[tuple[str, str], ...]  # each slot's parameter and the kind of value the seed said there
    lowered: frozenset[str] = frozenset()
    source: str = ""

    @property
    def slots(self) -> tuple[str, ...]:
        """The parameters the text says."""
        return tuple(p for p, _ in self.kinds)

    def fits(self, arguments: dict[str, Any], bound: set[str]) -> bool:
        """Whether a call with `arguments` (of which `bound` come from earlier results) is asked for by these
        words: the same arguments, the same ones said, each said value of the seed's kind, each unsaid one either
        pointed at by both or the seed's own value."""
        unsaid = dict(self.unsaid)
        if set(arguments) != {*self.slots, *unsaid}:
            return False
        kinds = dict(self.kinds)
        for param, value in arguments.items():
            if param in bound:
                if param not in self.pointed:
                    return False
            elif param in kinds:
                if _kind(value) != kinds[param]:
                    return False
            elif unsaid[param] != value:
                return False
        return True

    def say(self, arguments: dict[str, Any]) -> str:
        """The request with `arguments`' values in its slots."""
        def value(match: re.Match) -> str:
            param = match.group(1)
            text = arguments[param]
            text = f"{text:g}" if isinstance(text, float) else str(text)
            return text.lower() if param in self.lowered else text

        return re.sub(r"\{(\w+)\}", value, self.text)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    return "number" if isinstance(value, (int, float)) else "text" if isinstance(value, str) else "other"


def _find(text: str, value: Any) -> list[re.Match]:
    """Where a value is written in a text, as a whole word (case-insensitive; a number in its usual forms)."""
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, str):
        if len(value.strip()) < 2:
            return []
        forms = {value}
    elif isinstance(value, (int, float)):
        forms = {str(value), f"{value:g}"} | ({str(int(value))} if float(value).is_integer() else set())
    else:
        return []
    found: dict[int, re.Match] = {}
    for form in forms:
        for m in re.finditer(rf"(?<![\w.]){re.escape(form)}(?![\w]|\.\d)", text, flags=re.I):
            found.setdefault(m.start(), m)
    return sorted(found.values(), key=lambda m: m.start())


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text.strip()) if s.strip()]


def _names_something(sentence: str) -> bool:
    """Whether a sentence (slots as `{param}`) names what a new task would not have: a number, a proper noun,
    a person of the seed's story."""
    bare = re.sub(r"\{\w+\}", "", sentence)
    if re.search(r"\d", bare) or _THIRD_PERSON.search(bare):
        return True
    words = re.findall(r"[A-Za-z][\w']*", bare)
    return any(w[0].isupper() and w not in _PLAIN_CAPS for w in words[1:])


def story_words(task: Task) -> set[str]:
    """Stems of the words of the names and titles the task's state holds ("Angle Grinder 115mm") that the docs
    of its tools never use: words of this seed's own things, stale in another task."""
    named = {w for v in leaves(task.initial_config) if isinstance(v, str) and (" " in v or v[:1].isupper())
             for w in content_words(v)}
    docs = function_docs(task.involved_classes)
    documented = {w for doc in docs.values()
                  for text in (describe(doc), *(str(p.get("description", "")) for p in
                                                doc.get("parameters", {}).get("properties", {}).values()))
                  for w in content_words(text)}
    return named - documented


def phrasing_of(task: Task, turn: int, call: Any, story: set[str] | None = None) -> Phrasing | None:
    """The request of one seed turn for its one call, or None when its words cannot travel (module docstring)."""
    if call.args:
        return None
    text = " ".join(m.content for m in task.question[turn] if m.role == "user").strip()
    if not text:
        return None
    spans: list[tuple[int, int, str]] = []
    unsaid: dict[str, Any] = {}
    for param, value in call.arguments.items():
        found = _find(text, value)
        if len(found) > 1 or (not found and isinstance(value, (list, dict)) and _any_found(text, value)):
            return None  # said twice, or a list said in part: no one slot
        if found:
            spans.append((found[0].start(), found[0].end(), param))
        else:
            unsaid[param] = value
    spans.sort()
    if any(a[1] > b[0] for a, b in zip(spans, spans[1:])):
        return None
    lowered = set()
    out, at = [], 0
    for start, end, param in spans:
        written, value = text[start:end], call.arguments[param]
        if isinstance(value, str) and written == value.lower() != value:
            lowered.add(param)
        out += [text[at:start], "{" + param + "}"]
        at = end
    slotted = "".join(out) + text[at:]
    kept = [s for s in _sentences(slotted) if re.search(r"\{\w+\}", s) or _ASKS.search(s)][:MAX_SENTENCES]
    body = " ".join(kept)
    if not kept or len(body) > MAX_CHARS or any(_names_something(s) for s in kept):
        return None
    story = story_words(task) if story is None else story
    if content_words(re.sub(r"\{\w+\}", "", body)) & story:
        return None
    if len(set(re.findall(r"\{(\w+)\}", body))) != len(spans):
        return None  # a value said only in a sentence left behind
    pointed = frozenset(p for p, v in unsaid.items() if not isinstance(v, bool) and v is not None)
    if pointed and not _POINTS.search(re.sub(r"\{\w+\}", "", body)):
        return None  # the seed's value came from context the kept words do not point at
    said = re.sub(r"\{(\w+)\}", lambda m: str(call.arguments[m.group(1)]), body)
    if call.name in said or leaks(said, [call.name], task.involved_classes):
        return None  # names the tool, or recites its docs
    return Phrasing(function=call.name, text=body,
                    unsaid=tuple(sorted(unsaid.items(), key=lambda kv: kv[0])), pointed=pointed,
                    kinds=tuple(sorted((p, _kind(call.arguments[p])) for _, _, p in spans)),
                    lowered=frozenset(lowered), source=f"{task.id}#{turn}")


def _any_found(text: str, value: Any) -> bool:
    items = value.values() if isinstance(value, dict) else value
    return any(_find(text, v) or (isinstance(v, (list, dict)) and _any_found(text, v)) for v in items)


def mine(tasks: list[Task]) -> dict[str, list[Phrasing]]:
    """Function -> the requests for it that the tasks' one-call turns hold (turns that only supply a value asked
    for before, after a turn without calls, are left out: "Sorry, should have said: GLS")."""
    out: dict[str, list[Phrasing]] = defaultdict(list)
    for task in tasks:
        try:
            turns = parse_ground_truth(task)
        except ValueError:
            continue
        story = story_words(task)
        for t, calls in enumerate(turns):
            if len(calls) != 1 or t >= len(task.question) or (t and not turns[t - 1]):
                continue
            found = phrasing_of(task, t, calls[0], story)
            if found is not None and found.text not in {p.text for p in out[found.function]}:
                out[found.function].append(found)
    return dict(out)
