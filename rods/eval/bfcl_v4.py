"""BFCL V4's offline single-turn categories, played by a rods `Policy` and scored by bfcl-eval's own checkers.

The categories and their names are bfcl-eval's (`bfcl_eval.constants.category_mapping`):
simple_python, simple_java, simple_javascript, multiple, parallel,
parallel_multiple, irrelevance, the live_* equivalents (live_simple,
live_multiple, live_parallel, live_parallel_multiple, live_irrelevance,
live_relevance) and format_sensitivity. Each entry is one request:

* **Prompt, as BFCL prompts it.** A function-calling policy (`policy.native_tools`,
  or `--native-tools`) gets the entry's messages and the functions as BFCL's
  OpenAI tool schemas (`a.b` named `a_b`, as BFCL does for OpenAI-style models);
  a prompting policy gets BFCL's system prompt with the functions written in
  (the format sensitivity entries: the prompt variant their id names), and no
  tools. Format sensitivity is for prompting policies only, as in BFCL.
* **Decode with rods' call reader** (`rods.rollout.parse`), in the format
  BFCL would read: a function-calling policy's Hermes blocks (structured calls
  of an endpoint come as such); a prompting policy's reply in the return
  format its prompt asks for (BFCL's pythonic list, a bare one getting its
  brackets as BFCL's decoder adds them; the JSON list of format sensitivity;
  its ``<TOOLCALL>`` tag), where calls of an entry's dotted function name are
  read under an alias and given their name back. Format sensitivity's XML
  formats are read by BFCL's own decoder. Calls become BFCL's decoded form
  ``[{name: {parameter: value}}]``; positional arguments are dropped, as
  BFCL's decoder drops them. rods' reader takes literal values only, where
  BFCL's python decoder also reads a bare name as its text and evaluates
  arithmetic (with `eval`, which rods never runs on model output): such a
  call is a wrong answer here, and counts as a call for (ir)relevance.
* **Score with bfcl-eval** (`rods.eval.bfcl_v4_official`): `ast_checker`
  against the possible answers, the relevance rule for (ir)relevance, and
  BFCL's summary formulas.

Not run here, each with its reason in the report (`skipped_categories`): web
search needs the network, the memory categories need backends or phases this
suite does not have, and the multi-turn categories are `rods eval`'s default
suite.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib.util
import json
import random
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from rods.eval import bfcl_v4_official as official
from rods.rollout import Policy, parse_tool_calls

#: Why the categories BFCL V4 has beyond these are not run by this suite.
NETWORK = "needs the network: BFCL's web search backend queries SerpAPI and fetches web pages"
MULTI_TURN = "BFCL multi-turn: scored by `rods eval --suite multi_turn` (the default suite)"
PREREQUISITES = ("each question follows prerequisite conversations (37 of them, 323 user turns) in which the "
                 "model writes its memory through tool calls; this suite runs single-turn entries only")

_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)
_TOOLCALL = re.compile(r"<TOOLCALL>(.*?)</TOOLCALL>", re.DOTALL)
_BARE_CALL = re.compile(r"^[A-Za-z_][\w.]*\s*\(")
_JSON_CALLS = re.compile(r"^\s*(```\w*\s*)?\[?\s*\{")
_PYTHON_CALLS = re.compile(r"^\s*(```\w*\s*)?\[?\s*[A-Za-z_][\w.]*\s*\(")


def offline_categories() -> list[str]:
    """The categories this suite runs, in BFCL's order."""
    c = official.bfcl().categories
    return [*c.SINGLE_TURN_CATEGORY, *c.NON_SCORING_CATEGORY]


def skipped_categories() -> dict[str, str]:
    """BFCL V4's other categories, each with why it is not run here."""
    c = official.bfcl().categories
    missing = [n for n in ("rank_bm25", "sentence_transformers", "faiss") if importlib.util.find_spec(n) is None]
    kv = "needs rank_bm25 (not installed); and " if "rank_bm25" in missing else ""
    vector = " and ".join(n for n in missing if n != "rank_bm25")
    memory = {
        "memory_kv": kv + PREREQUISITES,
        "memory_vector": (f"needs {vector} (not installed), and " if vector else "")
        + "its backend downloads the all-MiniLM-L6-v2 encoder from the Hugging Face hub when imported (network)",
        "memory_rec_sum": "its backend runs offline, but " + PREREQUISITES,
    }
    return {**{name: NETWORK for name in c.WEB_SEARCH_CATEGORY}, **{name: memory[name] for name in c.MEMORY_CATEGORY},
            **{name: MULTI_TURN for name in c.MULTI_TURN_CATEGORY}}


def resolve_categories(spec: str | None) -> tuple[list[str], dict[str, str]]:
    """(categories to run, categories asked for that are not run -> why) from BFCL names or collections.

    `spec` is comma-separated BFCL categories or BFCL's collection names
    (``all``, ``single_turn``, ``live``, ``non_live``, ``python``,
    ``non_python``, ...); None means ``all``.
    """
    c = official.bfcl().categories
    runnable, skipped = offline_categories(), skipped_categories()
    wanted: list[str] = []
    for item in [s.strip() for s in (spec or "all").split(",") if s.strip()]:
        names = c.TEST_COLLECTION_MAPPING.get(item, [item])
        unknown = [n for n in names if n not in runnable and n not in skipped]
        if unknown:
            raise ValueError(f"--v4-categories: unknown {unknown}; BFCL's categories are {c.ALL_CATEGORIES} "
                             f"and its collections {sorted(c.TEST_COLLECTION_MAPPING)}")
        wanted += [n for n in names if n not in wanted]
    return [n for n in runnable if n in wanted], {n: why for n, why in skipped.items() if n in wanted}


# -- entries ---------------------------------------------------------------------------


@dataclass(frozen=True)
class V4Entry:
    """One BFCL entry: its first (only) turn, the functions as shown and as checked, and its possible answer."""

    id: str
    category: str
    messages: list[dict]
    functions: list[dict]
    checker_functions: list[dict]
    possible_answer: list | None = None


def load_entries(categories: Sequence[str], limit: int | None = None,
                 seed: int = 0) -> tuple[list[V4Entry], dict[str, int]]:
    """(entries, each category's full size): all of each category, or `limit` of it drawn with `seed`."""
    if limit is not None and limit < 1:
        raise ValueError(f"--v4-limit must be >= 1, got {limit}")
    entries: list[V4Entry] = []
    sizes: dict[str, int] = {}
    for category in categories:
        shown, checked, answers = official.load_entries(category)
        sizes[category] = len(shown)
        picked: Sequence[int] = range(len(shown))
        if limit is not None and limit < len(shown):
            picked = sorted(random.Random(f"{seed}/{category}").sample(range(len(shown)), limit))
        entries += [V4Entry(shown[i]["id"], category, shown[i]["question"][0], shown[i]["function"],
                            checked[i]["function"], None if answers is None else answers[i]["ground_truth"])
                    for i in picked]
    return entries, sizes


def request(entry: V4Entry, native: bool) -> tuple[list[dict], list[dict]]:
    """(messages, tools) as BFCL sends them to a function-calling (`native`) or a prompting model."""
    if native:
        return copy.deepcopy(entry.messages), official.openai_tools(entry.functions)
    return official.prompting_messages(entry.messages, entry.functions, entry.id), []


# -- decoding ------------------------------------------------------------------------------


@dataclass
class Decoded:
    """A reply's calls in BFCL's decoded form.

    `errors`: calls in the asked format that rods' reader could not read
    (BFCL's decoder reads more: a bare name as its text, an attribute chain, an
    expression); `not_read`: why a reply was not read at all, where BFCL's
    decoder would not read it either (another format, no <TOOLCALL> tag, XML
    BFCL cannot parse).
    """

    calls: list[dict] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    not_read: str | None = None


def decode(entry: V4Entry, reply: str, native: bool) -> Decoded:
    """A reply's calls as BFCL's checker reads them: ``[{name: {parameter: value}}]``."""
    fmt, tag = ("hermes", False) if native else official.prompt_variant(entry.id)
    text = _THINK.sub("", reply)  # reasoning is not the answer (BFCL's handlers split it off too)
    if fmt.endswith("xml"):
        try:
            return Decoded(official.decode_with_bfcl(text, fmt, tag))
        except Exception as err:  # noqa: BLE001 - an unreadable reply decodes to no call
            return Decoded(not_read=f"BFCL's {fmt} decoder: {type(err).__name__}: {err}")
    if tag:
        found = _TOOLCALL.search(text)
        if found is None:
            return Decoded(not_read="no <TOOLCALL>...</TOOLCALL> block")
        text = found.group(1)
    form = _form(text)
    if form != fmt:  # BFCL reads a function-calling model's structured calls, a prompting model's asked format
        return Decoded(not_read=f"calls written as {form}, not as {fmt}" if form else None)
    aliases: dict[str, str] = {}
    if not native:
        bare = text.strip("`\n ")
        if _BARE_CALL.match(bare):  # a call list without its brackets: BFCL's prompting decoder adds them
            text = "[" + bare + ("]" if not bare.endswith("]") else "")
        text, aliases = _alias_dotted_names(text, [f["name"] for f in entry.functions])
    parsed = parse_tool_calls(text)
    return Decoded([{aliases.get(c.name, c.name): dict(c.arguments)} for c in parsed.calls], list(parsed.errors))


def _form(text: str) -> str | None:
    """The call format a reply is written in: "hermes", "json", "python", or None for plain text."""
    if "<tool_call>" in text:
        return "hermes"
    if _JSON_CALLS.match(text):
        return "json"
    return "python" if _PYTHON_CALLS.match(text) else None


def _alias_dotted_names(text: str, names: list[str]) -> tuple[str, dict[str, str]]:
    """Calls of the entry's dotted function names rewritten to plain aliases (rods' reader takes plain names only);
    returns the text and alias -> name."""
    back: dict[str, str] = {}
    for index, name in enumerate(sorted((n for n in names if "." in n), key=len, reverse=True)):
        alias = f"rods_dotted_name_{index}"
        pythonic = re.compile(rf"(?<![\w.]){re.escape(name)}(?=\s*\()")
        json_name = re.compile(rf'("(?:name|function)"\s*:\s*"){re.escape(name)}"')
        text, n_calls = pythonic.subn(alias, text)
        text, n_json = json_name.subn(rf'\g<1>{alias}"', text)
        if n_calls or n_json:
            back[alias] = name
    return text, back


def verdict(entry: V4Entry, calls: list[dict], native: bool, unreadable: bool = False) -> dict[str, Any]:
    """bfcl-eval's verdict on decoded calls: ``{"valid", "error", "error_type"}``.

    `unreadable`: the reply also held calls rods could not read; for
    (ir)relevance they count as a call, as BFCL's decoder would read them.
    """
    if official.is_relevance(entry.category):
        return official.relevance_verdict(entry.category, calls, unreadable)
    assert entry.possible_answer is not None
    result = official.ast_verdict(entry.category, entry.id, entry.checker_functions, calls, entry.possible_answer,
                                  native)
    return result if not result["valid"] else {"valid": True, "error": [], "error_type": None}


# -- evaluation ------------------------------------------------------------------------------


class V4Score(BaseModel):
    """One category's figures."""

    n: int
    #: Entries the category has in BFCL (what its summaries weigh by).
    size: int
    accuracy: float
    #: Fraction of replies holding at least one call read.
    call_rate: float
    #: Fraction of replies with a call that could not be read.
    decode_error_rate: float


class V4Report(BaseModel):
    """What `rods eval --suite bfcl_v4` reports and writes to `report.json`."""

    model: str = ""
    #: "function calling" (tools passed natively) or "prompting" (BFCL's system prompt).
    mode: str = ""
    #: The model name BFCL's checker is given (its `underscore_to_dot` decides how names compare).
    checker_model: str = ""
    n_entries: int = 0
    categories: dict[str, V4Score] = Field(default_factory=dict)
    #: BFCL's summary columns computable from the categories run (with the formula used).
    summaries: dict[str, dict[str, Any]] = Field(default_factory=dict)
    #: Format sensitivity per prompt variant, and BFCL's spread statistics over the variants run.
    format_sensitivity: dict[str, Any] = Field(default_factory=dict)
    skipped: dict[str, str] = Field(default_factory=dict)
    seconds: float = 0.0
    settings: dict[str, Any] = Field(default_factory=dict)
    generation: dict[str, Any] = Field(default_factory=dict)


def evaluate_v4(
    policy: Policy,
    entries: Sequence[V4Entry],
    sizes: dict[str, int] | None = None,
    *,
    native: bool | None = None,
    skipped: dict[str, str] | None = None,
    model: str = "",
    out_dir: str | Path | None = None,
    chunk: int = 16,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[V4Report, list[dict[str, Any]]]:
    """Play `policy` on `entries`, score each with bfcl-eval, report per category; write the run directory.

    `native` defaults to ``policy.native_tools``. Returns the report and one
    result per entry (``id``, ``category``, ``reply``, ``decoded``,
    ``decode_errors``, ``valid``, ``error_type``, ``error``).
    """
    native = getattr(policy, "native_tools", True) if native is None else native
    skipped = dict(skipped or {})
    if native and any(e.category == "format_sensitivity" for e in entries):
        skipped["format_sensitivity"] = "BFCL runs format sensitivity for prompting models only"
        entries = [e for e in entries if e.category != "format_sensitivity"]
    if not entries:
        raise ValueError("no BFCL V4 entries to evaluate")
    start = time.perf_counter()
    results: list[dict[str, Any]] = []
    for lo in range(0, len(entries), max(1, chunk)):
        batch = entries[lo: lo + max(1, chunk)]
        replies = policy.generate([request(e, native) for e in batch])
        if len(replies) != len(batch):
            raise RuntimeError(f"policy returned {len(replies)} replies for {len(batch)} requests")
        for entry, reply in zip(batch, replies):
            decoded = decode(entry, reply, native)
            results.append({"id": entry.id, "category": entry.category, "reply": reply, "decoded": decoded.calls,
                            "decode_errors": decoded.errors, "not_read": decoded.not_read,
                            **verdict(entry, decoded.calls, native, bool(decoded.errors))})
        if progress is not None:
            progress(len(results), len(entries))
    seconds = time.perf_counter() - start
    report = V4Report(
        model=model or str(getattr(policy, "model", "")),
        mode="function calling" if native else "prompting",
        checker_model=official.FC_MODEL if native else official.PROMPT_MODEL,
        n_entries=len(results), skipped=skipped, seconds=seconds,
        settings={"max_new_tokens": getattr(policy, "max_new_tokens", getattr(policy, "max_tokens", None)),
                  "temperature": getattr(policy, "temperature", None)},
        generation=_stats(policy),
    )
    report.categories = score_categories(results, sizes or {})
    report.summaries = official.summaries({c: (s.accuracy, s.size) for c, s in report.categories.items()})
    report.format_sensitivity = format_sensitivity_spread([r for r in results if r["category"] == "format_sensitivity"])
    if out_dir is not None:
        write_run(out_dir, report, results)
    return report, results


def _stats(policy: Policy) -> dict[str, Any]:
    stats = getattr(policy, "stats", None)
    if stats is None or not dataclasses.is_dataclass(stats):
        return {}
    return {k: v for k, v in dataclasses.asdict(stats).items() if k != "by_round"}


def score_categories(results: Sequence[dict[str, Any]], sizes: dict[str, int]) -> dict[str, V4Score]:
    """Per category, in BFCL's order: accuracy, call rate and decode-error rate."""
    by_category: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_category.setdefault(r["category"], []).append(r)
    order = [c for c in offline_categories() if c in by_category] + sorted(set(by_category) - set(offline_categories()))
    return {c: V4Score(n=len(rs), size=sizes.get(c, len(rs)), accuracy=sum(r["valid"] for r in rs) / len(rs),
                       call_rate=sum(bool(r["decoded"]) for r in rs) / len(rs),
                       decode_error_rate=sum(bool(r["decode_errors"]) for r in rs) / len(rs))
            for c in order for rs in [by_category[c]]}


def format_sensitivity_spread(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Accuracy per prompt variant, and BFCL's spread over the variants run (its runner's formulas:
    max - min, variance and standard deviation of the per-variant accuracies, in points)."""
    if not results:
        return {}
    by_config: dict[str, list[bool]] = {}
    for r in results:
        by_config.setdefault(r["id"].split(":")[1], []).append(bool(r["valid"]))
    accuracy = {cfg: sum(v) / len(v) for cfg, v in by_config.items()}
    values = list(accuracy.values())
    spread = len(values) > 1
    return {
        "by_config": {cfg: {"accuracy": accuracy[cfg], "n": len(by_config[cfg])} for cfg in sorted(by_config)},
        "accuracy_max_delta": round((max(values) - min(values)) * 100, 2) if spread else 0.0,
        "accuracy_variance": round(statistics.variance(values) * 100**2, 2) if spread else 0.0,
        "accuracy_std": round(statistics.stdev(values) * 100, 2) if spread else 0.0,
    }


def write_run(out_dir: str | Path, report: V4Report, results: Sequence[dict[str, Any]]) -> None:
    """`report.json` and `results.jsonl` (one line per entry) under `out_dir`."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
    with (out / "results.jsonl").open("w", encoding="utf-8") as fh:
        for r in results:
            fh.write(json.dumps(r, ensure_ascii=False, default=repr) + "\n")
