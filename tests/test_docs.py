"""The README and docs/ hold together: links resolve, shown commands are real, generated pages are current.

* every relative link (and image) in README.md and docs/**/*.md names a file that exists, and
  a `#anchor` names a heading (or `<a id>`) of the page it points to;
* every `rods ...` command in a code block or inline code names a real subcommand and real
  options of `rods.cli.build_parser()`, and a value from an option's choices (placeholders such
  as `FILE.jsonl`, `N`, `<key>` and synopsis brackets `[--k K]`, `{a,b}` are fine);
* the pages `scripts/gen_docs.py` writes equal what it renders now (`make docs` refreshes them);
* the README stays a page (at most 300 lines) with the two quick-start commands.

The checkers are tested on made-up input too, so a checker that stopped checking fails.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
import subprocess
from functools import cache
from pathlib import Path

import pytest

from rods.cli import build_parser
from rods.tasks.model import Provenance, Task

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def pages() -> list[Path]:
    """The README and the docs' pages; not what a run writes beside its figures (`docs/results/learning`: a
    model card in a checkpoint), which git ignores."""
    found = sorted((ROOT / "docs").rglob("*.md"))
    try:
        ignored = subprocess.run(["git", "check-ignore", "--stdin"], cwd=ROOT, capture_output=True, text=True,
                                 input="\n".join(str(p) for p in found), timeout=60).stdout.split("\n")
    except (OSError, subprocess.SubprocessError):  # no git: every page
        ignored = []
    skip = {Path(line).resolve() for line in ignored if line}
    return [README, *(p for p in found if p.resolve() not in skip)]


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


# -- reading Markdown ------------------------------------------------------------------------------------------------

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_TARGET = re.compile(r"""<(?:img|a)\b[^>]*?\b(?:src|href)=["']([^"']+)["']""")
HTML_ID = re.compile(r"""<a\b[^>]*?\b(?:id|name)=["']([^"']+)["']""")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


#: Fenced blocks whose lines are shell commands (others hold output, YAML, JSON, Python, usage text).
SHELL_BLOCKS = {"", "bash", "sh", "shell", "console"}


def split_fences(text: str, only: set[str] | None = None) -> tuple[list[str], list[str]]:
    """(prose lines, with fenced blocks blanked out; the contents of the fenced blocks whose language is in `only`)."""
    prose, blocks, block, language = [], [], None, ""
    for line in text.splitlines():
        if FENCE.match(line):
            if block is None:
                block, language = [], line.strip().lstrip("`~").strip().lower()
            else:
                if only is None or language in only:
                    blocks.append("\n".join(block))
                block = None
            prose.append("")
        elif block is not None:
            block.append(line)
            prose.append("")
        else:
            prose.append(line)
    return prose, blocks


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text, lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = re.sub(r"<[^>]+>", "", text).lower()
    return "".join(ch for ch in text if ch.isalnum() or ch in " -_").replace(" ", "-")


def anchors(path: Path) -> set[str]:
    prose, _ = split_fences(path.read_text(encoding="utf-8"))
    found, seen = set(), {}
    for line in prose:
        found |= set(HTML_ID.findall(line))
        match = HEADING.match(line)
        if match:
            base = slug(match.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
    return found


def broken_links(path: Path) -> list[str]:
    """`file:line: target (why)` for every relative link of `path` that does not resolve."""
    prose, _ = split_fences(path.read_text(encoding="utf-8"))
    problems = []
    for lineno, line in enumerate(prose, 1):
        line = INLINE_CODE.sub("", line)
        for target in LINK.findall(line) + HTML_TARGET.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
                continue
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            where = f"{_rel(path)}:{lineno}: {target}"
            if not dest.exists():
                problems.append(f"{where} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problems.append(f"{where} (no heading #{anchor} in {_rel(dest)})")
    return problems


# -- reading `rods ...` commands --------------------------------------------------------------------------------------

#: Shell words that end a command (pipes, redirections, command lists).
SHELL_STOP = {"|", "||", "&&", ";", ">", ">>", "<", "2>&1", "&"}


def _synopsis_to_words(line: str) -> list[str]:
    """A command line as argv words: synopsis brackets dropped, `{a,b}` read as its first choice, comments cut."""
    line = re.sub(r"\{([^{}\s,]+)(?:,[^{}\s]*)?\}", r"\1", line)  # {train,test,all} -> train
    line = line.replace("[", " ").replace("]", " ")
    lexer = shlex.shlex(line, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    try:
        words = list(lexer)
    except ValueError:  # an unbalanced quote in an example: read it word by word
        words = line.split("#")[0].split()
    return [w for w in words if w not in ("...", "…")]


#: Programs that may run `rods` (`accelerate launch ... -m rods`, `nice -n 19 rods`, `python -m rods`).
LAUNCHERS = {"python", "python3", "accelerate", "launch", "time", "nice", "env"}


def rods_argv(line: str) -> list[str] | None:
    """The arguments after `rods` when `line` runs the rods command (`rods`, `.venv/bin/rods`, `-m rods`)."""
    words = _synopsis_to_words(line.strip().removeprefix("$ "))
    at = next((i for i, w in enumerate(words) if w == "rods" or w.endswith("/bin/rods")), None)
    if at is None:
        return None
    launched = all(re.match(r"^\w+=", w) or w.rsplit("/", 1)[-1] in LAUNCHERS or w.startswith("-") or w.isdigit()
                   or is_placeholder(w) for w in words[:at])
    if not launched:
        return None
    argv = words[at + 1:]
    stop = next((j for j, w in enumerate(argv) if w in SHELL_STOP), len(argv))
    return argv[:stop]


def commands_in(text: str) -> list[str]:
    """(command line, inline?) of every `rods ...` command in the shell blocks (backslash continuations joined)
    and the inline code of `text`."""
    prose, blocks = split_fences(text, only=SHELL_BLOCKS)
    found = []
    for block in blocks:
        for line in block.replace("\\\n", " ").splitlines():
            if rods_argv(line) is not None:
                found.append((line.strip(), False))
    for line in prose:
        for _, span in INLINE_CODE.findall(line):
            if span.startswith("rods "):
                found.append((span, True))
    return found


def is_placeholder(word: str) -> bool:
    """A stand-in for a value (`FILE.jsonl`, `N`, `<key>`, `$URL`), not a literal the parser must accept."""
    return bool(re.search(r"[A-Z]{2,}|<|\$", word)) or re.fullmatch(r"[A-Z]", word) is not None


def _check_choice(action: argparse.Action, value: str, prog: str) -> str | None:
    if action.choices is None or is_placeholder(value):
        return None
    try:
        converted = action.type(value) if callable(action.type) else value
    except (TypeError, ValueError):
        return f"{prog}: {value!r} is not a valid value of {'/'.join(action.option_strings) or action.dest}"
    if converted not in action.choices:
        name = "/".join(action.option_strings) or action.dest
        return f"{prog}: {value!r} is not one of {name}'s choices {list(action.choices)}"
    return None


def check_argv(argv: list[str], parser: argparse.ArgumentParser | None = None, mention: bool = False) -> str | None:
    """None when `rods ARGV` names real subcommands, options and choices; else what is wrong.

    `mention`: the words name an option in prose (`rods synth --stats`), so its value may be left out at the end.
    """
    p = parser or rods_parser()
    i, positional = 0, 0
    while i < len(argv):
        word = argv[i]
        if word.startswith("-") and word != "-":
            flag, eq, value = word.partition("=")
            action = p._option_string_actions.get(flag)
            if action is None:
                return f"{p.prog}: no option {flag}"
            i += 1
            if eq:
                values = [value]
            elif action.nargs == 0:
                continue
            elif action.nargs in (None, 1):
                if i >= len(argv):
                    return None if mention else f"{p.prog}: {flag} needs a value"
                values, i = [argv[i]], i + 1
            elif action.nargs == "?":
                values = [argv[i]] if i < len(argv) and not argv[i].startswith("-") else []
                i += len(values)
            else:  # "+", "*": up to the next option
                values = []
                while i < len(argv) and not argv[i].startswith("-"):
                    values.append(argv[i])
                    i += 1
            for v in values:
                problem = _check_choice(action, v, p.prog)
                if problem:
                    return problem
            continue
        positionals = [a for a in p._actions if not a.option_strings and not isinstance(a, argparse._SubParsersAction)]
        subparsers = next((a for a in p._actions if isinstance(a, argparse._SubParsersAction)), None)
        if positional < len(positionals):
            problem = _check_choice(positionals[positional], word, p.prog)
            if problem:
                return problem
            positional += 1
        elif subparsers is not None and word in subparsers.choices:
            p, positional = subparsers.choices[word], 0
        elif subparsers is not None and is_placeholder(word):
            return None  # `rods COMMAND --help`: nothing further to check
        elif subparsers is not None:
            return f"{p.prog}: no subcommand {word!r} (known: {', '.join(subparsers.choices)})"
        else:
            return f"{p.prog}: unexpected argument {word!r}"
        i += 1
    return None


@cache
def rods_parser() -> argparse.ArgumentParser:
    return build_parser()


# -- the docs' own tests ----------------------------------------------------------------------------------------------


def test_every_relative_link_resolves():
    problems = [p for page in pages() for p in broken_links(page)]
    assert not problems, "broken links:\n" + "\n".join(problems)


def test_every_rods_command_shown_is_real():
    shown = [(page, line, inline) for page in pages() for line, inline in commands_in(page.read_text(encoding="utf-8"))]
    assert len(shown) >= 40  # the README and guides do show commands
    problems = []
    for page, line, inline in shown:
        problem = check_argv(rods_argv(line) or [], mention=inline)
        if problem:
            problems.append(f"{_rel(page)}: `{line}`: {problem}")
    assert not problems, "commands that rods would refuse:\n" + "\n".join(problems)


def _gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_pages_are_current():
    stale = _gen_docs().stale_pages()
    assert not stale, f"stale generated pages {stale}: run `make docs` (python scripts/gen_docs.py) and commit them"


def test_every_docs_page_is_linked_from_somewhere():
    linked = set()
    for page in pages():
        prose, _ = split_fences(page.read_text(encoding="utf-8"))
        for line in prose:
            for target in LINK.findall(INLINE_CODE.sub("", line)):
                file_part = target.partition("#")[0]
                if file_part and not re.match(r"^[a-z][a-z0-9+.-]*:", file_part):
                    linked.add((page.parent / file_part).resolve())
    orphans = [_rel(p) for p in pages()[1:] if p.resolve() not in linked]
    assert not orphans, f"pages no other page links to: {orphans}"


def test_the_readme_is_a_page_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    _, blocks = split_fences(text.split("## Quick start", 1)[1].split("\n## ", 1)[0])
    commands = [line.split("#")[0].strip() for block in blocks for line in block.splitlines()]
    assert "make demo" in commands and "make test" in commands


def test_the_task_format_names_every_task_field():
    text = (ROOT / "docs" / "reference" / "task_format.md").read_text(encoding="utf-8")
    missing = [name for model in (Task, Provenance) for name in model.model_fields if f"`{name}`" not in text]
    assert not missing, f"fields of the task model that docs/reference/task_format.md does not describe: {missing}"


# -- the checkers catch what they should -----------------------------------------------------------------------------


def test_the_link_checker_finds_broken_files_and_anchors(tmp_path):
    (tmp_path / "other.md").write_text("# Other\n\n## A section\n", encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n[ok](other.md#a-section) [ok](#page) `[not a link](nowhere.md)`\n"
                    "[gone](missing.md) [bad anchor](other.md#no-such) [here](#nowhere) ![img](fig.png)\n"
                    "```\n[in code](ignored.md)\n```\n", encoding="utf-8")
    problems = broken_links(page)
    assert [p.split(": ", 1)[1].split(" (")[0] for p in problems] == [
        "missing.md", "other.md#no-such", "#nowhere", "fig.png"], problems


@pytest.mark.parametrize("line, fault", [
    ("rods train --confg configs/demo.yaml", "no option --confg"),
    ("rods trian --config configs/demo.yaml", "no subcommand 'trian'"),
    ("rods synth --seeds train --llm gpt4 --out v.jsonl", "'gpt4' is not one of --llm's choices"),
    ("rods tasks export tau2:banking --out t.jsonl", "'tau2:banking' is not one of source's choices"),
    ("rods tasks validate a.jsonl b.jsonl", "unexpected argument 'b.jsonl'"),
    ("rods eval --model embedded --limit", "--limit needs a value"),
])
def test_the_command_checker_refuses_what_rods_would(line, fault):
    problem = check_argv(rods_argv(line))
    assert problem is not None and fault in problem, problem


@pytest.mark.parametrize("line", [
    "rods tasks export --split {train,test,all} --out FILE.jsonl   # a comment",
    "rods synth --seeds F --per-seed N --llm {template,local,openai} [--base-url URL --model NAME] --out OUT.jsonl",
    "rods compare --arms A.yaml B.yaml ... --seeds N --out DIR [--steps S] [--parallel P] [--set KEY=VALUE]",
    "rods -v train --config configs/demo.yaml --set grpo.max_steps=20 --resume",
    "PYTHONPATH=. .venv/bin/rods synth graph --out graph.json | tee log",
    "accelerate launch --num_processes 2 -m rods train --config configs/demo.yaml",
    "rods COMMAND --help",
])
def test_the_command_checker_accepts_synopses_and_placeholders(line):
    argv = rods_argv(line)
    assert argv is not None and check_argv(argv) is None, (argv, check_argv(argv or []))


def test_a_stale_generated_page_is_found(tmp_path):
    gen = _gen_docs()
    for page, render in gen.PAGES.items():
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text(render(), encoding="utf-8")
    assert gen.stale_pages(tmp_path) == []
    cli = tmp_path / "docs" / "reference" / "cli.md"
    cli.write_text(cli.read_text(encoding="utf-8").replace("--per-seed", "--per-sed"), encoding="utf-8")
    assert gen.stale_pages(tmp_path) == ["docs/reference/cli.md"]
