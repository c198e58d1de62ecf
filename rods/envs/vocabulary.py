"""The words an environment's code knows by name: what synthesis keeps when it re-draws a seed's values.

Each domain collects its own (`Domain.vocabulary`); these are the pieces they
share: the words of a text, the enum values of function docs, and the short
string constants of source code.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from typing import Any

#: Fresh words for new values (names of things a variant creates or renames): the things people keep files,
#: folders and posts about ("budgets.txt", "invoices", "#roadmap"); the nature words used before ("yarrow.log",
#: "elm_cider") read to the twelfth blind reader as random names ...
NOUNS = """agenda almanac analytics appendix applications assignments audit backlog ballots benchmarks billing
blueprint bookings brochure budgets bulletin calendar campaign captions casework catalog
certificates chapters charts checklist chores citations classes clients coursework curriculum
dashboards datasets deadlines deliverables deposits designs diagrams diaries drafts drawings
estimates events exams expenses experiments exports fieldwork figures finances flyers footage
forecasts forms fundraiser gallery glossary grants guidelines handouts headshots homework inbox
interviews inventory invoices itinerary journals lectures ledger lessons letters lineup manuals
manuscripts maps marketing meetings memos milestones minutes mockups newsletters notebook onboarding
orders outlines paperwork partners payroll permits pitches playlists podcast policies portfolio
postcards posters presentations pricing projections proofs proposals prototypes publications
quarterly quizzes quotes readings receipts recipes recordings referrals renovation rentals research
reviews roadmap rosters routines salaries samples scans schedules screenshots scripts semester
sketches slides snapshots specs speeches spreadsheets sprints statements stationery storyboard
strategy submissions suppliers surveys syllabus taxes teaching testimonials textbooks theses
timelines timesheets tournament training transcripts travel tutorials vendors videos volunteers
warranty webinar website weddings wireframes worksheets workshop yearbook""".split()

#: ... and people's first names.
NAMES = """Amara Bruno Celia Dante Elio Farah Gideon Hana Ivo Jonas Kira Lorenzo Mira Nico Orla
Priya Quentin Rosa Silas Tamsin Ugo Vera Wendell Xenia Yusuf Zara Anouk Bastian Cosima Dorian
Esme Felix Greta Hugo Ines Jasper Leona Matteo Noor Otto Paloma Rafael Saskia Tobias Una Viggo
Wilma Yara Zoltan Aurelio Beatrix Cyrus Delphine Emeric Fiora Gustav Helka Ilario Juno Kasimir
Lavinia Marek Nadia Oskar Perpetua Ronan Sabine Thaddeus Ulla Valter Wren Yannick Zelda""".split()

#: ... family names, for the people a variant names ...
SURNAMES = """Abara Bellini Castell Dufresne Eklund Farouk Gallo Hartley Ibsen Jaramillo Kovac Lindqvist
Moreno Nakamura Okafor Petrov Quintana Rahman Sorensen Takeda Ueda Varga Whitlock Xu Yilmaz Zeller
Andrade Brandt Chowdhury Delgado Esposito Fischer Guerrero Halvorsen Iqbal Janssen Kimura Laurent
Mensah Novak Olsen Pereira Ramos Schultz Tanaka Urban Vasquez Weber Young Zimmer""".split()

#: ... and places (cities), for addresses and destinations.
PLACES = """Aberdeen Bergen Cordoba Dunedin Eindhoven Florence Galway Hamilton Innsbruck Jaipur Kyoto Leipzig
Malmo Nantes Oaxaca Porto Quito Rosario Salzburg Tartu Utrecht Valencia Wroclaw Yokohama Zagreb Adelaide
Brisbane Calgary Dresden Edmonton Geneva Halifax Izmir Kingston Lyon Marseille Nagoya Oslo Perth
Regina Seville Tampere Uppsala Vienna Windsor""".split()

#: A word or a run of digits.
WORD = re.compile(r"[A-Za-z]+|\d+")


def words(text: str, split_camel: bool = False) -> set[str]:
    """The lower-case words of a text (`split_camel`: "fuelLevel" -> fuel, level)."""
    if split_camel:
        text = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text)
    return {w.lower() for w in WORD.findall(text)}


def enum_words(node: Any, out: set[str]) -> None:
    """Add the words of every `enum` value in a (JSON-schema-like) document to `out`."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "enum" and isinstance(value, list):
                out.update(w for v in value if isinstance(v, str) for w in words(v))
            else:
                enum_words(value, out)
    elif isinstance(node, list):
        for value in node:
            enum_words(value, out)


def short_constants(tree: ast.AST, max_words: int = 3, max_chars: int = 30, fstrings: bool = False) -> Iterable[str]:
    """String constants of a syntax tree of at most `max_words` words and `max_chars` characters;
    the parts of f-strings only with `fstrings` (they are messages, rarely names the code compares against)."""
    in_fstrings = set() if fstrings else {
        id(c) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for c in node.values}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in in_fstrings
                and len(node.value) <= max_chars and len(node.value.split()) <= max_words):
            yield node.value
