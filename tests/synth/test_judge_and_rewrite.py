"""Rewriter and judge: five recorded verdicts; query faults go back to the rewriter once,
ground-truth faults are discarded."""

import json
import random
import re
from pathlib import Path

import pytest
from synth.conftest import POPULATION, stratified

from rods.llm import make_backend
from rods.llm.base import ChatRequest, Completion
from rods.llm.outcomes import referred
from rods.llm.template import FIRST, TemplateBackend, goal, request
from rods.synth.api_graph import describe, function_docs, graph_for
from rods.synth.executor import run_plan
from rods.synth.judge import Judge, structure_verdict
from rods.synth.leak import asking_turns, leaks, query_leak
from rods.synth.pipeline import Pipeline
from rods.synth.planner import Planner
from rods.synth.rewriter import Rewriter, narrative_opening, picks, queries_model, turn_contexts, with_queries
from rods.synth.settings import SynthConfig
from rods.tasks import Task, read_tasks
from rods.tasks.bfcl import API_CLASSES

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def template():
    return make_backend("template")


def _first_run(seed, template, api_graph, rng=0, tries=3):
    """A plan and its successful run, re-planned up to `tries` times as the pipeline's attempts are (else None)."""
    planner = Planner(template, api_graph)
    for k in range(tries):
        plan = planner.plan(seed, rng=random.Random(f"{rng}:{k}"))
        run = run_plan(plan)
        if run.ok:
            return plan, run
        planner.remember_failure(seed, run.failure.function, run.failure.index)
    return None


def _variant(seed, template, api_graph, rng=0):
    found = _first_run(seed, template, api_graph, rng, tries=8)
    assert found is not None, seed.id
    return found


def test_rewrite_writes_every_turn_at_once_opening_with_the_goal(seeds_by_category, template, api_graph):
    seed = seeds_by_category["base"][3]
    plan, run = _variant(seed, template, api_graph)
    before = template.stats.purpose("rewrite").chats
    queries = Rewriter(template).rewrite(plan, run)
    assert template.stats.purpose("rewrite").chats == before + 1  # one call for all turns
    assert len(queries) == seed.num_turns and all(queries)
    # the template states one goal from the calls' effects, not a fixed sentence, and no filler between turns
    stated = goal(turn_contexts(plan, run))
    assert stated and queries[0].startswith(stated) and plan.narrative.split(". ")[0] not in queries[0]
    # the first request follows as the first step towards the goal; the last turn is the step it announced
    assert queries[0][len(stated):].split()[0] in {f.split()[0] for f in FIRST}, queries[0]
    assert queries[-1].startswith("Now ") or seed.num_turns == 1, queries
    assert not any(q.startswith(("Next,", "After that,", "To wrap up", "Then,", "Also,")) for q in queries)


def test_the_goal_says_the_writes_as_actions_and_a_closing_read_as_what_to_find_out():
    def call(index, function, changed, arguments, bound=()):
        return {"index": index, "function": function, "changed": changed, "arguments": arguments,
                "bound": list(bound), "params": dict.fromkeys(arguments), "description": ""}

    turns = [{"kind": "calls", "calls": [call(0, "search_books", False, {"author": "Ines Moreau"})]},
             {"kind": "calls", "calls": [call(1, "lend_book", True, {"book_id": "bk-2", "member": "Hana Sato"},
                                              bound=["book_id"])]},
             {"kind": "calls", "calls": [call(2, "book_details", False, {"book_id": "bk-2"}, bound=["book_id"])]}]
    text = goal(turns)
    assert "lend a book" in text and "look up a book" in text and "search" not in text
    assert "'bk-2'" not in text  # a value the assistant must find is not given away in the goal
    assert request(turns[0]).startswith("Can you") and request(turns[1]).startswith("Please")
    # miss_param: the goal does not say the value the under-specified turn leaves out; one call needs no goal
    asked = {**turns[1], "kind": "ask_missing", "missing": {"index": 1, "param": "member", "value": "Hana Sato"}}
    assert "Hana Sato" in goal(turns) and "Hana Sato" not in goal([turns[0], asked])
    assert goal(turns[:1]) == ""


def test_a_text_passed_on_from_a_result_is_asked_for_as_the_gold_call_passes_it():
    """The gold post is "Update: " and a file's line: "post that text" has another answer (the line alone), so
    the request says the prefix; items joined are asked for so; a note of the user's own words is said."""
    from rods.envs.domains import domain_of
    bfcl = domain_of("bfcl")
    post = {"index": 1, "function": "post_tweet", "changed": True, "params": dict.fromkeys(["content", "tags"]),
            "arguments": {"content": "Update: Plan for Lisbon", "tags": ["#lisbon"]}, "bound": ["content"],
            "retold": ["content"], "retold_as": {"content": {"prefix": "Update:"}}, "description": "",
            "phrase": bfcl.outcome_phrases()["post_tweet"], "nouns": bfcl.nouns(), "forms": bfcl.forms()}
    cat = {"index": 0, "function": "cat", "changed": False, "params": {"file_name": ""},
           "arguments": {"file_name": "plan.txt"}, "bound": [], "description": "",
           "phrase": bfcl.outcome_phrases()["cat"], "nouns": bfcl.nouns(), "forms": bfcl.forms()}
    asked = request({"kind": "calls", "calls": [post]})
    assert "'Update:' followed by that text" in asked and "Plan for Lisbon" not in asked, asked
    joined = {**post, "arguments": {"content": "a.txt, b.txt"}, "retold_as": {"content": {"joined": ", "}}}
    assert "separated by commas" in request({"kind": "calls", "calls": [joined]})
    first = {**post, "retold_as": {"content": {"prefix": "Update:", "part": "first line"}}}
    assert "'Update:' followed by the first line of that text" in request({"kind": "calls", "calls": [first]})
    six = {**joined, "retold_as": {"content": {"joined": ", ", "first": "6"}}}
    assert "the first 6 items of that text, separated by commas" in request({"kind": "calls", "calls": [six]})
    note = {**post, "arguments": {"content": "About archive"}, "retold_as": {"content": {"said": "About archive"}}}
    assert "'About archive'" in request({"kind": "calls", "calls": [note]})
    stated = goal([{"kind": "calls", "calls": [cat]}, {"kind": "calls", "calls": [post]}])
    # the goal says what is posted, not how the text is made ("post 'Update:' followed by what we find" read as a
    # template to the thirteenth blind reader)
    assert "post what we find" in stated and "Update:" not in stated and "Plan for Lisbon" not in stated, stated


def test_items_picked_by_their_place_in_one_list_are_asked_for_in_one_request():
    """"look up the fifth of those reservations, look up the first of those reservations, ...": one request, in
    the list's order ("the last, third, fifth, sixth and fourth" read as robotic to the thirteenth blind reader;
    a turn's calls are scored as a set), and every one of them is "each of those"."""
    def pick(index, which, count=9):
        return {"index": index, "function": "get_reservation_details", "changed": False,
                "arguments": {"reservation_id": f"R{which}"}, "bound": ["reservation_id"],
                "picks": {"reservation_id": [which, count]}, "params": {"reservation_id": ""}, "description": ""}
    user = {"index": 0, "function": "get_user_details", "changed": False, "arguments": {"user_id": "ana_1"},
            "bound": [], "params": {"user_id": ""}, "description": ""}
    asked = request({"kind": "calls", "calls": [user, pick(1, 4), pick(2, 0), pick(3, 8)]})
    assert asked == "Can you look up user 'ana_1' and then look up the first, fifth and last of those reservations?"
    every = request({"kind": "calls", "calls": [user, *(pick(i + 1, w, 4) for i, w in enumerate([3, 1, 0, 2]))]})
    assert every == "Can you look up user 'ana_1' and then look up each of those reservations?"
    # picks from lists of different lengths are different lists: not merged
    two = request({"kind": "calls", "calls": [user, pick(1, 1, 4), pick(2, 0, 3)]})
    assert two.count("of those reservations") == 2, two


def test_a_value_left_out_is_given_next_as_an_addition_not_a_correction():
    """"Oh, I meant 'cinder' for the folder" corrects a name the user never gave (the twelfth blind read)."""
    for value in ("cinder", "Fern", "notes.txt", "@Wren"):
        said = request({"kind": "supply_missing", "missing": {"param": "folder", "value": value},
                        "nouns": {"folder": "folder"}})
        assert f"'{value}'" in said and "folder" in said and "meant" not in said, said
        # as BFCL's people give it ("the directory name is temp."), not a form's field ("Use 'x' for the folder")
        assert re.search(r"\bthe folder is '", said, re.I) and not said.startswith(("Use", "Make it")), said
    # one handle left out is someone, not "some people", when asked and when given
    post = {"index": 0, "function": "post_tweet", "changed": True, "params": {"content": "", "mentions": ""},
            "arguments": {"content": "Going live", "mentions": ["@Ana"]}, "bound": [], "description": "",
            "phrase": ["post {content}", {"mentions": "mentioning {mentions}"}], "nouns": {"mentions": "people"}}
    missing = {"index": 0, "param": "mentions", "value": ["@Ana"]}
    asked = request({"kind": "ask_missing", "calls": [post], "missing": missing})
    assert asked.endswith("mentioning someone."), asked
    given = request({"kind": "supply_missing", "missing": missing, "nouns": {"mentions": "people"}})
    assert re.search(r"\bit's '@Ana'\.$", given, re.I) and "person" not in given, given  # "Oh, it's '@Ana'."


def test_a_value_the_user_named_before_is_named_again_not_referred_to():
    """"look up reservation 'QW4873', ..., look up reservation '1DMPHR', and then cancel that reservation" cancels
    QW4873 (the thirteenth blind read's one failed flow): "that" reads as the last one named."""
    def call(index, function, changed, arguments, bound=()):
        return {"index": index, "function": function, "changed": changed, "arguments": arguments,
                "bound": list(bound), "params": dict.fromkeys(arguments), "description": ""}
    turns = [{"kind": "calls", "calls": [
        call(0, "get_reservation_details", False, {"reservation_id": "QW4873"}),
        call(1, "get_reservation_details", False, {"reservation_id": "1DMPHR"}),
        call(2, "cancel_reservation", True, {"reservation_id": "QW4873"}, bound=["reservation_id"])]}]
    query = TemplateBackend._rewrite({"turns": turns})["queries"][0]
    assert query.endswith("and then cancel reservation 'QW4873'.") and "that reservation" not in query, query
    found = [{"kind": "calls", "calls": [call(0, "list_reservations", False, {"user_id": "ana_1"}),
                                         call(1, "cancel_reservation", True, {"reservation_id": "QW4873"},
                                              bound=["reservation_id"])]}]
    assert "that reservation" in TemplateBackend._rewrite({"turns": found})["queries"][0]  # never said: referred


def test_the_goal_does_not_announce_what_the_first_request_asks_again():
    """"I'm trying to ... see the contents of this folder. Before that, can you show me the contents of this
    folder?": a later call that asks what the first request asks is no part of the announced goal."""
    def call(index, function, changed, arguments):
        return {"index": index, "function": function, "changed": changed, "arguments": arguments,
                "bound": [], "params": dict.fromkeys(arguments), "description": ""}
    turns = [{"kind": "calls", "calls": [call(0, "list_files", False, {"folder": "docs"})]},
             {"kind": "calls", "calls": [call(1, "copy_file", True, {"source": "a.txt", "target": "b.txt"})]},
             {"kind": "calls", "calls": [call(2, "list_files", False, {"folder": "docs"})]}]
    stated = goal(turns)
    assert "copy" in stated and "list" not in stated, stated
    # a closing look at what the first request changed is no goal: "I'm trying to look up book 'bk-2'. First,
    # please return book 'bk-2'." (library variants of the blind reads' draw)
    check = [{"kind": "calls", "calls": [call(0, "return_book", True, {"book_id": "bk-2"})]},
             {"kind": "calls", "calls": [call(1, "book_details", False, {"book_id": "bk-2"})]}]
    assert goal(check) == ""
    other = [check[0], {"kind": "calls", "calls": [call(1, "book_details", False, {"book_id": "bk-9"})]}]
    assert "bk-9" in goal(other)


def test_the_opening_keeps_only_narrative_sentences_that_recite_no_function():
    from rods.synth.api_graph import describe, function_docs

    recited = describe(function_docs(API_CLASSES)["mkdir"]).split(". ")[0].rstrip(".") + "."
    narrative = f"I am tidying my project today. {recited} Then I will rest."
    assert leaks(recited, ["mkdir"], API_CLASSES) is not None
    assert narrative_opening(narrative, ["mkdir"], API_CLASSES) == "I am tidying my project today. Then I will rest."
    assert narrative_opening(narrative, ["ls"], API_CLASSES) == narrative  # another function's docs are not recited
    assert narrative_opening(None, ["mkdir"], API_CLASSES) == narrative_opening("", ["mkdir"], API_CLASSES) == ""


def _given_and_bound(turn):
    """(values the user must say, values the model must take from earlier results) of a turn context."""
    given, bound = [], []
    missing = turn.get("missing", {}).get("param") if turn["kind"] == "ask_missing" else None
    for call in turn["calls"]:
        for key, value in call["arguments"].items():
            values = value if isinstance(value, list) else [value]
            for i, v in enumerate(values):
                is_bound = key in call["bound"] or f"{key}[{i}]" in call["bound"]
                if isinstance(v, str) and len(v) > 3 and key != missing:
                    (bound if is_bound else given).append(v)
    return given, bound


def test_template_queries_ask_for_outcomes_without_reciting_docs(seeds_by_category, template, api_graph):
    """Over 60 seeds of all four categories: no query recites a description or a parameter name, every
    value the user must give is said in its turn, and no value the model must find is given away."""
    rewriter, referred, checked = Rewriter(template), 0, 0
    for seed in stratified(seeds_by_category, 15):
        found = _first_run(seed, template, api_graph, rng=seed.id)
        if found is None:  # the executor's business, tested elsewhere
            continue
        plan, run = found
        checked += 1
        turns = turn_contexts(plan, run)
        queries = rewriter.rewrite(plan, run, turns=turns)
        functions = [c["function"] for t in turns for c in t["calls"]]
        said_by_user = set()
        for turn, query in zip(turns, queries):
            assert leaks(query, functions, API_CLASSES) is None, (seed.id, query)
            given, bound = _given_and_bound(turn)
            said_by_user |= set(given)
            assert all(v in query for v in given), (seed.id, query, given)
            assert not [v for v in bound if v in query and v not in said_by_user], (seed.id, query, bound)
        referred += any(re.search(r"\b(that|those) [a-z]", q) for q in queries[1:])  # an earlier result, in words
        task = Task.model_validate({**seed.model_dump(), "ground_truth": run.ground_truth,
                                    "question": with_queries(seed, queries)})
        assert query_leak(task) == 0.0
    # most seeds run within the pipeline's 3 attempts (flows must keep their roles), and later turns refer back
    assert checked >= 40 and referred >= 10


def test_query_leak_counts_recited_docs_and_parameter_names(seeds_by_category):
    seed = seeds_by_category["base"][0]
    # a 6-word window
    assert leaks("could you display the contents of a file of any extension", ["cat"], API_CLASSES)
    assert leaks("please show file_name notes.txt", ["cat"], API_CLASSES)  # an identifier as a token
    assert leaks("show the file name 'notes.txt'", ["cat"], API_CLASSES)
    assert leaks("cat with file_name='x'", ["cat"], API_CLASSES)
    assert leaks("move it, destination: 'Fern'", ["mv"], API_CLASSES)
    assert not leaks("move it into 'Fern'", ["mv"], API_CLASSES)
    assert not leaks("show me what 'notes.txt' says", ["cat"], API_CLASSES)
    # too short a sentence to be a recitation
    assert not leaks("close a ticket for me", ["close_ticket"], API_CLASSES)
    assert not leaks("add a 'x' and b", ["add"], API_CLASSES)  # one-letter names count only as a=..., a: ...
    assert leaks("add a=4 and b: 5", ["add"], API_CLASSES)
    def with_query(text):
        return Task.model_validate({**seed.model_dump(), "question": [[{"role": "user", "content": text}]]
                                    + [list(q) for q in seed.question[1:]]})
    first = seed.ground_truth[0][0].split("(")[0]
    recite = describe(function_docs(API_CLASSES)[first])
    n = len(asking_turns(seed))
    assert query_leak(with_query(recite)) >= query_leak(with_query("hello there, sort this out")) + 1 / n - 1e-9


def test_miss_param_and_miss_func_turn_kinds(seeds_by_category, template, api_graph):
    seed = next(t for t in seeds_by_category["miss_param"] if t.ground_truth[1] == [])
    plan, run = _variant(seed, template, api_graph)
    kinds = [t["kind"] for t in turn_contexts(plan, run)]
    assert kinds[1] == "ask_missing" and kinds[2] == "supply_missing"
    turns = turn_contexts(plan, run)
    queries = Rewriter(template).rewrite(plan, run, turns=turns)
    missing = turns[1]["missing"]
    assert str(missing["value"]) not in queries[1] and str(missing["value"]) in queries[2]
    # the first miss_func seed the planner finds a run for (a ten-call seed may need more tries than given)
    seed, (plan, run) = next((s, found) for s in seeds_by_category["miss_func"][:4]
                             if (found := _first_run(s, template, api_graph, tries=8)) is not None)
    k = int(next(iter(seed.missed_function)))
    turns = turn_contexts(plan, run)
    assert turns[k]["kind"] == "reveal" and turns[k - 1]["calls"]  # the request comes before the reveal
    assert Rewriter(template).rewrite(plan, run, turns=turns)[k] == ""


def test_judge_records_five_verdicts_with_reasons(seeds_by_category, template, api_graph):
    seed = seeds_by_category["base"][5]
    judged = []
    for rng in range(4):  # the first variant the judge passes (a draw may repeat a read: "two turns ask the same")
        plan, run = _variant(seed, template, api_graph, rng)
        turns = turn_contexts(plan, run)
        task = seed.model_copy(update={"ground_truth": run.ground_truth, "initial_config": plan.initial_config})
        task = Task.model_validate({**task.model_dump(), "question": with_queries(seed, Rewriter(template).rewrite(
            plan, run, turns=turns))})
        judgement = Judge(template).judge(task, run, turns)
        assert set(judgement.verdicts) == {"intent", "values", "progress", "natural", "structure"}  # no rules given
        judged.append(judgement)
        if judgement.passed:
            break
    assert judgement.passed and judgement.fault is None, [j.verdicts for j in judged]
    assert all(v.reason for v in judgement.verdicts.values())
    # a query that leaves out what the user must say is a query fault
    vague = Task.model_validate({**task.model_dump(), "question": [[{"role": "user", "content": "Do the thing."}]
                                                                    for _ in task.question]})
    bad = Judge(template).judge(vague, run, turns)
    assert bad.fault == "query"
    assert not bad.verdicts["values"].passed or not bad.verdicts["intent"].passed
    # a query that recites its call's description fails "natural" for every backend
    longest = [max(turn["calls"], key=lambda c: len(c["description"]), default=None) for turn in turns]
    recite = [[{"role": "user", "content": c["description"] + " " + " ".join(str(v) for v in c["arguments"].values())}]
              if c else list(task.question[i]) for i, c in enumerate(longest)]
    leaky = Judge(template).judge(Task.model_validate({**task.model_dump(), "question": recite}), run, turns)
    assert not leaky.verdicts["natural"].passed and "recites" in leaky.verdicts["natural"].reason
    assert leaky.fault == "query"
    # queries that name the functions read like code, not like a user
    code = [[{"role": "user", "content": " ".join(task.ground_truth[t]) or "ok"}] for t in range(task.num_turns)]
    coded = Judge(template).judge(Task.model_validate({**task.model_dump(), "question": code}), run, turns)
    assert not coded.verdicts["natural"].passed and "reads like code" in coded.verdicts["natural"].reason


def test_structure_verdicts_on_bfcl_layouts(seeds_by_category):
    assert structure_verdict(seeds_by_category["miss_func"][0]).passed
    assert structure_verdict(seeds_by_category["miss_param"][0]).passed
    seed = seeds_by_category["miss_func"][0]
    k = next(iter(seed.missed_function))
    early = [list(t) for t in seed.ground_truth]
    early[0] = [f"{seed.missed_function[k][0]}()"] + early[0]
    broken = Task.model_validate({**seed.model_dump(), "ground_truth": early})
    assert not structure_verdict(broken).passed  # a held-out function used before its reveal


class ForgetfulRewriter(TemplateBackend):
    """Writes a vague first draft, then follows the judge's feedback."""

    def _complete(self, request: ChatRequest) -> Completion:
        if request.purpose == "rewrite" and not request.context.get("feedback"):
            n = len(request.context["turns"])
            return Completion(text=json.dumps({"queries": ["Can you sort this out for me please?"] * n}))
        return super()._complete(request)


def test_a_query_fault_goes_back_to_the_rewriter_once(seeds_by_category, api_graph):
    backend = ForgetfulRewriter()
    seeds = seeds_by_category["base"][:6]
    # the coherence rules off: a ground-truth fault would end a variant before its repair round
    pipeline = Pipeline(backend, SynthConfig(per_seed=1, workers=1, coherence=False, recast=0.0), graph=api_graph)
    accepted = pipeline(seeds)
    assert accepted
    rewrites = backend.stats.purpose("rewrite").chats
    judged = backend.stats.purpose("judge").chats
    assert rewrites == judged == 2 * pipeline.stats.attempts["rewrite"]  # one repair round per variant
    # without feedback repair the vague draft is final, and the judge rejects it
    backend = ForgetfulRewriter()
    off = Pipeline(backend, SynthConfig(per_seed=1, workers=1, feedback_repair=False, recast=0.0), graph=api_graph)
    assert off(seeds) == []
    assert all(r.startswith(("judge:query", "judge:coherence", "coherence", "execution", "plan", "profile"))
               for r in off.stats.rejections)
    assert backend.stats.purpose("rewrite").chats == off.stats.attempts["rewrite"]


class MiscountingRewriter(TemplateBackend):
    """Answers every rewrite with one query too many; records the schemas it was sent."""

    def __init__(self):
        super().__init__()
        self.schemas = []

    def _complete(self, request: ChatRequest) -> Completion:
        if request.purpose != "rewrite":
            return super()._complete(request)
        self.schemas.append((len(request.context["turns"]), request.json_schema))
        queries = json.loads(super()._complete(request).text)["queries"]
        return Completion(text=json.dumps({"queries": queries + ["And one more thing."]}))


def test_a_miscounted_rewrite_is_a_counted_rejection_never_an_internal_error(seeds_by_category, api_graph):
    seeds = seeds_by_category["base"][:3] + seeds_by_category["miss_func"][:3]
    backend = MiscountingRewriter()
    pipeline = Pipeline(backend, SynthConfig(workers=1, recast=0.0), graph=api_graph)
    assert pipeline(seeds) == []
    rejected = {r: n for r, n in pipeline.stats.rejections.items() if r.startswith("llm_error:rewrite")}
    assert sum(rejected.values()) == pipeline.stats.attempts["rewrite"] > 0
    assert not [r for r in pipeline.stats.rejections if r.startswith("internal_error")]
    assert backend.stats.purpose("rewrite").repairs > 0  # sent back to the model for repair first
    # the schema sent is the reply model's: the array pinned to the number of turns, each query capped
    assert backend.schemas
    for n, schema in backend.schemas:
        assert schema == queries_model(n).model_json_schema()
        queries = schema["properties"]["queries"]
        assert queries["minItems"] == queries["maxItems"] == n and queries["items"]["maxLength"] > 0


@pytest.mark.slow  # synthesis over 40 seeds: `make test` runs it
@POPULATION
def test_template_variants_leak_no_docs_over_40_stratified_seeds(template_population):
    """The issue's bar: 40 stratified train seeds x 3 variants, query_leak <= 0.1 (acceptance: 0.475 on this
    draw, see test_most_seeds_of_every_category_get_a_variant)."""
    accepted = template_population.accepted
    assert template_population.report["acceptance_rate"] >= 0.45
    leak = sum(query_leak(t) for t in accepted) / len(accepted)
    assert leak <= 0.1, [q for t in accepted for q, fns in asking_turns(t) if leaks(q, fns, t.involved_classes)][:3]
    # reciting a (long enough) description in any asking turn raises the task's leak
    task, t, name = next((task, t, gt[0].split("(")[0]) for task in accepted for t, gt in enumerate(task.ground_truth)
                         if gt and task.question[t]
                         and len(describe(function_docs(API_CLASSES)[gt[0].split("(")[0]]).split()) >= 6)
    recited = [list(q) for q in task.question]
    recited[t] = [{"role": "user", "content": describe(function_docs(API_CLASSES)[name])}]
    assert query_leak(Task.model_validate({**task.model_dump(), "question": recited})) > query_leak(task)


def test_picks_say_which_of_several_listed_items_a_bound_value_is():
    results = [json.dumps({"books": [{"id": "b1"}, {"id": "b2"}, {"id": "b3"}]}),
               json.dumps({"name": {"first": "Ana"}, "address": {"city": "Lyon"}}),  # fields, not records
               json.dumps({"reservations": {"R1": {"status": "ok"}, "R2": {"status": "ok"}}}),  # records by id
               json.dumps({"current_directory_content": ["notes.txt"]})]  # one item: "that file" is clear
    bindings = {"book_id": (0, ("books", 2, "id")), "city": (1, ("address", "city")),
                "status": (2, ("reservations", "R2", "status")), "file_name": (3, ("current_directory_content", 0))}
    # a field of the item picked names the items ("the second reservation's status"); an id of it is the item
    assert picks(bindings, results) == {"book_id": [2, 3, "book"], "status": [1, 2, "reservation"]}
    assert referred("status", "status", {"status": [1, 2, "reservation"]}) == "the second reservation's status"
    assert referred("book_id", "book", {"book_id": [2, 3, "book"]}) == "the last of those books"
    flights = [json.dumps({"flights": [{"origin": "JFK"}, {"origin": "SFO"}]})]
    origin = picks({"origin": (0, ("flights", 0, "origin"))}, flights)
    assert referred("origin", "origin", origin) == "the first flight's origin", origin  # not "those origins"


def test_a_value_taken_from_one_of_several_results_is_asked_for_by_its_place_in_the_list():
    """tau2 airline variants (a user's reservations, a reservation's flights): every bound value its source
    listed among others is asked for by its place ("the second of those reservations"), never "that ..."."""
    seeds = read_tasks(EXAMPLES / "tau2_airline" / "train.jsonl")[:10]
    template = make_backend("template")
    planner = Planner(template, graph_for(seeds[0].environment, seeds))
    picked = 0
    for seed in seeds[:4]:  # later seeds add a few more picks at several seconds each
        for k in range(3):
            plan = planner.plan(seed, rng=random.Random(f"{seed.id}:{k}"))
            run = run_plan(plan)
            if not run.ok:
                continue
            for turn in turn_contexts(plan, run):
                query = request(turn)
                for call in turn["calls"]:
                    for key, (index, count, *item) in call["picks"].items():
                        picked += 1
                        noun = call.get("nouns", {}).get(key.split("[")[0], "one")
                        said = f"{item[0]}'s " if item and item[0] not in noun else " of those "
                        assert said in query and f"that {noun}" not in query, (seed.id, query)
                        assert count > 1 and 0 <= index < count
    # 6 picks in this draw at e3beac5, 4 since the resolver gives a function up after three failed draws (one
    # plan of tau2_airline_4 no longer resolves): the floor keeps the check from passing on nothing
    assert picked >= 3, picked


def test_a_value_a_write_made_for_a_name_is_said_by_that_name():
    """The user id `add_contact(user_name='Ines Yilmaz')` made is 'Ines Yilmaz' to the person asking: "send that
    message to 'Ines Yilmaz'", not "to that person" (after two contacts were added, "that person" named no one)."""
    def call(index, function, arguments, bound=(), made=None):
        return {"index": index, "function": function, "changed": True, "arguments": arguments,
                "bound": list(bound), "params": dict.fromkeys(arguments), "description": "",
                "made_for": made or {}}
    turns = [{"kind": "calls", "calls": [
        call(0, "add_contact", {"user_name": "Helka Weber"}), call(1, "add_contact", {"user_name": "Ines Yilmaz"}),
        call(2, "send_message", {"receiver_id": "USR006", "message": "Hi"}, bound=["receiver_id"],
             made={"receiver_id": "Ines Yilmaz"})]}]
    asked = TemplateBackend._rewrite({"turns": turns})["queries"][0]  # no phrase: from the names alone
    assert "to 'Ines Yilmaz'" in asked and "receiver 'Ines" not in asked, asked
    assert "that person" not in asked and "USR006" not in asked, asked
    turns[0]["calls"][2]["phrase"] = ["send {message} to {receiver_id}", {}]  # the domain's phrase
    asked = TemplateBackend._rewrite({"turns": turns})["queries"][0]
    assert asked.endswith("send 'Hi' to 'Ines Yilmaz'."), asked


def test_a_message_to_a_contact_just_added_names_that_contact(train_tasks, api_graph):
    """A plan that adds a contact and messages them: the receiver's id comes from `add_contact`'s result, and the
    query names the contact ("send ... to 'Ines Yilmaz'", `rewriter.made_for`), never "that person"."""
    from rods.synth.plan import PlannedCall
    seed = next(t for t in train_tasks if t.id == "multi_turn_base_14")
    plan = Planner(make_backend("template"), api_graph).plan(seed, rng=random.Random(0))
    plan.initial_config = seed.initial_config
    plan.calls = [PlannedCall("message_login", {"user_id": "USR001"}, turn=0, changed=True),
                  PlannedCall("add_contact", {"user_name": "Ines Yilmaz"}, turn=0, changed=True),
                  PlannedCall("send_message", {"receiver_id": "", "message": "Report is out."}, turn=1,
                              bindings={"receiver_id": (1, ("user_id",))}, changed=True)]
    run = run_plan(plan)
    assert run.ok, run.results
    send = turn_contexts(plan, run)[1]["calls"][0]
    assert send["made_for"] == {"receiver_id": "Ines Yilmaz"}, send
    queries = TemplateBackend._rewrite({"turns": turn_contexts(plan, run)})["queries"]
    assert "to 'Ines Yilmaz'" in queries[1] and "that person" not in queries[1], queries
    assert run.calls[2].arguments["receiver_id"] not in queries[1]  # the id is the model's to find


def test_the_value_left_out_is_rather_one_of_a_call_the_turn_makes_once():
    """"Please go into a folder, go into the 'x' folder, ...": a blank beside its named twin reads as robotic (the
    fourteenth blind read); the value left out is one of a call the turn makes once, where there is one."""
    from rods.synth.rewriter import _pick_missing
    calls = [{"index": 0, "function": "cd", "arguments": {"folder": "projects"}, "bound": []},
             {"index": 1, "function": "cd", "arguments": {"folder": "photos"}, "bound": []},
             {"index": 2, "function": "wc", "arguments": {"file_name": "notes.txt"}, "bound": []}]
    assert _pick_missing(calls) == {"index": 2, "param": "file_name", "value": "notes.txt"}
    assert _pick_missing(calls[:2])["index"] == 0  # no other: still one left out


def test_the_value_left_out_is_rather_one_a_person_leaves_open_than_what_the_request_is_about():
    """Where a copy goes, then whom a post mentions, then a further value, before the thing asked about ("search
    a file" for a file the user plainly knows failed the fifteenth blind read)."""
    from rods.synth.rewriter import _pick_missing
    cp = {"index": 0, "function": "cp", "arguments": {"source": "a.txt", "destination": "backups"}, "bound": []}
    grep = {"index": 1, "function": "grep", "arguments": {"file_name": "b.txt", "pattern": "budget"}, "bound": []}
    post = {"index": 2, "function": "post_tweet", "arguments": {"content": "hi all", "mentions": ["@Ana"]},
            "bound": []}
    assert _pick_missing([grep, cp], there=frozenset({'"backups"'}))["param"] == "destination"
    assert _pick_missing([grep, cp])["param"] == "pattern"  # a new name for the copy is no place left open
    assert _pick_missing([grep, post])["param"] == "mentions"
    assert _pick_missing([grep])["param"] == "pattern"
    # a value said again elsewhere is never the one left out, however open it is
    assert _pick_missing([grep, cp], said=[cp["arguments"], cp["arguments"], grep["arguments"]])["index"] == 1


def test_a_value_that_is_a_field_of_the_record_just_named_says_so(monkeypatch):
    """A lend of book 'bk-201' and then a search of its author's books: the query says the author is that book's
    (`rewriter.field_of`), so the two turns read as one errand, not two chores (the fifteenth blind read); an
    author of another book gets no such words."""
    from rods.synth.plan import PlannedCall
    monkeypatch.syspath_prepend(str(EXAMPLES / "byo_env"))
    seeds = read_tasks(EXAMPLES / "byo_env" / "seeds.jsonl")
    seed = next(t for t in seeds if t.id == "lib-2")
    plan = Planner(make_backend("template"), graph_for(seed.environment, seeds)).plan(seed, rng=random.Random(0))
    plan.initial_config = seed.initial_config
    for author, said in (("Ines Moreau", True), ("Kofi Mensah", False)):  # bk-201 is Ines Moreau's
        plan.calls = [PlannedCall("lend_book", {"book_id": "bk-201", "member": "Omar Haddad"}, turn=0, changed=True),
                      PlannedCall("search_books", {"author": author}, turn=1, changed=False)]
        run = run_plan(plan)
        assert run.ok, run.results
        search = turn_contexts(plan, run)[1]["calls"][0]
        assert (search["field_of"] == {"author": ["author", "book", "bk-201"]}) is said, search["field_of"]
        asked = request(turn_contexts(plan, run)[1])
        assert ("(that book's author)" in asked) is said and f"'{author}'" in asked, asked
