"""People's and companies' names: what a variant names them with, and how a name is recognised.

A synthesized state names people as people (docs/design.md §4.2): first and
family names of one country, from Faker's person providers (16 Latin-script
locales), never the nouns a variant draws for things; a company is a family
name and a company's ending (`Ltd`, `GmbH`). A value is recognised as a
person's name by its shape and by a first name those providers (or the seeds)
know.
"""

from __future__ import annotations

import importlib
import re
import unicodedata
from collections.abc import Iterable
from functools import cache, lru_cache
from typing import Any, NamedTuple

import faker.providers.company as companies
import faker.providers.person as persons

from rods.envs.vocabulary import NAMES, NOUNS

#: Faker locales whose people synthesis names (Latin script).
PEOPLE_LOCALES = ("en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT", "pt_BR", "nl_NL", "sv_SE", "pl_PL",
                  "tr_TR", "en_IN", "da_DK", "fi_FI", "cs_CZ", "en_NG", "ja_JP", "zh_CN")


def _name_lists(provider: type) -> tuple[str, str]:
    """The attributes of a person provider that hold its first and family names in Latin letters: the romanized ones
    where it has them (Japanese, Chinese: a Hiroshi kept his first name and took a Nigerian family name, as no
    Latin list held one of his country's); a family name the same for a man and a woman where the country's differ
    (Polish: a Kowalski's wife is a Kowalska, and its `unisex_last_names` are names of both)."""
    if getattr(provider, "first_romanized_names", None):
        return "first_romanized_names", "last_romanized_names"
    if getattr(provider, "unisex_last_names", None):
        return "first_names", "unisex_last_names"
    return "first_names", "last_names"


#: The fewest names of each kind a locale must have to name people: a locale whose family names sit elsewhere than
#: `_name_lists` reads has the base provider's one placeholder, 'Doe' (every Polish guest of the box-office read was
#: a Doe), and names nobody.
MIN_NAMES = 20


@cache
def people_pools() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Locale -> (first names, family names) of Faker's person providers, ASCII letters only (synthesis reads
    names as `[A-Z][a-z]+` words), sorted: a guest list of many countries, each name with its own country's."""
    out = {}
    for locale in PEOPLE_LOCALES:
        provider = importlib.import_module(f"{persons.__name__}.{locale}").Provider
        firsts, lasts = (tuple(sorted({n for attr in (kind, f"{kind}_male", f"{kind}_female")
                                       for n in getattr(provider, attr, ()) if re.fullmatch(r"[A-Z][a-z]{2,11}", n)}))
                         for kind in _name_lists(provider))
        if len(firsts) >= MIN_NAMES and len(lasts) >= MIN_NAMES:  # not a base provider's placeholder ('Doe')
            out[locale] = (firsts, lasts)
    return out


@cache
def gendered_firsts() -> dict[str, dict[str, tuple[str, ...]]]:
    """Locale -> "female"/"male" -> its first names in Faker (as `people_pools` reads them), for a name that must
    keep the seed's "she" or "he" true (`gender_of`)."""
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for locale in people_pools():
        provider = importlib.import_module(f"{persons.__name__}.{locale}").Provider
        out[locale] = {gender: tuple(sorted(n for n in getattr(provider, f"{_name_lists(provider)[0]}_{gender}", ())
                                            if re.fullmatch(r"[A-Z][a-z]{2,11}", n)))
                       for gender in ("female", "male")}
    return out


@cache
def gender_of(first: str) -> str | None:
    """"female" or "male" when Faker's first names of every country that has `first` give it one gender only;
    None for a name of both or of none."""
    first = plain(first)  # 'Lucía' is the name lists' 'Lucia'
    found = {gender for pools in gendered_firsts().values() for gender, names in pools.items() if first in names}
    return found.pop() if len(found) == 1 else None


def locale_of_first(first: str) -> str | None:
    """The first country (of `people_pools`, in order) whose first names hold `first`, accents aside; None if none."""
    first = plain(first)
    return next((locale for locale, (firsts, _) in people_pools().items() if first in firsts), None)


def locale_of_family(family: str) -> str | None:
    """The first country (of `people_pools`, in order) whose family names hold `family`, accents aside; None if
    none."""
    family = plain(family)
    return next((locale for locale, (_, lasts) in people_pools().items() if family in lasts), None)


@cache
def company_suffixes() -> tuple[str, ...]:
    """The endings of companies' names in Faker's company providers (`Ltd`, `GmbH`, `Inc`, ...), sorted."""
    out: set[str] = set()
    for locale in PEOPLE_LOCALES:
        try:
            provider = importlib.import_module(f"{companies.__name__}.{locale}").Provider
        except ModuleNotFoundError:
            continue
        out |= {s for s in getattr(provider, "company_suffixes", ()) if re.fullmatch(r"[A-Za-z][A-Za-z. &]{1,12}", s)}
    return tuple(sorted(out))


@cache
def first_names() -> frozenset[str]:
    """First names a name generator knows (Faker's, `people_pools`) and our own (`vocabulary.NAMES`)."""
    return frozenset(NAMES) | frozenset(n for firsts, _ in people_pools().values() for n in firsts)


@cache
def _thing_words() -> frozenset[str]:
    """The words a variant draws for things (`vocabulary.NOUNS`), less any that is also a first name."""
    return frozenset(n.lower() for n in NOUNS) - {n.lower() for n in first_names()}


def has_thing_word(text: str) -> bool:
    """Whether a name holds a word a variant draws for things ('Newsletters Quotes', 'Harbour Invoices')."""
    return any(w.lower() in _thing_words() for w in text.split())


def name_shaped(value: Any) -> bool:
    """One to four capitalised words of letters (`O'Connell`, `Fernández`, `Jean-Luc`; a particle such as `van`
    may stay lower case): the shape of a person's name, of a place's, of a title's."""
    if not isinstance(value, str):
        return False
    words = value.strip().split()
    return 1 <= len(words) <= 4 and words[0][:1].isupper() and all(
        (w[:1].isupper() or (len(w) <= 3 and w.isalpha())) and all(c.isalpha() or c in "'-." for c in w)
        for w in words)


def company_shaped(value: Any) -> bool:
    """A company's name: up to six words, the first capitalised, of letters, digits and `& . , ' - ( )`."""
    return isinstance(value, str) and 1 <= len(value.split()) <= 6 and value[:1].isupper() \
        and all(c.isalnum() or c in " &.,'-()" for c in value)


#: Titles a person's name may open with ("Dr. Ana Reyes"): kept as they are, the name after them is the name.
TITLES = frozenset({"Dr.", "Dr", "Mr.", "Mr", "Mrs.", "Mrs", "Ms.", "Ms", "Mx.", "Prof.", "Prof", "Sir", "Dame"})


def titled(value: str) -> tuple[str, str]:
    """A name's title and the name after it: ("Dr.", "Ana Reyes"), or ("", value) when it has none."""
    head, _, rest = value.strip().partition(" ")
    return (head, rest.strip()) if head in TITLES and rest.strip() else ("", value)


def is_person_name(value: Any, known: Iterable[str] = frozenset(), whole: bool = True) -> bool:
    """A person's name: a `known` one, or capitalised words (two or more when `whole`) whose first is a first name
    we know (`first_names`, or the first word of a `known` name) and none of which is a word for a thing; a title
    before it ("Dr. Ana Reyes") is no part of the name."""
    known = known if isinstance(known, frozenset) else frozenset(known)
    if isinstance(value, str) and value in known:
        return True
    if isinstance(value, str) and titled(value)[0]:
        return is_person_name(titled(value)[1], known, whole)
    if not name_shaped(value):
        return False
    words = value.strip().split()
    if (whole and len(words) < 2) or has_thing_word(value):
        return False
    return words[0] in first_names() or plain(words[0]) in _plain_first_names() or words[0] in _first_words(known)


def plain(text: str) -> str:
    """A text without its accents, as people often type a name ('Lucía Fernández' -> 'Lucia Fernandez')."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def folded(text: str) -> str:
    """A text as people type it at the quickest: without accents, in lower case ('Lucía' -> 'lucia')."""
    return plain(text).casefold()


@cache
def _plain_first_names() -> frozenset[str]:
    """`first_names` without their accents: 'Lucía' is a first name whether or not a generator spells it so."""
    return frozenset(plain(n) for n in first_names())


@lru_cache(maxsize=64)
def _first_words(known: frozenset[str]) -> frozenset[str]:
    """The first words of known names (an environment's people, asked about for every value of theirs)."""
    return frozenset(k.split()[0] for k in known if isinstance(k, str) and k.strip())


class Renamed(NamedTuple):
    """One renamed person's words, as `follow_renames` looks for them."""

    pairs: dict[str, str]  # lower case, old -> new: 'marcus' -> 'robert', 'webb' -> 'boucher', run together too
    initial0: str  # the first name's initial, old and new
    initial1: str
    first0: str  # the first name, old and new, lower case
    first1: str
    others: frozenset[str]  # the old name's other words, letters only ('oconnell')


def name_words(people: dict[str, str]) -> list[Renamed]:
    """Per renamed person (`people`: whole name -> whole name, as a remapper renamed them), its words' mapping,
    its first name and initials (old, new) and its other words."""
    out = []
    for old, new in people.items():
        words0, words1 = titled(old)[1].split(), titled(new)[1].split()
        if len(words0) != len(words1) or not words0:
            continue
        pairs = {w0.lower(): w1.lower() for w0, w1 in zip(words0, words1)
                 if w0.lower() != w1.lower() and len(w0) >= 2 and w0[:1].isupper()}
        if pairs:
            # as an address writes them: a double-barrelled name run together ('whitfieldprice' of Whitfield-Price),
            # the whole name run together ('liwei' of Li Wei, whose first name stays)
            squash = {_letters(w0): _letters(w1) for w0, w1 in pairs.items() if _letters(w0) != w0}
            if len(words0) > 1:
                squash["".join(map(_letters, words0))] = "".join(map(_letters, words1))
            pairs |= {w0: w1 for w0, w1 in squash.items() if w0 not in pairs and w0 != w1}
            out.append(Renamed(pairs, words0[0][:1].lower(), words1[0][:1].lower(), words0[0].lower(),
                               words1[0].lower(), frozenset(map(_letters, words0[1:]))))
    return out


def _letters(word: str) -> str:
    """A name's letters only, lower case: 'Whitfield-Price' -> 'whitfieldprice', "O'Connell" -> 'oconnell'."""
    return re.sub(r"[^a-z]", "", plain(word).lower())


def follow_renames(text: str, people: dict[str, str]) -> str:
    """`text` with the names of renamed people in it renamed too: a company named after its owner ('Webb & Sons
    Roofing'), an email or a username made of the name ('marcus@webbroofing.com', 'tlindqvist@fastmail.com',
    'mwebb'). In prose a name word counts only capitalised as written ('Rose', 'MacLeod' are names, 'rose' a
    verb); inside an address or a handle in any case, also as the start or end of a longer run of letters, when
    the rest is an initial of the same person or the address has a dot ('webbroofing.com')."""
    renamed = name_words(people)
    if not renamed:
        return text

    def title(word: str) -> str:
        return word[:1].upper() + word[1:]

    def in_prose(match: re.Match) -> str:
        word = match.group(0)
        for pairs, *_ in renamed:
            if word.lower() in pairs and word[1:] != word[1:].upper():  # 'Rose', 'MacLeod'; not 'ROSE', 'rose'
                return title(pairs[word.lower()])
        return word

    def in_handle(token: str) -> str:
        dotted = "@" in token or "." in token
        runs = {r.lower() for r in re.findall(r"[A-Za-z]+", token)}
        present = [(r.initial0, r.initial1) for r in renamed if runs & r.pairs.keys()]  # whose name the token holds
        # a short form of a first name in an address that holds the person's family name ('bernie.oconnell' of
        # Bernadette O'Connell): the new first name
        short = {r.first0[:4]: r.first1 for r in renamed
                 if len(r.first0) >= 5 and r.first0 != r.first1 and runs & r.others}

        def segment(match: re.Match) -> str:
            run = match.group(0)
            low = run.lower()
            if len(low) == 1 and dotted:  # the initial of a person the address names: 'd.alvarez' -> 'a.kiviniemi'
                initial = next((i1 for i0, i1 in present if i0 == low), None)
                if initial is not None:
                    return _cased(initial, run)
            whole = next((r.pairs[low] for r in renamed if low in r.pairs), None)
            if whole is not None:  # a name word or a whole name, before anyone's name as a part of it
                return _cased(whole, run)
            if dotted and low[:4] in short and len(low) >= 4:
                return _cased(short[low[:4]], run)
            for pairs, initial0, initial1, *_ in renamed:
                for old, new in sorted(pairs.items(), key=lambda p: -len(p[0])):
                    if len(old) < 4 or len(low) <= len(old):
                        continue
                    if low.startswith(old):
                        rest = low[len(old):]
                        rest_new = pairs.get(rest, initial1 if rest == initial0 else None)
                        if rest_new is not None or dotted:
                            return _cased(new + (rest_new if rest_new is not None else rest), run)
                    if low.endswith(old):
                        rest = low[:-len(old)]
                        rest_new = pairs.get(rest, initial1 if rest == initial0 else None)
                        if rest_new is not None or dotted:
                            return _cased((rest_new if rest_new is not None else rest) + new, run)
            return run

        return re.sub(r"[A-Za-z]+", segment, token)

    alone = re.fullmatch(r"[a-z]+\d*", text.strip()) is not None  # a username as the whole value: 'mwebb'

    def token(match: re.Match) -> str:
        word = match.group(0)
        if alone or "@" in word or re.fullmatch(r"[a-z0-9]+(?:[._-][a-z0-9]+)+|[A-Z0-9]+(?:[_-][A-Z0-9]+)+", word):
            # an address, a handle, or a reference in capitals made of the name ('ASANTE-MAY' of Kwame Asante)
            return in_handle(word)
        return re.sub(r"[A-Z][A-Za-z]*[a-z]", in_prose, word)  # a name word, 'MacLeod' whole

    return re.sub(r"\S+", token, text)


def _cased(new: str, like: str) -> str:
    """`new` in the case `like` is written in (lower, UPPER or Title)."""
    if like.isupper() and len(like) > 1:
        return new.upper()
    return new[:1].upper() + new[1:] if like[:1].isupper() else new


_PRONOUNS = {"he": "male", "him": "male", "his": "male", "himself": "male",
             "she": "female", "her": "female", "hers": "female", "herself": "female"}


#: Words for a relation that say a person's gender when they stand right before the name ("his sister Efua").
_RELATIONS = {**dict.fromkeys(("sister", "mother", "mom", "mum", "wife", "daughter", "aunt", "niece", "girlfriend",
                               "grandmother", "grandma", "granddaughter", "stepmother", "fiancee"), "female"),
              **dict.fromkeys(("brother", "father", "dad", "husband", "son", "uncle", "nephew", "boyfriend",
                               "grandfather", "grandpa", "grandson", "stepfather", "fiance"), "male")}


def said_gender(name: str, text: str) -> str | None:
    """"female" or "male" as the messages speak of a person: a relation said right before a mention of the name
    (whole, or its first word: "Kwame's sister Efua", "my father, Hiroshi Tanaka"), or the first he/she/him/her
    after it in the same sentence, before any other capitalised word that could be someone else ("Keiko Morimoto
    emailed that she can take the game"); None when no mention says or the mentions disagree. For a first name no
    name list genders (Keiko, Kwame, Efua), so a recast names them as the seed's words speak."""
    first = titled(name)[1].split()[0] if titled(name)[1].split() else ""
    if not first:
        return None
    found, related = set(), set()
    for match in re.finditer(rf"(?<!\w)(?:{re.escape(name)}|{re.escape(first)})(?:'s)?(?!\w)", text):
        relation = re.search(r"([A-Za-z]+),?\s+$", text[:match.start()])
        if relation and relation.group(1).lower() in _RELATIONS:  # says more than a pronoun, which may be another's
            related.add(_RELATIONS[relation.group(1).lower()])
        rest = re.split(r"[.!?;:]", text[match.end():], maxsplit=1)[0]
        for word in re.findall(r"[A-Za-z]+", rest):
            if word.lower() in _PRONOUNS:
                found.add(_PRONOUNS[word.lower()])
                break
            if word[:1].isupper() and word not in name.split():
                break
    if related:
        return related.pop() if len(related) == 1 else None
    return found.pop() if len(found) == 1 else None


def said_genders(names: Iterable[Any], text: str, known: frozenset[str] = frozenset()) -> dict[str, str]:
    """First name -> "female"/"male" for each person among `names` whose gender the messages tell (`said_gender`)."""
    out = {}
    for name in names:
        if isinstance(name, str) and is_person_name(name, known):
            gender = said_gender(titled(name)[1], text)
            if gender is not None:
                out[titled(name)[1].split()[0]] = gender
    return out
