"""What a call achieves, in a person's words: the template backend's phrasing of requests.

A user asks for outcomes ("show me the end of 'log.txt'"), not for functions
("display the last part of a file with file name 'log.txt'"). A domain may
give, per function, an outcome phrase (`rods.envs.domain.Domain.outcome_phrases`:
a pattern with `{param}` slots and segments for optional arguments), and per
parameter a noun ("file") and a form ("ticket {raw}"); the synthesis stages
send them with each call (`phrase`, `nouns`, `forms`). A slot is said three ways:

* a value the user supplies: the value itself (a form wraps some: "ticket 42");
* a value the model must take from an earlier result: "that file" (its noun),
  so the query never gives it away; when that result listed several like it,
  which one ("the second of those files", `picks`), so the request has one meaning;
* the value a miss_param turn leaves out: "a file" (the user says which next).

A value the user said in an earlier turn is said again as it is ("'notes.txt'"),
as people repeat a name, not "the same 'notes.txt'".

A function without a phrase (a tool of a domain that has none, such as
tau2-bench's or an MCP server's) gets a request built from its own name,
description and arguments (`generic_outcome`): "get the user details for user
'ana_5901'", "place the order of 2 for item 'sku-7'", "tag that page with
'spring'". Neither ever recites a parameter name next to its value, so queries
pass `rods.synth.leak.leaks`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def say(value: Any) -> str:
    """A value as a user would type it: strings quoted, lists as "x, y and z"."""
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        items = [say(v) for v in value]
        return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else "none"
    if isinstance(value, dict):
        return ", ".join(f"its {k.replace('_', ' ')} set to {say(v)}" for k, v in value.items())
    return str(value)


def _supplied(param: str, value: Any, forms: Mapping[str, str]) -> str:
    form = forms.get(param, "{v}")
    if form.startswith("bool:"):
        yes, no = form[5:].split("|")
        return yes if value else no
    return form.format(v=say(value), raw=value, raw_lower=str(value).lower())


ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth")


def is_plural(noun: str) -> bool:
    """Whether a noun already says many ("numbers", "flight ids"; not "address", "status", "analysis")."""
    last = noun.rpartition(" ")[2].lower()
    return last in IRREGULAR_PLURALS or (len(last) > 3 and last.endswith("s") and not last.endswith(("ss", "us", "is")))


#: Plurals that do not end in "s", with their singulars where they have one in use.
_SINGULARS = {"people": "person", "children": "child", "men": "man", "women": "woman", "feet": "foot", "teeth": "tooth"}
IRREGULAR_PLURALS = frozenset({*_SINGULARS, "data", "media", "criteria"})


def singular(noun: str) -> str:
    """ "people" -> "person", "hashtags" -> "hashtag", "flight ids" -> "flight id": one of what a plural names."""
    head, _, last = noun.rpartition(" ")
    one = _SINGULARS.get(last.lower())
    if one is None:
        one = last[:-3] + "y" if last.endswith("ies") else last[:-1] if is_plural(last) else last
    return f"{head} {one}" if head else one


def that(noun: str) -> str:
    """ "that file", "those numbers": a value taken from an earlier result."""
    return f"those {noun}" if is_plural(noun) else f"that {noun}"


def plural(noun: str) -> str:
    """"book" -> "books", "flight number" -> "flight numbers", "city" -> "cities", "address" -> "addresses";
    a plural noun stays as it is."""
    if is_plural(noun):
        return noun
    head, _, last = noun.rpartition(" ")
    if re.search(r"(s|x|z|ch|sh)$", last):
        last += "es"
    elif re.search(r"[^aeiou]y$", last):
        last = last[:-1] + "ies"
    else:
        last += "s"
    return f"{head} {last}" if head else last


def referred(key: str, noun: str, picks: Mapping[str, Sequence[int]] | None = None) -> str:
    """A value taken from an earlier result: "that file", or, when that result listed several like it
    (`picks[key]` = (index, count[, item])), which one: "the second of those files", "the last of those files",
    "the first flight's origin" (a field of the item picked)."""
    pick = (picks or {}).get(key)
    if not pick:
        return that(noun)
    index, count = int(pick[0]), int(pick[1])
    item = str(pick[2]) if len(pick) > 2 else ""
    which = "last" if index == count - 1 and count > 2 else ORDINALS[index] if index < len(ORDINALS) else None
    if item and singular(item) not in noun and which:  # a field of the item: "the first flight's origin"
        return f"the {which} {item}'s {noun}"
    if which:
        return f"the {which} of those {plural(noun)}"
    return f"{noun} number {index + 1} of those"


def slot(param: str, value: Any, *, bound: set[str], missing: str | None,
         nouns: Mapping[str, str] | None = None, forms: Mapping[str, str] | None = None,
         picks: Mapping[str, Sequence[int]] | None = None, said: Mapping[str, str] | None = None) -> str:
    """One argument as said in a phrase's slot (see the module docstring); `said` overrides a slot's words."""
    noun = (nouns or {}).get(param, "one")
    if param == missing:
        return indefinite(noun)
    if said and param in said:
        return said[param]
    if param in bound:
        return referred(param, noun, picks)
    if isinstance(value, list):
        parts = [referred(f"{param}[{i}]", noun, picks) if f"{param}[{i}]" in bound
                 else _supplied(param, v, forms or {}) for i, v in enumerate(value)]
        if not parts:
            return "none"
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return _supplied(param, value, forms or {})


#: Words a tool's name starts with when it names an action ("cancel_order"); other names are things to
#: look up ("item_details" -> "look up the item details").
VERBS = frozenset("""get set list find search show view read open check look fetch create add make new insert put post
    write save store start stop begin end close finish delete remove drop clear cancel undo update
    edit change modify rename move copy replace reset send reply forward share publish tag label mark flag assign
    book reserve buy place pay charge refund return exchange transfer deposit withdraw restock ship deliver
    calculate compute count sum convert estimate compare sort filter rank apply submit approve reject confirm verify
    validate login logout sign register subscribe unsubscribe follow unfollow invite join leave enable disable turn
    lock unlock archive restore upload download export import schedule plan track notify think""".split())

#: Verbs a tool that only reads starts with ("book_details" reads a book: it books nothing).
READ_VERBS = frozenset("""get list find search show view read open check look fetch count sum calculate compute
    convert estimate compare sort filter rank verify validate track""".split())

#: Verbs of a write that hands something to a person ("lend the book to ...", "send the certificate to ...").
GIVING_VERBS = frozenset("lend send give transfer assign pay refund forward share invite deliver ship issue grant "
                         "email reply".split())

#: Verbs that look for several things, and how a person says them before the things ("search for flights").
SEARCH_VERBS = {"search": "search for", "find": "find", "list": "list the"}

#: Last words of a read's name that only say "everything about it" (`get_user_details` looks up a user).
DETAIL_WORDS = frozenset({"details", "detail", "info", "information", "data", "record", "profile", "summary"})

#: Words too general to tell a user which tool a request is for.
_PLAIN = frozenset("""the and for with from into that this what which when each every some their there about
    above after before given other only also been have will would should could does made make using used more
    most than then them they these those your yours whose where just like must based returns return whether
    list item items value values name names current""".split())


def _words(name: str) -> list[str]:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").replace("-", " ").lower().split()


def noun(param: str, nouns: Mapping[str, str] | None = None) -> str:
    """What an argument names, in a user's words: the domain's noun, else its name without a trailing "id"."""
    if nouns and param in nouns:
        return nouns[param]
    words = [w for w in _words(param) if w not in ("id", "ids")] or _words(param) or ["one"]
    return " ".join(words)


def _is_id(param: str) -> bool:
    words = _words(param)
    return len(words) >= 2 and words[-1] in ("id", "ids", "number", "code", "key")


#: Nouns of people: a person is said by name ("the author named 'Ines Moreau'"), not as a parameter's value.
PERSON_NOUNS = frozenset("""author member user customer owner person passenger contact recipient receiver sender
    guest client patient student employee artist writer""".split())
#: Nouns said with a preposition instead ("from 'ORD'", "to 'EWR'", "on '2024-05-19'").
PREPOSITIONS = {"origin": "from", "source": "from", "departure": "from", "sender": "from",
                "destination": "to", "target": "to", "arrival": "to", "date": "on", "day": "on"}
#: Nouns that are what the thing is called: the value alone ("add the member 'Hana Sato'").
NAMING_NOUNS = frozenset({"name", "full name", "title"})


def _said(param: str, value: Any, nouns: Mapping[str, str] | None = None) -> tuple[str, bool]:
    """A supplied value as a person says it, and whether it goes right after the request's head: "order 'o1001'"
    for ids, "from 'ORD'", "on '2024-05-19'" and a name alone (right after the head), "the author named 'Ines
    Moreau'"; a count before its plural noun ("2 checked bags"), another number after its noun ("an amount of
    150"); otherwise "'spring' as the tag" (never the
    parameter's name right before its value, which `rods.synth.leak` counts as reciting it)."""
    text = say(value)
    what = noun(param, nouns)
    if isinstance(value, bool):
        return f"{what} {'on' if value else 'off'}", False
    if _is_id(param) and not isinstance(value, list):
        return f"{what} {text}", False
    if _last(what) in PREPOSITIONS and not isinstance(value, (list, dict)):
        return f"{PREPOSITIONS[_last(what)]} {text}", True
    if what in NAMING_NOUNS and isinstance(value, str):
        return text, True
    if isinstance(value, (int, float)) and is_plural(what):  # "2 total baggages", not "2 as the total baggages"
        return f"{text} {what}", False
    if _last(what) in PERSON_NOUNS and isinstance(value, str):
        return f"the {what} named {text}", False
    if isinstance(value, (int, float)) and not isinstance(value, bool):  # "an amount of 150", not "150 as the amount"
        return f"{indefinite(what)} of {text}", False
    return f"{text} as the {what}", False


def _last(noun: str) -> str:
    """A noun's head word ("departure date" -> "date")."""
    return noun.split()[-1] if noun.split() else noun


def _joined(head: str, parts: list[str], direct: set[int]) -> str:
    """A request's head and its arguments: names and prepositional parts (`direct`: "'Hana Sato'", "from 'ORD'")
    right after the head, the rest as "for ..., with ... and ..."."""
    rest = [p for i, p in enumerate(parts) if i not in direct]
    text = " ".join([head, *(p for i, p in enumerate(parts) if i in direct)])
    if rest:
        text += " for " + rest[0]
    if len(rest) > 1:
        text += ", with " + " and ".join(rest[1:])
    return text


def indefinite(noun: str) -> str:
    """ "a folder", "an order", "some numbers": what a miss_param turn asks about without saying which."""
    if is_plural(noun):
        return "some " + noun
    if noun == "person":
        return "someone"
    if noun.startswith("other "):  # "compare 'a.txt' with another file"
        return "an" + noun
    return ("an " if noun[:1].lower() in "aeio" else "a ") + noun


def generic_outcome(function: str, arguments: dict[str, Any], *, description: str = "", params: Iterable[str] = (),
                    bound: Iterable[str] = (), missing: str | None = None,
                    param_docs: Mapping[str, str] | None = None,
                    nouns: Mapping[str, str] | None = None, effect: str = "unknown",
                    picks: Mapping[str, Sequence[int]] | None = None, said: Mapping[str, str] | None = None) -> str:
    """A person's request for any tool, from its name, description and arguments (never its parameter names
    next to their values, nor its description's wording: `rods.synth.leak`).

    The docs' first clause gives the action when it is one (`documented_action`: "book an appointment for patient
    'P-1' with doctor 'D-2'"); otherwise the name gives the verb and object ("get_user_details" -> "get the user
    details"); a tool that writes
    is an action even when its verb is not a common one ("lend_book" -> "lend the book"), one that reads a
    thing to look up ("item_details" -> "look up the item details"); a one-word verb takes its first value
    ("calculate '2 * 3'"). When neither the name nor a supplied value shares a content word with
    the description, one of its words is added ("..., about the money"), so the request still says what it
    is for (the judge's intent check).
    """
    words = _words(function) or [function.lower()]
    verb = (words[0] in (READ_VERBS if effect == "read" else VERBS)
            or (effect == "write" and words[0] not in READ_VERBS)
            or (len(words) >= 2 and words[0] in VERBS and words[1] in ("to", "from", "into", "for", "with")))
    bound_set = set(bound)
    first = next((p for p in [*params, *arguments] if p in arguments), None)
    about = None  # get_user_details(user_id=...), book_details(book_id=...): "look up user 'x'", "look up that book"
    documented = documented_action(description, arguments, nouns=nouns, param_docs=param_docs, bound=bound_set,
                                   missing=missing, picks=picks, said=said)
    if len(words) >= 2 and words[-1] in DETAIL_WORDS and effect != "write":
        about = " ".join(words[1:-1] if words[0] in READ_VERBS else words[:-1])
    if documented is not None:  # the docs' own action, its things said as the values: "book an appointment for
        head, used = documented  # patient 'P-1' with doctor 'D-2'"
        arguments = {k: v for k, v in arguments.items() if k not in used}
    elif first is not None and first != missing and about and noun(first, nouns) == about:
        said_first = (referred(first, noun(first, nouns), picks) if first in bound_set
                      else _said(first, arguments[first], nouns)[0])
        head = f"look up {said_first}"
        arguments = {k: v for k, v in arguments.items() if k != first}
    elif len(words) >= 2 and verb and first is not None and first != missing and \
            noun(first, nouns) == " ".join(words[1:]):  # lend_book(book_id=...): "lend that book", "lend book 'b1'"
        said_first = (referred(first, noun(first, nouns), picks) if first in bound_set
                      else _said(first, arguments[first], nouns)[0])
        head = f"{words[0]} {said_first}"
        arguments = {k: v for k, v in arguments.items() if k != first}
    elif len(words) >= 2 and words[0] in SEARCH_VERBS and words[1] not in SEARCH_VERBS[words[0]].split() \
            and not words[-1].endswith("s"):  # search_direct_flight: "search for direct flights", not "the ... flight"
        head = f"{SEARCH_VERBS[words[0]]} {plural(' '.join(words[1:]))}"
    elif len(words) >= 2 and verb:
        article = "" if words[1] in ("to", "from", "by", "for", "with", "of", "on", "in", "into", "a", "the", "all",
                                     "my") else "the "
        head = f"{words[0]} {article}{' '.join(words[1:])}"
    elif len(words) == 1 and words[0] in VERBS | READ_VERBS:  # calculate(expression=...): "calculate '2 * 3'"
        head = words[0]
        if first is not None and first != missing and first not in bound_set and _required_like(arguments[first]):
            head = f"{words[0]} {say(arguments[first])}"
            arguments = {k: v for k, v in arguments.items() if k != first}
    else:
        head = f"look up the {' '.join(words)}"
    order = [p for p in params if p in arguments] + [p for p in arguments if p not in params]
    giving = effect != "read" and words[0] in GIVING_VERBS  # a person it goes to: "to 'Hana Sato'"
    parts: list[str] = []
    direct: set[int] = set()  # parts said right after the head: a name, "from 'ORD'"
    for param in order:
        value = arguments[param]
        if value in (None, "") or (param not in bound_set and param != missing and not _required_like(value)):
            continue
        if param == missing:
            parts.append(indefinite(noun(param, nouns)))
        elif param in bound_set:
            what = noun(param, nouns)
            prep = "to" if giving and _last(what) in PERSON_NOUNS else PREPOSITIONS.get(_last(what))
            if prep:
                direct.add(len(parts))
            told = (said or {}).get(param) or referred(param, what, picks)
            parts.append(f"{prep} {told}" if prep else told)
        elif isinstance(value, list) and any(f"{param}[{i}]" in bound_set for i in range(len(value))):
            items = [referred(f"{param}[{i}]", noun(param, nouns), picks) if f"{param}[{i}]" in bound_set else say(v)
                     for i, v in enumerate(value)]
            parts.append(", ".join(items))
        elif giving and _last(noun(param, nouns)) in PERSON_NOUNS and isinstance(value, str):
            direct.add(len(parts))  # "lend that book to 'Hana Sato'", "send the certificate to user 'ana_1'"
            named = " " in value.strip()  # an id said by the name it was made for ("to 'Ines Yilmaz'")
            parts.append(f"to {noun(param, nouns)} {say(value)}" if _is_id(param) and not named else f"to {say(value)}")
        else:
            spoken, right_after = _said(param, value, nouns)
            if right_after:
                direct.add(len(parts))
            parts.append(spoken)
    text = _joined(head, parts, direct)
    mine = {w for w in re.findall(r"[a-z]{4,}", text.lower()) if w not in _PLAIN}
    described = [w for w in re.findall(r"[a-z]{4,}", description.lower()) if w not in _PLAIN]
    supplied = [p for p in order if p not in bound_set and p != missing and arguments[p] not in (None, "")]
    if described and not supplied and not {w.rstrip("s")[:5] for w in mine} & {w.rstrip("s")[:5] for w in described}:
        text += f", about the {described[0]}"
    return text


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


#: Where a docstring's first clause ends: what follows qualifies it ("..., optionally by ...", "... and charge ...").
_CLAUSE_END = re.compile(r"[,;:(]| - | and | by | so | which | that | if | unless | including ")
#: A thing the docs' action names ("a patient", "a booked appointment", "today's appointment", "a given day"):
#: a determiner and up to three words, none of them a small word.
_THING = re.compile(r"\b(?:a|an|the|one|another|its|their|\w+'s)((?:\s+(?!(?:to|for|with|on|in|of|from|at|by|into|"
                    r"and|or|is|are|be|as|that|this)\b)[a-z]+){1,3})")
#: Description words recited this many in a row count as a leak (`rods.synth.leak.WINDOW`).
_RECITED = 6


def documented_action(description: str, arguments: dict[str, Any], *, nouns: Mapping[str, str] | None = None,
                      param_docs: Mapping[str, str] | None = None, bound: set[str] = frozenset(),
                      missing: str | None = None, picks: Mapping[str, Sequence[int]] | None = None,
                      said: Mapping[str, str] | None = None) -> tuple[str, set[str]] | None:
    """The docs' own action, when their first clause is one, with each thing it names that an argument gives said
    as that value: "Book an appointment for a patient with a doctor." -> ("book an appointment for patient 'P-1'
    with doctor 'D-2'", {"patient_id", "doctor_id"}); "Show when a doctor is free on a given day." -> "show when
    doctor 'D-5' is free on '2026-01-12'". None when the clause offers a choice ("... phone number or insurance
    plan": the call makes one), does not start with a verb, or would still recite the docs."""
    first = re.split(r"(?<=[.!?])\s|\n", description.strip(), maxsplit=1)[0].rstrip(".!? ") if description else ""
    clause = _CLAUSE_END.split(first, maxsplit=1)[0].strip()
    words = clause.split()
    choice = re.search(r"\b(?:or|optionally|either)\b", clause.lower())
    if len(words) < 2 or words[0].lower() == "returns" or choice or \
            imperative(words[0]) not in VERBS | READ_VERBS | GIVING_VERBS:
        return None
    text = " ".join([imperative(words[0]), *words[1:]])
    text = text[0].lower() + text[1:]
    used: set[str] = set()

    def named(match: re.Match) -> str:
        words = match.group(1).split()
        for k in range(len(words), 0, -1):  # the longest thing first: "a booked appointment"
            param = _naming(singular(words[k - 1]), arguments, used, nouns, param_docs, missing)
            if param is None:
                continue
            used.add(param)
            value, what = arguments[param], noun(param, nouns)
            if said and param in said:
                told = said[param]
            elif param in bound:
                told = referred(param, what, picks)
            else:
                told = f"{what} {say(value)}" if _is_id(param) and not isinstance(value, list) else say(value)
            return " ".join([told, *words[k:]])
        return match.group(0)

    text = _THING.sub(named, text)
    if not used or _recites(text, description):
        return None
    return text, used


def _naming(thing: str, arguments: dict[str, Any], used: set[str], nouns: Mapping[str, str] | None,
            param_docs: Mapping[str, str] | None, missing: str | None) -> str | None:
    """The argument a thing the docs name stands for: its noun's head word, or one of its description's first
    words ("a given day" is the date described as "Day, YYYY-MM-DD")."""
    for param, value in arguments.items():
        if param in used or param == missing or value in (None, "") or isinstance(value, (bool, dict)):
            continue
        described = re.findall(r"[a-z]+", (param_docs or {}).get(param, "").lower())[:4]
        if thing in (singular(_last(noun(param, nouns))), *map(singular, described)):
            return param
    return None


def _recites(text: str, description: str) -> bool:
    """Whether `text` repeats `_RECITED` words of `description` in a row."""
    mine = " " + " ".join(re.findall(r"[a-z0-9]+", text.lower())) + " "
    theirs = re.findall(r"[a-z0-9]+", description.lower())
    return any(f" {' '.join(theirs[i:i + _RECITED])} " in mine for i in range(len(theirs) - _RECITED + 1))


def _required_like(value: Any) -> bool:
    """Whether an argument is worth saying (a value, not an empty container)."""
    return not (isinstance(value, (list, dict)) and not value)


def outcome(function: str, arguments: dict[str, Any], *, params: Iterable[str] = (), bound: Iterable[str] = (),
            missing: str | None = None, description: str = "",
            phrase: Sequence[Any] | None = None, nouns: Mapping[str, str] | None = None,
            forms: Mapping[str, str] | None = None, effect: str = "unknown",
            picks: Mapping[str, Sequence[int]] | None = None, said: Mapping[str, str] | None = None,
            param_docs: Mapping[str, str] | None = None) -> str:
    """One call as the outcome a person asks for.

    Args:
        function: the function called.
        arguments: its keyword arguments (positional ones already named by `params` order).
        params: the function's parameters in doc order (for arguments the phrase has no slot for).
        bound: arguments (or `name[i]` list items) the model must take from earlier results.
        missing: the argument a miss_param turn leaves out.
        description: the function's description (for a function without a phrase).
        phrase: the domain's outcome phrase for the function, `(pattern, {optional parameter: segment})`,
            or None (a request from the function's name and description, `generic_outcome`).
        nouns, forms: the domain's nouns and forms of the function's parameters.
        effect: whether the tool reads or writes ("read", "write", "unknown"), for a request without a phrase.
        picks: bound arguments chosen from among several like items of their result: (index, count).
        said: the words for some arguments, whatever else they are (a retold text: "'Update:' followed by
            that text").
        param_docs: the parameters' descriptions (a thing the docs' action names: "on a given day" is the date).
    """
    if phrase is None:
        return generic_outcome(function, arguments, description=description, params=params, bound=bound,
                               missing=missing, nouns=nouns, effect=effect, picks=picks, said=said,
                               param_docs=param_docs)
    main, optional = phrase
    bound_set = set(bound)
    used = set(re.findall(r"\{(\w+)\}", main))

    def said_in_main(param: str) -> str:
        """A code said in the main phrase, by its segment's words ("how many words"; "" when not passed)."""
        segment, value = optional[param], arguments.get(param)
        if not isinstance(segment, dict):
            return slot(param, value, bound=bound_set, missing=missing, nouns=nouns, forms=forms, picks=picks,
                        said=said)
        if param in bound_set or param == missing:  # not a value to say: the words for the usual one
            return segment.get("") or slot(param, value, bound=bound_set, missing=missing, nouns=nouns)
        if value in (None, ""):
            return segment.get("", "")
        return segment.get(value) or segment.get(str(value)) or say(value)

    def fill(template: str) -> str:
        if missing is not None:  # "create a folder" (its name follows), not "a folder called a folder"
            template = re.sub(rf"\s+(?:called|named)\s+\{{{missing}\}}", "", template)
        for param in bound_set:  # "remove that empty folder", "remove the first of those folders"
            template = re.sub(rf"\b(?:a|an|the) ((?:\w+ )*?\w+)\s+(?:called|named)\s+\{{{param}\}}",
                              f"{{{param}}}" if param in (picks or {}) else r"that \1", template)
        return re.sub(r"\{(\w+)\}", lambda m: said_in_main(m.group(1)) if m.group(1) in optional else slot(
            m.group(1), arguments.get(m.group(1)), bound=bound_set, missing=missing, nouns=nouns, forms=forms,
            picks=picks, said=said), template)

    text = fill(main)
    for param, segment in optional.items():
        if param in used:  # said in the main phrase
            continue
        used.add(param)
        if param not in arguments or arguments[param] in (None, ""):
            continue
        value = arguments[param]
        if param in bound_set or param == missing:  # never the value itself: "that file", "a file"
            piece = fill(segment) if isinstance(segment, str) else "with " + slot(
                param, value, bound=bound_set, missing=missing, nouns=nouns, forms=forms, picks=picks, said=said)
        elif isinstance(segment, (tuple, list)):  # a boolean: (said when true, said when false)
            piece = segment[0] if value else segment[1]
        elif isinstance(segment, dict):  # a code the user says in words ("w" -> "in words"), "*" any other value
            piece = segment.get(value) or segment.get(str(value)) or (
                fill(segment["*"]) if "*" in segment else say(value))
        else:
            if isinstance(value, list) and len(value) == 1:  # "with the hashtag '#x'", not "the hashtags '#x'"
                segment = re.sub(rf"\b(\w+[^s])s (?=\{{{param}\}})", r"\1 ", segment)
            piece = fill(segment)
        if piece:
            text += " " + piece
    extra = [k for k in arguments if k not in used and arguments[k] not in (None, "")]
    if extra:  # arguments the phrase has no slot for (unknown functions): their values, never their names
        text += " using " + " and ".join(slot(k, arguments[k], bound=bound_set, missing=missing,
                                              nouns=nouns, forms=forms, picks=picks, said=said) for k in extra)
    return text


def named_arguments(arguments: dict[str, Any], args: Iterable[Any], params: list[str]) -> tuple[dict[str, Any], dict]:
    """Positional arguments named by the doc's parameter order; `#i` bindings renamed to match."""
    named = dict(arguments)
    rename = {}
    for i, value in enumerate(args):
        name = params[i] if i < len(params) else f"arg{i}"
        named.setdefault(name, value)
        rename[f"#{i}"] = name
    return named, rename

