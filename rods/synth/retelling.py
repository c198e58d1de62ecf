"""Retold texts: where a seed passes an earlier result on in a text of its own (a post of a file's lines, a
message about a total), what a variant passes and how its query says it.

A seed's text that mentions an earlier result without being one of its values
(`retellings`) is a data flow a person makes by reading and retelling; the
variant's text at that place retells its own source (`retelling`: the values
joined, the first line as news, or a note of the call's own words), so the
seed's data-flow edges stay and no value is copied. The query must then say
which text is meant (`retold_shape`): "post 'Update:' followed by that text"
has one answer, "post that text" has none.
"""

from __future__ import annotations

from typing import Any

from rods.envs.calls import ToolCall
from rods.synth.coherence import TEXT_ROLES, arguments_of, mentioned_words, pieces
from rods.synth.profile import Trace, produced_values, result_value, value_paths


def retellings(trace: Trace, params: dict[str, list[str]], vocabulary: frozenset[str]) -> dict[tuple[int, str], int]:
    """(call j, text parameter) -> the earlier call i whose result (or, failing that, whose arguments) the text
    retells: it mentions a distinctive word or number of it without being a value i produced (a post of a
    file's lines, a note of a total, a message about the folder just archived)."""
    produced = [produced_values(r, c) for r, c in zip(trace.results, trace.created)]
    said = [mentioned_words(r) - vocabulary for r in trace.results]
    given = [{w for _, v in arguments_of(c, params.get(c.name, [])) if isinstance(v, str) for w in mentioned_words(v)}
             - vocabulary for c in trace.calls]
    out: dict[tuple[int, str], int] = {}
    for j, call in enumerate(trace.calls):
        for param, value in arguments_of(call, params.get(call.name, [])):
            if not isinstance(value, str) or len(value.split()) < 2 or not pieces(param) & TEXT_ROLES:
                continue  # a name shared by two calls is a shared value; a retelling is a text
            if (j, param) in out or any(value in produced[i] for i in range(j)):
                continue
            mine = mentioned_words(value)
            source = next((i for i in range(j - 1, -1, -1) if mine & said[i]), None)
            if source is None:
                source = next((i for i in range(j - 1, -1, -1) if mine & given[i]), None)
            if source is not None:
                out[(j, param)] = source
    return out


#: How a retold text passes on its source (`retelling`): several values joined, one line as news, a note.
JOINED, NEWS, NOTE = ", ", "Update: ", "About "
#: At most this many values of a result are joined.
TOLD = 6


def retelling(result: str, call: ToolCall | None = None) -> str | None:
    """A text that retells a call without being one of its values: its result's text values joined (several),
    or the first line of its one text value as news ("Update: Quarterly plan for the Lisbon office", two words or
    more: whole, as a person would pass it on, not cut short); else a note of the call's own text arguments
    ("About archive"); None when there is nothing to tell. The query must say which text is meant
    (`retold_shape`)."""
    texts = _tellables(result)
    if len(texts) >= 2:
        return JOINED.join(texts[:TOLD])
    lines = texts[0].strip().splitlines() if texts else []
    if lines and len(lines[0].split()) >= 2:
        return NEWS + lines[0].strip()
    told = [v for v in [*call.arguments.values(), *call.args] if isinstance(v, str) and v.strip()] if call else []
    return NOTE + " and ".join(told[:2]) if told else None


def retold_shape(text: str, result: str) -> dict[str, str]:
    """How a text passed where a seed retold a result was made, for the query that asks for it ("post that
    text" has no one answer when the text is "Update: " and that text): `{"prefix": "Update:"}` (with
    `"part": "first line"` when the text has several) or `{"joined": ", "}` (with `"first": "6"` when the
    result holds more values) when it retells `result` (`retelling`), else `{"said": text}`: the user's own
    words (a note of a write's arguments, a fresh text), said as they are."""
    if text != retelling(result):
        return {"said": text}
    texts = _tellables(result)
    if not text.startswith(NEWS):  # several values joined: the first six of them
        return {"joined": JOINED, **({"first": str(TOLD)} if len(texts) > TOLD else {})}
    several = len(texts[0].strip().splitlines()) > 1  # the first line of a text of several
    return {"prefix": NEWS.strip(), **({"part": "first line"} if several else {})}


def _tellables(result: str) -> list[str]:
    """A result's values worth passing on, as text."""
    return [str(v) for _, v in value_paths(result_value(result)) if _tellable(v)]


def _tellable(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value.strip()) and value != "None"
    return isinstance(value, (int, float)) and not isinstance(value, bool)
