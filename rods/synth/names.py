"""Names a user chose, for a recast to rename: a file, a folder, a tag, a handle written in quotes.

A recast (`rods.synth.recast`) changes what makes an errand the user's own:
its people, codes, ids and numbers. A task whose world is things the user
named ("craft a new file dubbed 'summary.txt' in 'Documents'") holds none of
those, so it could not be recast and was re-planned, which reads as parts
put together. The names the user writes in quotes and a call passes are the
user's own choice as much as a person is: a recast gives each the name
another of the environment's users passed in that place (`ValueModel.passed`:
a file name for a file name, with the same extension), one the seed's world
does not hold already, and renames it alike in the state, the calls and the
messages. Categories (a door, a mode, a status) are the environment's, not
the user's: they stay.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable
from typing import Any

from rods.envs.calls import ToolCall
from rods.synth.dates import as_date
from rods.synth.mentions import quoted_in
from rods.synth.people import is_person_name
from rods.synth.value_kinds import is_distinctive, leaves
from rods.synth.value_model import ValueModel

#: A name without spaces: a file, a folder, a tag, a handle ('summary.txt', 'Documents', 'tech_guru').
NAME = re.compile(r"[A-Za-z][A-Za-z_.-]{2,40}")
#: Slot kinds a name is never taken from: the environment's own sets and what other rules rename. (A name that
#: keys a record, a folder of a file system, is an identifier of the model, and is the user's.)
_NOT_CHOSEN = frozenset({"category", "date", "person", "company"})


def quoted_names(calls: Iterable[ToolCall], writes: Iterable[bool | None], text: str, model: ValueModel | None,
                 held: frozenset[str], vocabulary: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """("function.param", name) for each name a call passes that the messages write in quotes, in call order:
    the names the user chose. The name is a thing's whole name: one the state holds (`held`: its texts and map
    keys) or one a write (`writes`: per call, whether it changes the state) gives a new thing. A read's other
    quoted words are search terms, which find what the state's texts say ('update' in a script), not names. A
    value with digits is a code (`touched_values` takes it); a category or a person is not the user's choice, nor
    a word of the environment's `vocabulary` ('archive' is a folder and a verb: renamed 'temp', a tweet's "Managed
    to archive" became "Managed to temp")."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for call, writes_state in zip(calls, writes):
        for param, value in call.arguments.items():
            for item in value if isinstance(value, list) else [value]:
                if not isinstance(item, str) or item in seen or not NAME.fullmatch(item) or as_date(item):
                    continue
                slot = model.parameter(call.name, param) if model is not None else None
                if slot is not None and slot.kind in _NOT_CHOSEN:
                    continue
                if is_person_name(item, model.people if model is not None else frozenset()):
                    continue
                if item not in held and not writes_state:
                    continue
                if not is_distinctive(item, vocabulary):
                    continue
                if quoted_in(item, text):
                    seen.add(item)
                    out.append((f"{call.name}.{param}", item))
    return out


def renamed(names: list[tuple[str, str]], model: ValueModel | None, world: Any, text: str,
            rng: random.Random) -> dict[str, str]:
    """Each chosen name -> the name another user passed in its place (the same function's parameter, else any
    parameter of that name), of its shape (`_like`), that the seed's world (its state and calls: `world`) and
    messages do not hold; a name with no such other stays (it is then not renamed)."""
    if model is None:
        return {}
    held = json.dumps(world, default=str)
    out: dict[str, str] = {}
    for key, name in names:
        param = key.rpartition(".")[2]
        options = sorted(model.passed.get(key, frozenset()))
        if not options:
            options = sorted({v for k, values in model.passed.items() if k.rpartition(".")[2] == param
                              for v in values})
        free = [o for o in options if _like(o, name) and json.dumps(o) not in held
                and o.lower() not in text.lower() and o not in out.values()]
        # a name sharing a word with the seed's first ('TeamNotes.txt' -> 'meeting_notes.txt'): the words around
        # it ("for keeping track of the fresh ideas") fit it better than another user's 'MeanRevenue.txt'
        near = [o for o in free if _words(o) & _words(name)]
        described = described_words(name, text, world)
        if described:  # what the words or its content say of it must still hold: such a name or none
            free = near = [o for o in near if _words(o) & described]
        if near or free:
            out[name] = rng.choice(near or free)
    return out


def described_words(name: str, text: str, world: Any) -> set[str]:
    """The words of a name that the messages say apart from the name, or that the content of the thing it names
    holds: 'ProjectOverview.txt' "where I've laid out an initial summary of the project", a 'FinalReport.txt'
    whose text is a final report. Renamed 'MeanRevenue.txt' or 'TeamNotes.txt', three blind reads of BFCL found
    the file no longer what the user said of it."""
    words = _words(name)
    if not words:
        return set()
    around = re.sub(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", " ", text)
    said = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", around)}
    return words & (said | {w.lower() for w in re.findall(r"[A-Za-z]{3,}", " ".join(_content_of(name, world)))})


def _content_of(name: str, world: Any) -> list[str]:
    """The texts held under a map key `name` anywhere in `world` (a file's content in a file system)."""
    out: list[str] = []
    if isinstance(world, dict):
        for key, value in world.items():
            if key == name:
                out += [v for v in leaves(value) if isinstance(v, str)]
            else:
                out += _content_of(name, value)
    elif isinstance(world, (list, tuple)):
        for item in world:
            out += _content_of(name, item)
    return out


def with_derived(names: dict[str, str], values: Iterable[Any]) -> dict[str, str]:
    """`names` and, for each other text of the seed (`values`: its state's and calls' strings) that holds a renamed
    name's stem, that text with the new stem: the copy 'ArchivedFinalReport2024.txt' of a 'FinalReport.txt'
    renamed 'TeamNotes.txt' is 'ArchivedTeamNotes2024.txt' (re-numbered alone, it stayed an archived final
    report of a file of team notes)."""
    stems = {_stem(old): _stem(new) for old, new in names.items() if len(_stem(old)) >= 5}
    out = dict(names)
    for value in values:
        if not isinstance(value, str) or value in out or as_date(value):
            continue
        new = value
        for old, stem in sorted(stems.items(), key=lambda item: -len(item[0])):
            before = "" if old[:1].isupper() else "(?<![A-Za-z])"  # a camel-case part ('ArchivedFinalReport')
            new = re.sub(rf"{before}{re.escape(old)}(?![a-z])", stem, new)
        if new != value:
            out[value] = new
    return out


def _stem(name: str) -> str:
    """A name without its extension: 'FinalReport.txt' -> 'FinalReport'."""
    return name.rsplit(".", 1)[0] if "." in name else name


def _words(name: str) -> set[str]:
    """The words of a name, lower case, its extension aside: 'TeamNotes.txt' -> {'team', 'notes'}."""
    return {w.lower() for w in re.findall(r"[A-Z]?[a-z]{3,}|[A-Z]{3,}", _stem(name))}


def _like(option: str, name: str) -> bool:
    """Whether `option` can stand for `name`: another name, with the same extension (or none), in the same case."""
    if not NAME.fullmatch(option) or option.lower() in name.lower() or name.lower() in option.lower():
        return False  # not the name itself, nor one holding it ('project_summary.txt' for 'summary.txt')
    ext = name.rpartition(".")[2].lower() if "." in name else None
    if (option.rpartition(".")[2].lower() if "." in option else None) != ext:
        return False
    return option[:1].isupper() == name[:1].isupper()
