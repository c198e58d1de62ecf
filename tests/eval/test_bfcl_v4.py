"""`rods eval --suite bfcl_v4`: BFCL V4's offline single-turn categories, scored by bfcl-eval's own checkers.

Every verdict is cross-checked against bfcl-eval's checker called here directly
(`ast_checker` on the entry and possible answer bfcl-eval's loaders return, with
the language its category names; BFCL's relevance rule on `is_empty_output`).
"""

from __future__ import annotations

import json
from functools import cache

import pytest

from rods.cli import main as rods_main
from rods.eval import bfcl_v4 as v4, bfcl_v4_official as official

#: Entries whose possible answer, written as the model's text, is a right answer (dotted names where the category
#: has them, so rods' aliasing of `a.b(...)` is exercised). The first two get it right, the third gets a wrong value.
AST_ENTRIES = {
    "simple_python": ["simple_python_1", "simple_python_2", "simple_python_3"],
    "simple_java": ["simple_java_0", "simple_java_2", "simple_java_3"],
    "multiple": ["multiple_0", "multiple_1", "multiple_2"],
    "parallel": ["parallel_0", "parallel_3", "parallel_5"],
    "parallel_multiple": ["parallel_multiple_0", "parallel_multiple_1", "parallel_multiple_2"],
    "live_simple": ["live_simple_2-2-0", "live_simple_3-2-1", "live_simple_26-6-0"],
    "live_multiple": ["live_multiple_2-1-0", "live_multiple_3-2-0", "live_multiple_4-2-1"],
}
RELEVANCE = ("irrelevance", "live_irrelevance", "live_relevance")
REFUSAL = "None of the functions can be used for this request."


# -- bfcl-eval, called directly ----------------------------------------------------------


@cache
def bfcl_entries(category: str) -> dict[str, tuple[dict, list | None]]:
    """id -> (entry as BFCL's runner loads it for its checker, possible answer), aligned by index as BFCL does."""
    from bfcl_eval.utils import is_relevance_or_irrelevance, load_dataset_entry, load_ground_truth_entry

    prompts = load_dataset_entry(category, include_prereq=False, include_language_specific_hint=False)
    answers = [None] * len(prompts) if is_relevance_or_irrelevance(category) else load_ground_truth_entry(category)
    return {p["id"]: (p, a and a["ground_truth"]) for p, a in zip(prompts, answers, strict=True)}


def bfcl_valid(category: str, entry_id: str, decoded: list[dict], native: bool, unreadable: bool = False) -> bool:
    """bfcl-eval's verdict on decoded calls, called without rods' scoring code.

    `unreadable`: the reply held calls rods could not read, which BFCL's decoder reads: a call for (ir)relevance.
    """
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.utils import is_empty_output

    if category in RELEVANCE:
        has_call = unreadable or not is_empty_output(decoded)
        return not has_call if "irrelevance" in category else has_call
    entry, answer = bfcl_entries(category)[entry_id]
    language = {"simple_java": Language.JAVA, "simple_javascript": Language.JAVASCRIPT}.get(category, Language.PYTHON)
    checked_as = entry_id.split(":")[-1] if category == "format_sensitivity" else category
    model = official.FC_MODEL if native else official.PROMPT_MODEL
    return bool(official.bfcl().checker.ast_checker(entry["function"], decoded, answer, language, checked_as,
                                                    model)["valid"])


# -- a scripted policy ---------------------------------------------------------------------


def gold_calls(entry: v4.V4Entry) -> list[tuple[str, dict]]:
    """The first acceptable value of every parameter the possible answer sets (Java values as Java source text)."""
    calls = []
    for call in entry.possible_answer:
        ((name, params),) = call.items()
        arguments = {k: values[0] for k, values in params.items() if values and values[0] != ""}
        if entry.category == "simple_java":
            arguments = {k: (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in arguments.items()}
        calls.append((name, arguments))
    return calls


def wrong(calls: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """The same calls with the first argument's value changed."""
    (name, arguments), *rest = calls
    key = next(iter(arguments))
    value = arguments[key]
    changed = not value if isinstance(value, bool) else value + 1000 if isinstance(value, int | float) else "zz wrong"
    return [(name, {**arguments, key: changed}), *rest]


def pythonic(calls: list[tuple[str, dict]]) -> str:
    return "[" + ", ".join(f"{n}({', '.join(f'{k}={v!r}' for k, v in a.items())})" for n, a in calls) + "]"


def hermes(calls: list[tuple[str, dict]]) -> str:
    blocks = [json.dumps({"name": n.replace(".", "_"), "arguments": a}) for n, a in calls]
    return "\n".join(f"<tool_call>\n{b}\n</tool_call>" for b in blocks)


class ScriptedPolicy:
    """Answers each entry (found by its last user message) with a scripted reply; records what it was sent."""

    def __init__(self, replies: dict[str, str], native: bool):
        self.replies = replies
        self.native_tools = native
        self.requests: list[tuple[list[dict], list[dict]]] = []

    def generate(self, batch):
        self.requests += batch
        return [self.replies[next(m["content"] for m in reversed(msgs) if m["role"] == "user")] for msgs, _ in batch]


def key(entry: v4.V4Entry) -> str:
    return next(m["content"] for m in reversed(entry.messages) if m["role"] == "user")


@pytest.fixture(scope="module")
def picked():
    entries, sizes = v4.load_entries([*AST_ENTRIES, *RELEVANCE])
    wanted = {i for ids in AST_ENTRIES.values() for i in ids}
    first3 = {c: [e.id for e in entries if e.category == c][:3] for c in RELEVANCE}
    wanted |= {i for ids in first3.values() for i in ids}
    return [e for e in entries if e.id in wanted], sizes


def script(entries: list[v4.V4Entry], native: bool) -> dict[str, str]:
    """Right, right, wrong per category: the gold calls, a changed value, a refusal or a call where none belongs."""
    write = hermes if native else pythonic
    replies, seen = {}, {}
    for entry in entries:
        index = seen[entry.category] = seen.get(entry.category, -1) + 1
        right = index < 2
        if entry.category in RELEVANCE:
            call = write([(entry.functions[0]["name"], {})])
            replies[key(entry)] = (REFUSAL if right else call) if "irrelevance" in entry.category else (
                call if right else REFUSAL)
        else:
            replies[key(entry)] = write(gold_calls(entry) if right else wrong(gold_calls(entry)))
    return replies


# -- tests -----------------------------------------------------------------------------------


@pytest.mark.parametrize("native", [False, True], ids=["prompting", "function-calling"])
def test_scripted_policy_scores_exactly_and_every_verdict_is_bfcls(picked, native, tmp_path):
    entries, sizes = picked
    policy = ScriptedPolicy(script(entries, native), native)
    report, results = v4.evaluate_v4(policy, entries, sizes, out_dir=tmp_path)
    assert report.mode == ("function calling" if native else "prompting")
    assert {c: (s.n, round(s.accuracy, 4)) for c, s in report.categories.items()} == {
        c: (3, 0.6667) for c in [*AST_ENTRIES, *RELEVANCE]}
    assert [r["valid"] for r in results if r["category"] == "simple_python"] == [True, True, False]
    for r in results:
        assert r["valid"] == bfcl_valid(r["category"], r["id"], r["decoded"], native, bool(r["decode_errors"])), r
    # the prompt is BFCL's: tools (dots renamed) for function calling, BFCL's system prompt otherwise
    messages, tools = policy.requests[0]
    if native:
        assert tools and all("." not in t["function"]["name"] for t in tools)
        assert tools[0]["function"]["parameters"]["type"] == "object"
    else:
        assert tools == [] and messages[0]["role"] == "system"
        assert messages[0]["content"].startswith("You are an expert in composing functions.")
        assert '"name": "math.factorial"' in policy.requests[0][0][0]["content"]
    # the run directory: every entry's raw reply, decoded calls and verdict
    lines = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert [(r["id"], r["reply"], r["decoded"], r["valid"]) for r in lines] == [
        (r["id"], r["reply"], r["decoded"], r["valid"]) for r in results]
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["summaries"]["irrelevance_detection"]["accuracy"] == pytest.approx(2 / 3)
    assert saved["summaries"]["relevance_detection"]["total_count"] == 16


def test_a_corrupted_decode_flips_the_verdict(picked):
    entries, _ = picked
    entry = next(e for e in entries if e.id == "simple_python_1")  # math.factorial(number=5)
    decoded = v4.decode(entry, "[math.factorial(number=5)]", native=False).calls
    assert decoded == [{"math.factorial": {"number": 5}}]
    assert v4.verdict(entry, decoded, native=False)["valid"] and bfcl_valid(entry.category, entry.id, decoded, False)
    corrupted = [{"math.factorial": {"number": 6}}]
    assert not v4.verdict(entry, corrupted, native=False)["valid"]
    assert not bfcl_valid(entry.category, entry.id, corrupted, False)
    # BFCL's prompting names: dotted; its function-calling names: underscored
    assert not v4.verdict(entry, [{"math_factorial": {"number": 5}}], native=False)["valid"]
    assert v4.verdict(entry, [{"math_factorial": {"number": 5}}], native=True)["valid"]


@pytest.mark.parametrize(
    ("reply", "calls"),
    [
        ("math.factorial(number=5)", [{"math.factorial": {"number": 5}}]),  # bare: BFCL adds the brackets
        ("```python\n[math.factorial(number=5)]\n```", [{"math.factorial": {"number": 5}}]),
        # not the pythonic list BFCL's prompt asks for: not read, as BFCL's prompting decoder does not read it
        ('[{"function": "math.factorial", "parameters": {"number": 5}}]', []),
        ('<tool_call>\n{"name": "math_factorial", "arguments": {"number": 5}}\n</tool_call>', []),
        ("[math.factorial(5)]", [{"math.factorial": {}}]),  # positional arguments dropped, as BFCL does
        ("I need the number first.", []),
        ("[math.factorial(number=__import__('os'))]", []),  # never evaluated: unreadable
    ],
)
def test_prompting_replies_decode_as_bfcl_reads_them(picked, reply, calls):
    entry = next(e for e in picked[0] if e.id == "simple_python_1")
    assert v4.decode(entry, reply, native=False).calls == calls


def test_a_call_rods_cannot_read_is_a_call_for_irrelevance_but_another_format_is_none(picked):
    entry = next(e for e in picked[0] if e.category == "irrelevance")
    name = entry.functions[0]["name"]
    unreadable = v4.decode(entry, f"[{name}(x=some_variable)]", native=False)  # BFCL reads x as "some_variable"
    assert unreadable.calls == [] and unreadable.errors
    assert not v4.verdict(entry, unreadable.calls, False, bool(unreadable.errors))["valid"]
    hermes_reply = v4.decode(entry, hermes([(name, {})]), native=False)  # BFCL's prompting decoder reads no call
    assert hermes_reply.calls == [] and not hermes_reply.errors and "hermes" in hermes_reply.not_read
    assert v4.verdict(entry, hermes_reply.calls, False, bool(hermes_reply.errors))["valid"]
    assert v4.decode(entry, hermes([(name, {})]), native=True).calls == [{name.replace(".", "_"): {}}]


def _xml_type(value) -> str:
    return {bool: "boolean", int: "integer", float: "float", list: "array", dict: "dict"}.get(type(value), "string")


def in_format(calls: list[tuple[str, dict]], fmt: str) -> str:
    """Calls written in one of BFCL's return formats."""
    if fmt == "python":
        return pythonic(calls)
    if fmt == "json":
        return json.dumps([{"function": n, "parameters": a} for n, a in calls])
    functions = ""
    for name, arguments in calls:
        if fmt == "verbose_xml":
            params = "".join(f'<param name="{k}" value="{v}" type="{_xml_type(v)}"/>' for k, v in arguments.items())
            functions += f'<function name="{name}"><params>{params}</params></function>'
        else:
            params = "".join(f'<param name="{k}" type="{_xml_type(v)}">{v}</param>' for k, v in arguments.items())
            functions += f'<function name="{name}">{params}</function>'
    return f"<functions>{functions}</functions>"


class BySystemPrompt(ScriptedPolicy):
    """Answers by the system prompt: format sensitivity's variants of one entry share their question."""

    def generate(self, batch):
        self.requests += batch
        return [self.replies[msgs[0]["content"]] for msgs, _ in batch]


def test_format_sensitivity_variants_are_prompted_and_decoded_in_their_own_format():
    entries, sizes = v4.load_entries(["format_sensitivity"])
    variants: dict[tuple[str, bool], v4.V4Entry] = {}
    for entry in entries:
        if entry.id.endswith(":simple_python_58"):
            variants.setdefault(official.prompt_variant(entry.id), entry)
    assert len(variants) == 8  # 4 return formats, each with and without <TOOLCALL>
    chosen = list(variants.values())
    prompts = {e.id: v4.request(e, native=False)[0][0]["content"] for e in chosen}
    assert len(set(prompts.values())) == 8

    def reply(entry: v4.V4Entry, right: bool) -> str:
        fmt, tag = official.prompt_variant(entry.id)
        calls = gold_calls(entry)
        if not right:  # the calls, but not as this variant asks for them
            return in_format(calls, fmt) if tag else hermes(calls) if fmt == "python" else pythonic(calls)
        return f"<TOOLCALL>{in_format(calls, fmt)}</TOOLCALL>" if tag else in_format(calls, fmt)

    for right in (True, False):
        policy = BySystemPrompt({prompts[e.id]: reply(e, right) for e in chosen}, native=False)
        report, results = v4.evaluate_v4(policy, chosen, sizes)
        assert [r["valid"] for r in results] == [right] * 8, results
        for r in results:
            assert r["valid"] == bfcl_valid("format_sensitivity", r["id"], r["decoded"], False), r
        assert len(report.format_sensitivity["by_config"]) == 8
        assert report.categories["format_sensitivity"].accuracy == float(right)
    # function-calling policies are not given format sensitivity, as in BFCL
    simple, _ = v4.load_entries(["simple_python"], limit=1)
    report, _ = v4.evaluate_v4(ScriptedPolicy({key(simple[0]): ""}, native=True), chosen + simple, sizes)
    assert list(report.categories) == ["simple_python"] and "format_sensitivity" in report.skipped


def test_categories_resolve_by_bfcls_names_and_the_network_ones_are_skipped():
    runnable, skipped = v4.resolve_categories("live,web_search,simple_python")
    assert runnable == ["simple_python", "live_simple", "live_multiple", "live_parallel", "live_parallel_multiple",
                        "live_irrelevance", "live_relevance"]
    assert set(skipped) == {"web_search_base", "web_search_no_snippet"}
    assert all("network" in why for why in skipped.values())
    everything, skipped = v4.resolve_categories(None)
    assert "format_sensitivity" in everything and len(everything) == 14
    assert {"memory_kv", "memory_vector", "memory_rec_sum", "multi_turn_base"} <= set(skipped)
    with pytest.raises(ValueError, match="unknown"):
        v4.resolve_categories("simple")


def test_the_cli_suite_writes_the_run_and_lists_what_needs_the_network(scripted_openai_server, tmp_path):
    entries, _ = v4.load_entries(["simple_python", "irrelevance"], limit=2, seed=3)
    gold = {key(e): e for e in entries}

    def respond(body):
        entry = gold[next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")]
        assert all("." not in t["function"]["name"] for t in body.get("tools", []))
        if entry.category == "irrelevance":
            return {"content": REFUSAL}
        return {"content": None, "tool_calls": [{"name": n.replace(".", "_"), "arguments": json.dumps(a)}
                                                for n, a in gold_calls(entry)]}

    scripted_openai_server.script([], default=respond)
    out = tmp_path / "run"
    code = rods_main(["eval", "--suite", "bfcl_v4", "--base-url", scripted_openai_server.base_url, "--model", "gold",
                      "--v4-categories", "simple_python,irrelevance,web_search", "--v4-limit", "2", "--v4-seed", "3",
                      "--out", str(out)])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert report["mode"] == "function calling"
    assert {c: (s["n"], s["accuracy"]) for c, s in report["categories"].items()} == {
        "simple_python": (2, 1.0), "irrelevance": (2, 1.0)}
    assert set(report["skipped"]) == {"web_search_base", "web_search_no_snippet"}
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["id"] for r in results] == [e.id for e in entries]
    assert all(r["valid"] == bfcl_valid(r["category"], r["id"], r["decoded"], True, bool(r["decode_errors"]))
               for r in results)


@pytest.mark.slow
def test_embedded_model_on_bfcl_v4_agrees_with_bfcls_checker(tmp_path):
    out = tmp_path / "run"
    asked = ["simple_python", "parallel", "irrelevance", "live_multiple", "web_search_base"]  # kept short: CPU
    code = rods_main(["eval", "--suite", "bfcl_v4", "--model", "embedded", "--v4-categories", ",".join(asked),
                      "--v4-limit", "1", "--max-new-tokens", "16", "--threads", "1", "--out", str(out)])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert report["mode"] == "prompting"  # SmolLM2's chat template has no tools
    assert {c: s["n"] for c, s in report["categories"].items()} == dict.fromkeys(asked[:-1], 1)
    assert set(report["skipped"]) == {"web_search_base"}
    assert "network" in report["skipped"]["web_search_base"]
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    entries = {e.id: e for e in v4.load_entries(asked[:-1], limit=1)[0]}
    for r in results:
        assert v4.decode(entries[r["id"]], r["reply"], native=False).calls == r["decoded"]
        assert r["valid"] == bfcl_valid(r["category"], r["id"], r["decoded"], False, bool(r["decode_errors"])), r
    for category, score in report["categories"].items():
        assert score["accuracy"] == sum(r["valid"] for r in results if r["category"] == category)
