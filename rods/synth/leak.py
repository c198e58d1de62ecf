"""`query_leak`: how often a query recites the documentation of the calls it asks for.

A query that repeats a function's docstring or names its parameters tells the
policy which call to make, and makes a variant easier than its seed. A query
*leaks* for a call when it contains, case-insensitively and word for word:

* the first sentence of the call's description (when it has at least
  `MIN_SENTENCE_WORDS` words: "Close a ticket." is also what any person says),
  or any `WINDOW`-word window of the description;
* one of the call's parameter names recited as such: an identifier-shaped name
  (with ``_`` or an inner capital: ``file_name``, ``fuelAmount``) as a token,
  or any parameter name, or its spelled-out label ("file name", "fuel amount"),
  immediately followed by a value: ``name 'x'``, ``name "x"``, ``name 42``,
  ``name=x``, ``name: x`` (one- and two-letter names only in the ``=`` / ``:``
  forms, since "a 'x'" is plain English).

`query_leak(task)` is the fraction of the task's asking turns that leak for one
of the calls they ask for. An asking turn is a turn with a user query and calls
to ask for: its own ground-truth calls, or, when it has none (the turn before a
miss_func reveal, a miss_param turn that leaves a value out), the next turn's.
The judge's deterministic ``natural`` check fails any query that leaks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from rods.synth.api_graph import describe, function_docs
from rods.tasks.model import Task

#: Description windows this long count as recited.
WINDOW = 6
#: A first sentence counts as recited from this many words.
MIN_SENTENCE_WORDS = 4


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _label(param: str) -> str:
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", param).replace("_", " ").lower().strip()


@cache
def _doc(function: str, classes: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(description phrases that count as recited, parameter names) of one function of `classes`."""
    doc = function_docs(classes).get(function)
    if doc is None:
        return (), ()
    text = describe(doc)
    words = _words(text)
    first = _words(re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]) if text.strip() else []
    phrases = {" ".join(words[i:i + WINDOW]) for i in range(len(words) - WINDOW + 1)}
    if len(first) >= MIN_SENTENCE_WORDS:
        phrases.add(" ".join(first))
    params = tuple(doc.get("parameters", {}).get("properties", {}))
    return tuple(sorted(phrases)), params


def _recited(query: str, param: str) -> bool:
    if ("_" in param or re.search(r"[a-z][A-Z]", param)) and re.search(rf"(?<![\w]){re.escape(param)}(?![\w])", query):
        return True
    value = r"\s*[=:]\s*\S" if len(param) <= 2 else r"(?:\s*[=:]\s*\S|\s+['\"\d\[])"
    for name in {param, _label(param)}:
        if re.search(rf"(?<![\w]){re.escape(name)}{value}", query, flags=re.IGNORECASE):
            return True
    return False


def leaks(query: str, functions: Iterable[str], classes: Iterable[str]) -> str | None:
    """Why `query` leaks for one of `functions` (tools of `classes`; see the module docstring), or None."""
    text = " " + " ".join(_words(query)) + " "
    where = tuple(classes)
    for function in functions:
        phrases, params = _doc(function, where)
        for phrase in phrases:
            if f" {phrase} " in text:
                return f"recites the description of {function} ({phrase!r})"
        for param in params:
            if _recited(query, param):
                return f"recites the parameter {param!r} of {function}"
    return None


def asking_turns(task: Task) -> list[tuple[str, list[str]]]:
    """(query, functions it asks for) for every asking turn (see the module docstring)."""
    names = [[call.split("(", 1)[0].strip() for call in turn] for turn in task.ground_truth]
    out = []
    for t, messages in enumerate(task.question):
        query = " ".join(m.content for m in messages)
        asked = names[t] if t < len(names) else []
        if not asked and t + 1 < len(names):
            asked = names[t + 1]
        if query.strip() and asked:
            out.append((query, asked))
    return out


def query_leak(task: Task) -> float:
    """Fraction of the task's asking turns whose query leaks (0.0 for a task without any)."""
    turns = asking_turns(task)
    if not turns:
        return 0.0
    return sum(leaks(q, fns, task.involved_classes) is not None for q, fns in turns) / len(turns)
