"""Every `docs/design.md §N` citation in the code, configs, README and docs/ names a section that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "docs" / "design.md"
CITATION = re.compile(r"docs/design\.md §(\d+(?:\.\d+)*)")
HEADING = re.compile(r"^#{2,4} (\d+(?:\.\d+)*)\.? \S", re.MULTILINE)


def sections() -> set[str]:
    return set(HEADING.findall(DESIGN.read_text(encoding="utf-8")))


def citations() -> list[tuple[str, int, str]]:
    files = [*ROOT.glob("rods/**/*.py"), *ROOT.glob("tests/**/*.py"), *ROOT.glob("bench/*.py"),
             *ROOT.glob("configs/**/*.yaml"), ROOT / "README.md", *ROOT.glob("docs/**/*.md")]
    found = []
    for path in files:
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [(str(path.relative_to(ROOT)), lineno, n) for n in CITATION.findall(line)]
    return found


def test_design_doc_has_numbered_sections():
    numbers = sections()
    assert {"1", "2", "2.3", "3", "3.3", "3.4", "4", "4.7"} <= numbers, sorted(numbers)


def test_every_citation_names_an_existing_section():
    numbers, cited = sections(), citations()
    assert len(cited) >= 25  # the package's docstrings do cite it
    missing = [f"{path}:{line}: §{n}" for path, line, n in cited if n not in numbers]
    assert not missing, "citations of docs/design.md sections that do not exist:\n" + "\n".join(missing)


def test_no_citation_of_the_old_out_of_repo_document():
    stale = [
        f"{path.relative_to(ROOT)}:{i}"
        for path in ROOT.glob("rods/**/*.py")
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bDESIGN §", line)
    ]
    assert not stale, f"cite docs/design.md instead of DESIGN: {stale}"
