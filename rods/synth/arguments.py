"""State-aware argument proposals for a planned call (docs/design.md §4.3).

The planner fixes which function runs at each position; the values it gets are
chosen here, during execution, from the live environment just before the call,
so they are valid *in that state*:

* a parameter the plan feeds from an earlier call (a data-flow edge) gets a
  value that call produced (its result, or what it created), of the
  parameter's type;
* any other parameter gets, in a shuffled mix: a value of the class's state
  whose key looks like the parameter (``order_id`` <- the keys of ``orders``,
  ``symbol`` <- ``orders/*/symbol``, ``user_id`` <- ``user_map``), the entries
  of the current directory for file-system names, an enum value of the doc, or
  a fresh distinctive word / number / date from the plan's
  :class:`~rods.synth.values.ValueRemapper` (names a call creates, amounts);
  the search text of a call that only reads (a pattern, a keyword) is a word
  or two of a text the state holds, so a search looks for what is there.

Proposals are only proposals: the executor keeps the first one whose data-flow
edges are exactly the plan's and whose call runs without an error. A
function's required parameters are filled, and the optional ones its seed's
call passed at that position (a setting as it was, a name or list of its own);
other optional ones keep their defaults. What a parameter asks for is read from
its name, type and description (:mod:`rods.synth.parameters`).
A free-text parameter (an SQL statement) of an environment other than BFCL
takes a seed's example with its literals re-drawn (:mod:`rods.synth.free_text`).
"""

from __future__ import annotations

import json
import random
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from rods.envs.calls import ToolCall
from rods.envs.contract import RolloutEnvironment, environment_from
from rods.envs.domains import domain_of
from rods.envs.environment import public_state
from rods.synth import state as state_view
from rods.synth.api_graph import function_docs
from rods.synth.free_text import FreeText
from rods.synth.parameters import (
    CONTAINER_WORDS,
    ENTRY_WORDS,
    GENERIC,
    KEY_TOKENS,
    NAMING_WORDS,
    PRECISION_WORDS,
    SECRET_WORDS,
    SENTENCE_WORDS,
    TEXT_WORDS,
    described_as,
    enum_values,
    fits_type,
    is_count,
    names_a_new_thing,
    tokens,
)
from rods.synth.people import is_person_name
from rods.synth.profile import linkable, result_value, value_paths
from rods.synth.value_kinds import is_distinctive, role_of
from rods.synth.values import ValueRemapper

if TYPE_CHECKING:
    from rods.synth.value_model import Slot

EXTENSIONS = ("txt", "md", "csv", "log", "json")
#: A file's name: a stem and an extension of letters and digits ("report.pdf", "test_rain1.jpg").
_FILE_NAME = re.compile(r"[^./\s][^/\s]*\.[A-Za-z0-9]{1,5}")
#: How often a parameter takes the value an earlier call of the task gave a parameter of its name (a read, a write).
SAME_ENTITY_READ, SAME_ENTITY_WRITE = 0.7, 0.0


def _name_like(value: Any) -> bool:
    return not isinstance(value, str) or (len(value) <= 40 and not any(ch.isspace() or ch in "'\"" for ch in value))


def result_fields(results: Iterable[str]) -> dict[str, list[Any]]:
    """The scalar values of call results by the name of the field each sits under (a list's items under the
    list's field): `{"payment_history": [{"payment_id": "gift_card_1"}]}` -> `{"payment_id": ["gift_card_1"]}`."""
    out: dict[str, list[Any]] = {}
    for text in results:
        for path, value in value_paths(result_value(text)):
            field = next((p for p in reversed(path) if isinstance(p, str)), None)
            if field is not None and _askable(value):
                out.setdefault(field, []).append(value)
    return out


def _askable(value: Any) -> bool:
    """A text, or a number not below zero (a refund's -688 is no amount anyone asks for)."""
    if isinstance(value, str):
        return value != ""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


def _texts_of(state: list[Segment]) -> set[str]:
    """The texts of a class's linkable state values (`ArgumentProposer._state_values`)."""
    return {v for _, values in state for (_, _, _, v) in values if isinstance(v, str)}


def snapshot_leaves(env: RolloutEnvironment, owner: str, state: Any = None) -> list[tuple[str, Any]]:
    """(path, scalar) leaves of a class's public state (or of `state`, its delta), read by its domain's
    state reader (`Domain.state_leaves`)."""
    data = public_state(env.instance(owner)) if state is None else state
    return domain_of(owner).state_leaves(owner, data)


class ArgumentProposer:
    """Proposes argument dicts for one call in the live state (see the module docstring)."""

    def __init__(self, remapper: ValueRemapper, rng: random.Random, classes: Iterable[str],
                 initial_config: dict[str, Any] | None = None, free_text: FreeText | None = None):
        self.remapper = remapper
        self.free_text = free_text
        self.rng = rng
        self.docs = function_docs(classes)
        #: Every parameter name of the classes: the name of a record's field ("mentions") is no value of one.
        self.parameter_names = frozenset(p for doc in self.docs.values()
                                         for p in doc.get("parameters", {}).get("properties", {}))
        self.initial_config = initial_config or {}
        self._state: tuple[Any, str | None, list[Segment]] | None = None  # (env, class, its state values)
        #: Parameter -> the values earlier calls of the task were given for it (`remember`).
        self.earlier: dict[str, list[Any]] = {}
        #: Parameter -> every scalar earlier calls gave it, small numbers too (two nights searched, two booked).
        self.given: dict[str, list[Any]] = {}
        #: (function, parameter, value) a call was refused for, its error naming the value (`refuse`).
        self.refused: set[tuple[str, str, str]] = set()
        self._function: str | None = None  # the function `propose` is filling, and whether it only reads
        self._reading = False

    def remember(self, calls: Iterable[ToolCall]) -> None:
        """The task's calls so far: a later parameter of the same name may take the same value (the same file,
        the same book), so the calls are about one thing (a data flow still decides the edges)."""
        self.earlier, self.given = {}, {}
        for call in calls:
            for param, value in call.arguments.items():
                if isinstance(value, (str, int, float)) and not isinstance(value, bool):
                    self.given.setdefault(param, []).append(value)
                if isinstance(value, (str, int)) and not isinstance(value, bool) and linkable(value):
                    self.earlier.setdefault(param, []).append(value)

    def refuse(self, call: ToolCall, error: str) -> None:
        """Remember the text values a failed call's error names ("A 'found' adjustment puts stock back: delta must
        be positive", "No purchase order 'JDY-02'"): later draws of this variant do not give them there again, so
        a search does not spend its trials on one refusal."""
        said = error.lower()
        self.refused |= {(call.name, p, v) for p, v in call.arguments.items() if isinstance(v, str) and len(v) >= 2
                         and re.search(rf"(?<!\w){re.escape(v.lower())}(?!\w)", said)}

    def params(self, function: str, optional: Iterable[str] = ()) -> list[tuple[str, dict[str, Any]]]:
        """The function's required parameters with their specs, then those of `optional` it has."""
        doc = self.docs.get(function, {}).get("parameters", {})
        props = doc.get("properties", {})
        required = list(doc.get("required", []))
        return [(p, props.get(p, {})) for p in required] + [(p, props[p]) for p in optional
                                                             if p in props and p not in required]

    def propose(self, function: str, env: RolloutEnvironment, feeds: dict[int, list[list[Any]]],
                limit: int = 8, reading: bool = False, fits: Callable[[int, str, Any], bool] | None = None,
                fields: dict[str, list[Any]] | None = None,
                optional: Mapping[str, Any] | None = None,
                scales: Mapping[str, float] | None = None) -> Iterator[tuple[dict[str, Any], dict[str, int]]]:
        """Up to `limit` (arguments, fed) pairs; `fed` maps a parameter to the source call it takes a value from.

        `feeds` holds, per source call that must feed this one, the values it
        produced in tiers, best first (result values, created values, result keys).
        A `reading` call (one that must not change the state) takes names from the
        state rather than fresh ones whenever the state has any. `fits(source, parameter, value)`,
        if given, says whether a fed value may play that parameter's role. `fields` holds the feeding results'
        values by the field they sit under (`result_fields`): a parameter of that name takes one of them.
        `optional` holds optional parameters to pass as well, with the seed's values: a setting (`mode='w'`,
        `a=True`) is kept, a name or text the seed gave gets a value of this task's own. A source's value no
        required parameter takes may go to another optional one (`echo`'s `file_name`: the file just made).
        `scales` holds the numbers the seed gave this function (`Plan.scales`): a number of this task's own is of
        that size (`like`).
        """
        optional = optional or {}
        self._function, self._reading = function, reading
        params = self.params(function, optional)
        taken = dict(params)
        every = self.docs.get(function, {}).get("parameters", {}).get("properties", {})
        spare = [(p, spec) for p, spec in self.params(function, every) if p not in taken]  # the other optional ones
        owner = self.docs.get(function, {}).get("class")
        if self._state is None or self._state[0] is not env or self._state[1] != owner:
            self._state = (env, owner, self._state_values(env, owner))
        state = self._state[2]
        for _ in range(limit):
            arguments: dict[str, Any] = {}
            fed: dict[str, int] = {}
            free = list(range(len(params)))
            self.rng.shuffle(free)
            ok = True
            for src, values in sorted(feeds.items()):  # one parameter per source takes one of its values
                placed = False
                # a required (or passed) parameter first; else an optional one (echo's `file_name`: the file
                # just made)
                slots = [*((k, params[k]) for k in free), *((None, p) for p in spare if p[0] not in arguments)]
                for k, (name, spec) in slots:
                    value = self._fed_value(name, spec, values,
                                            None if fits is None else lambda v, s=src, p=name: fits(s, p, v),
                                            (fields or {}).get(name, ()))
                    if value is not None:
                        arguments[name], fed[name] = value, src
                        if k is not None:
                            free.remove(k)
                        placed = True
                        break
                ok &= placed
            if not ok:
                return
            for k in free:
                name, spec = params[k]
                if name in optional and isinstance(optional[name], (bool, int, float, str)) \
                        and not is_distinctive(optional[name], self.remapper.vocabulary):
                    arguments[name] = optional[name]
                    continue
                given = [v for v in (fields or {}).get(name, ()) if fits_type(v, spec.get("type", "string"))]
                if given:
                    arguments[name] = self.rng.choice(given)
                    continue
                text = None
                if self.free_text is not None and spec.get("type", "string") == "string" and role_of(name) is None:
                    text = self.free_text.value(function, name, env, owner)
                arguments[name] = text if text is not None else self._own_value(name, spec, state, env, owner, reading,
                                                                                (scales or {}).get(name))
            for name in [params[k][0] for k in free if tokens(params[k][0]) & {"destination", "target"}]:
                arguments[name] = self._same_kind(arguments[name], arguments, env, owner)
            if any((function, p, v) in self.refused for p, v in arguments.items() if isinstance(v, str)):
                continue  # a value the environment refused here before ("'Norlin KG' is not a carrier we book")
            values = [repr(v) for v in arguments.values()]
            if len(set(values)) < len(values):  # mv(a, a), diff(a, a): no call of sense, and some loop the simulator
                continue
            yield {p: arguments[p] for p, _ in [*params, *spare] if p in arguments}, fed

    # ------------------------------------------------------------ values

    def _same_kind(self, value: Any, arguments: dict[str, Any], env: RolloutEnvironment, owner: str | None) -> Any:
        """A copy or move to a new name is named after the file, as people name copies: 'report.txt' to
        'report_backup.txt' (the thirteenth blind reader failed 'assignments_weddings.txt' copied to
        'recipes.txt'), never to a name the state shows."""
        if not isinstance(value, str) or owner is None or not _FILE_NAME.fullmatch(value):
            return value
        visible = {n for n, _ in domain_of(owner).visible_names(owner, env.instance(owner)) or []}
        if value in visible:
            return value
        others = [v for v in arguments.values() if isinstance(v, str) and v != value and _FILE_NAME.fullmatch(v)]
        if not others:
            return value
        stem, _, kind = others[0].rpartition(".")
        names = [f"{stem}_{word}.{kind}" for word in COPY_WORDS if not stem.endswith(word)]
        self.rng.shuffle(names)
        return next((n for n in names if n not in visible), value)

    def _fed_value(self, name: str, spec: dict[str, Any], tiers: list[list[Any]],
                   fits: Callable[[Any], bool] | None = None, named: Iterable[Any] = ()) -> Any:
        """One of a source's values for this parameter, of its type and role; the values under a field of the
        parameter's name first."""
        kind = spec.get("type", "string")
        item = (spec.get("items") or {}).get("type", "string") if kind == "array" else kind
        naming = bool(tokens(name) & NAMING_WORDS)
        text = bool(tokens(name) & TEXT_WORDS)  # free text takes a distinctive value, not a word like "lines"
        fitting = [[v for v in tier if fits_type(v, item) and not (naming and not _name_like(v))
                    and not (text and not is_distinctive(v, self.remapper.vocabulary))
                    and (fits is None or fits(v))] for tier in tiers]
        fitting = [tier for tier in fitting if tier]
        named = set(named)
        fitting = [[v for v in tier if v in named] for tier in fitting if named & set(tier)] or fitting
        if not fitting:
            return None
        value = self.rng.choice(fitting[0])
        return [value] if kind == "array" else value

    def _own_value(self, name: str, spec: dict[str, Any], state: list[Segment], env: RolloutEnvironment,
                   owner: str | None,
                   reading: bool = False, scale: float | None = None) -> Any:
        kind = spec.get("type", "string")
        enum = enum_values(spec)
        if kind == "array":
            item = (spec.get("items") or {}).get("type", "string")
            size = self.rng.randint(1, 3) if enum or item == "string" else self.rng.randint(2, 4)
            items: list[Any] = []
            for _ in range(3 * size):  # distinct items: a post mentions each person once
                value = self._scalar(name, item, enum, state, env, owner, reading, spec, listed=True)
                if value not in items:
                    items.append(value)
                if len(items) == size:
                    break
            return items
        if kind == "dict":
            return {}
        return self._scalar(name, kind, enum, state, env, owner, reading, spec, scale=scale)

    def _scalar(self, name: str, kind: str, enum: list[Any], state: list[Segment], env: RolloutEnvironment,
                owner: str | None, reading: bool, spec: dict[str, Any] | None = None, listed: bool = False,
                scale: float | None = None) -> Any:
        """One value of a parameter (`listed`: an item of a list, from the state's values whenever it has any,
        so a post's tags are all hashtags the data uses, not some of them made-up words)."""
        if kind == "boolean":
            return self.rng.random() < 0.5
        if enum:
            return self.rng.choice(enum)
        modelled = self._modelled(name, kind, state, env, owner)
        if modelled is not None:
            return modelled
        parts = tokens(name)
        described = described_as(spec or {})
        if not reading and kind == "string" and names_a_new_thing(name, spec or {}):
            return self._fresh(name, kind, owner, described)  # a new file's name: never one the state has
        want = parts - GENERIC or parts
        ranked = [_matches(segment, parts, want, kind) for segment in state]
        best = min((r for r, _ in ranked if r is not None), default=None)
        chosen = [values for r, values in ranked if r == best and values]
        options = chosen[0] if len(chosen) == 1 else [v for values in chosen for v in values]  # shared: not edited
        if scale is not None and kind in ("integer", "number", "float") and "id" not in parts:
            options = [v for v in options if near(v, scale)]  # the state's amounts of the seed's size, else one
            if not options:  # made like the seed's (150 -> 120 or 250)
                return like(scale, self.rng, integer=kind == "integer" or isinstance(scale, int))
        if any(isinstance(v, str) and v in self.parameter_names for v in options):
            options = [v for v in options if not (isinstance(v, str) and v in self.parameter_names)]
        visible = None
        if owner is not None and kind == "string" and not (parts & TEXT_WORDS):
            visible = domain_of(owner).visible_names(owner, env.instance(owner))
        if visible is not None:
            entries = visible
            if parts & CONTAINER_WORDS:
                entries = [e for e in entries if e[1]]
            elif parts & ENTRY_WORDS:
                entries = [e for e in entries if not e[1]]
            elif parts & {"destination", "target"} and described == "path":
                entries = [e for e in entries if e[1]]  # into a folder, or a new name: never onto a file
            options = [*options, *(n for n, _ in entries)]
        again = [v for v in self.earlier.get(name, ()) if fits_type(v, kind) and (not options or v in options)]
        if again and self.rng.random() < (SAME_ENTITY_READ if reading else SAME_ENTITY_WRITE):
            return self.rng.choice(again)  # the thing an earlier call was about: one goal, not two
        if options and ("id" in parts or listed or self.rng.random() < (0.95 if reading else 0.7)):
            return self.rng.choice(options)
        if reading and kind == "string" and parts & TEXT_WORDS:
            phrase = self._phrase_from(state)
            if phrase is not None:
                return phrase
        return self._fresh(name, kind, owner, described)

    def _modelled(self, name: str, kind: str, state: list[Segment], env: RolloutEnvironment,
                  owner: str | None) -> Any:
        """The value the environment's value model (`rods.synth.value_model`) gives this parameter, or None to
        choose as for any other: a date or an amount an earlier call of the task gave it (the nights searched
        are the nights booked), a member of its category (one the state holds first: a room type the hotel
        has), a date as far from today as the seeds' dates are."""
        model, slot = self.remapper.model, self._slot(name)
        if model is None or slot is None:
            return None
        again = [v for v in self.given.get(name, ()) if fits_type(v, kind)]
        if again and (slot.kind == "date" or (slot.kind == "quantity" and isinstance(again[-1], int)
                                               and 0 < again[-1] <= 30)):
            return again[-1]
        if slot.kind == "category" and slot.members:
            members = sorted(m for m in slot.members if fits_type(m, kind))
            held = _texts_of(state)
            pool = [m for m in members if m in held] or members
            return self.rng.choice(pool) if pool else None
        if slot.kind == "person":  # a person the state holds, for a read; a new person for a write
            if self._reading:
                held_people = sorted(v for v in _texts_of(state) if is_person_name(v, model.people))
                return self.rng.choice(held_people) if held_people else None
            return self.remapper.name("person") if kind == "string" else None
        if slot.kind == "date" and owner is not None:
            today = model.today_of(owner, public_state(env.instance(owner)))
            return None if today is None else model.draw_date(slot, today, self.rng)
        return None

    def _slot(self, name: str) -> Slot | None:
        """What the environment's value model says the parameter `name` of the function being filled holds."""
        model = self.remapper.model
        return model.parameter(self._function, name) if model is not None and self._function else None

    def _phrase_from(self, state: list[Segment]) -> str | None:
        """A word or two of a text the state holds (a line of a file, a title): what a person searches for is
        in the data, not made up. None when the state holds no text."""
        texts = [v for _, values in state for (_, _, _, v) in values if isinstance(v, str) and len(v.split()) >= 3]
        if not texts:
            return None
        words = [w.strip(".,;:!?\"()[]") for w in self.rng.choice(texts).split()]
        starts = [i for i, w in enumerate(words) if re.fullmatch(r"[A-Za-z][A-Za-z'-]{3,}", w)]
        if not starts:
            return None
        start = self.rng.choice(starts)
        both = start + 1 < len(words) and re.fullmatch(r"[A-Za-z'-]{2,}", words[start + 1]) and self.rng.random() < 0.5
        return " ".join(words[start:start + 2]) if both else words[start]

    def _fresh(self, name: str, kind: str, owner: str | None = None, described: str | None = None) -> Any:
        parts = tokens(name)
        role = role_of(name)
        if kind == "string" and described == "zipcode":
            return "".join(self.rng.choice("0123456789") for _ in range(5))
        if described == "path" and role == "place":  # cp's `destination`: a file's name, not a city
            role, parts = None, parts | {"file"}
        if kind == "string" and role is not None:  # a person's name, a city: never a noun or an id
            return self.remapper.name(role)
        model, slot = self.remapper.model, self._slot(name)
        if model is not None and slot is not None and slot.kind == "quantity" \
                and kind in ("integer", "number", "float"):
            drawn = model.draw_quantity(slot, self.rng)  # of the size the seeds gave it
            if drawn is not None:
                return int(drawn) if kind == "integer" else drawn
        if kind == "integer" and is_count(name):  # how many of something a person asks for: a few
            return self.rng.randint(1, 5)
        if kind in ("integer", "number", "float") and parts & PRECISION_WORDS:  # digits: a few
            return self.rng.randint(1, 4)
        if kind == "integer":
            return self.remapper.fresh_number(integer=True)
        if kind in ("number", "float"):
            return self.remapper.fresh_number(integer=self.rng.random() < 0.5)
        if parts & {"date"}:
            return f"{self.rng.randint(2025, 2027)}-{self.rng.randint(1, 12):02d}-{self.rng.randint(1, 28):02d}"
        if parts & TEXT_WORDS:  # a sentence the environment's people wrote, else a title-like phrase
            said = self.remapper.sentence(owner) if parts & SENTENCE_WORDS else None
            return said or f"{self.remapper.fresh_word().capitalize()} {self.remapper.fresh_word()} notes"
        if parts & {"file"}:
            return f"{self.remapper.fresh_word()}.{self.rng.choice(EXTENSIONS)}"
        if parts & SECRET_WORDS:  # a token, a secret, a password: what such a thing looks like
            return "".join(self.rng.choice("abcdefghjkmnpqrstuvwxyz23456789") for _ in range(12))
        if parts & {"email", "mail"}:
            return f"{self.remapper.name('first').lower()}.{self.remapper.name('last').lower()}@example.com"
        if parts & {"card", "phone", "account"} and not parts & {"holder", "name", "type"}:
            return "".join(self.rng.choice("0123456789") for _ in range(16 if "card" in parts else 10))
        if parts & {"id", "code"}:  # an id: a short prefix and digits, not a word
            prefix = next(iter(sorted(parts - {"id", "code"})), "id")[:3].upper()
            return f"{prefix}-{self.rng.randint(1000, 9999)}"
        return self.remapper.fresh_word()

    def _state_values(self, env: RolloutEnvironment, owner: str | None) -> list[Segment]:
        """The class's linkable state scalars (`state_values`), in segments.

        A dict key counts as an id or name (`orders/12446#key` answers `order_id`). A delta class
        (`rods.synth.state`) offers its loaded state's values (read once per config, a shared segment
        whose matches per parameter are remembered) and then its delta's.
        """
        if owner is None or owner not in env.involved_classes:
            return []
        if not state_view.is_delta(owner):
            return [(None, state_values(snapshot_leaves(env, owner)))]
        key = (owner, json.dumps(self.initial_config.get(owner, {}), sort_keys=True, default=str))
        with _BASE_LOCK:
            base = _BASE_VALUES.get(key)
        if base is None:
            fresh = environment_from(self.initial_config, env.involved_classes, long_context=env.long_context)
            base = state_values(snapshot_leaves(fresh, owner))
            with _BASE_LOCK:
                _BASE_VALUES[key] = base
        return [(key, base), (None, state_values(snapshot_leaves(env, owner, state_view.view(env, owner))))]


def near(value: Any, scale: float) -> bool:
    """Whether a number is of the size of `scale` (within a factor of three, same sign)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    if scale == 0:
        return value == 0
    return value * scale > 0 and 1 / 3 <= value / scale <= 3


def like(scale: float, rng: random.Random, integer: bool = True) -> float:
    """A number of the size and roundness of `scale`: half to twice it, rounded as it is (150 -> 230, 50 -> 70,
    12.5 -> 9.8, 7 -> 11), never zero where it is not."""
    if scale == 0:
        return 0
    if integer and float(scale).is_integer():
        digits = str(abs(int(scale)))
        step = 10 ** min(len(digits) - len(digits.rstrip("0")), max(len(digits) - 2, 1))
        value = max(step, round(abs(scale) * rng.uniform(0.5, 2) / step) * step)
        return int(value if scale > 0 else -value)
    decimals = len(repr(float(scale)).partition(".")[2].rstrip("0")) or 1
    value = round(scale * rng.uniform(0.5, 2), decimals)
    return value if value != 0 else scale


#: Words a copy's name adds to its file's name ('report_backup.txt').
COPY_WORDS = ("backup", "copy", "final", "old", "v2", "archive", "draft")

#: (0, pieces of the value's own key, pieces of its last three path steps, value): one linkable state scalar.
StateValue = tuple[int, frozenset[str], frozenset[str], Any]
#: (the key of a shared loaded state in `_BASE_VALUES`, or None for a call's own values; the values).
Segment = tuple[Any, list[StateValue]]

#: (delta class, its initial config as JSON) -> the values of its loaded state (`ArgumentProposer._state_values`).
_BASE_VALUES: dict[tuple[str, str], list[StateValue]] = {}
_BASE_LOCK = threading.Lock()
#: (shared segment key, parameter name pieces, type) -> its `_matches`: a tau2 database holds
#: ~10^5 scalars, and scanning them for every proposed argument was most of synthesis's time there.
_MATCHES: dict[tuple[Any, frozenset[str], str], tuple[int | None, list[Any]]] = {}


def _matches(segment: Segment, parts: frozenset[str], want: frozenset[str], kind: str) -> tuple[int | None, list[Any]]:
    """(best rank, its values) of a segment's values whose path names the parameter, in order.

    Rank 0 when the value's own key names it, 1 when only its path does; None when nothing does.
    """
    key, values = segment
    memo = None if key is None else (key, parts, kind)
    if memo is not None and memo in _MATCHES:
        return _MATCHES[memo]
    ranked = [(0 if last & parts else 1, v) for _, last, context, v in values if context & want and fits_type(v, kind)]
    best = min((r for r, _ in ranked), default=None)
    out = (best, [v for r, v in ranked if r == best])
    if memo is not None:
        _MATCHES[memo] = out
    return out


def state_values(leaves: list[tuple[str, Any]]) -> list[StateValue]:
    """`ArgumentProposer._state_values` of (path, scalar) leaves."""
    out = []
    for path, value in leaves:
        if not linkable(value) or not isinstance(value, (str, int, float)):
            continue
        steps = [s for s in re.split(r"[/.]", path) if s][-3:]
        if not steps:
            continue
        last = KEY_TOKENS if steps[-1].endswith("#key") else tokens(steps[-1])
        context = frozenset().union(*(tokens(s.replace("#key", "")) for s in steps)) | last
        out.append((0, last, context, value))
    return out
