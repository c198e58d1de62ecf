"""Synthesis for any environment (docs/design.md §4.8): Python environments written for these tests
(a journal with page ids, a shop with item and order ids, a bank loaded through `_reset`) and their seeds."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import assume, given, settings, strategies as st
from synth_envs import SEEDS

from rods.envs import ToolEnvironment
from rods.llm import make_backend
from rods.llm.outcomes import generic_outcome
from rods.reward import score
from rods.synth.api_graph import function_docs, graph_for
from rods.synth.arguments import snapshot_leaves
from rods.synth.judge import structure_verdict
from rods.synth.leak import leaks, query_leak
from rods.synth.pipeline import Pipeline
from rods.synth.profile import profile_of
from rods.synth.settings import SynthConfig
from rods.synth.value_kinds import vocabulary_of
from rods.synth.values import ValueRemapper
from rods.tasks import Task, content_hash

ENVS = ("synth_envs:Journal", "synth_envs:Shop", "synth_envs:Bank")


@pytest.fixture(scope="module")
def seeds() -> list[Task]:
    return [Task.model_validate(s) for s in SEEDS]


@pytest.fixture(scope="module")
def synthesized(seeds):
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=3, workers=2))
    return pipeline, pipeline(seeds)


def test_graph_of_a_python_environment_comes_from_its_tools_effects_and_seed_traces(seeds):
    graph = graph_for("synth_envs:Shop", seeds)
    assert set(graph.nodes) == {"search_items", "item_details", "place_order", "cancel_order", "restock",
                                "order_status"}
    assert {n.api_class for n in graph.nodes.values()} == {"synth_envs:Shop"}
    assert graph.nodes["place_order"].effect == "write" and graph.nodes["order_status"].effect == "read"
    assert graph.nodes["place_order"].params == {"item_id": "string", "quantity": "integer"}
    # seen in the seeds' executions: a search feeds an order, an order feeds its status
    assert graph.edges[("search_items", "place_order")] >= 1 and graph.edges[("place_order", "order_status")] >= 1
    assert graph_for("synth_envs:Shop", seeds) is graph  # cached per environment
    more = seeds[3].model_copy(update={"id": "shop-extra"})
    assert graph_for("synth_envs:Shop", [more]) is not graph  # a new seed grows it
    assert set(graph_for("synth_envs:Journal", seeds).nodes) == {
        "create_page", "tag_page", "delete_page", "show_page", "find_pages", "list_pages"}


def test_undeclared_effects_are_observed_in_the_seeds(seeds):
    import synth_envs

    from rods.synth.api_graph import APIGraph

    docs = function_docs(["synth_envs:Bank"])
    assert docs["deposit"]["effect"] == "write"
    graph = APIGraph.learn([s for s in seeds if s.environment == "synth_envs:Bank"], ["synth_envs:Bank"])
    assert graph.nodes["deposit"].effect == "write" and graph.nodes["balance"].effect == "read"
    assert synth_envs.Bank.deposit.__rods_effect__ == "write"


def test_every_seed_of_every_environment_yields_verified_profile_matching_new_variants(seeds, synthesized):
    pipeline, accepted = synthesized
    by_id = {s.id: s for s in seeds}
    parents = {t.provenance.parent_id for t in accepted}
    assert parents == set(by_id), f"seeds without a variant: {set(by_id) - parents}; {pipeline.report()}"
    assert len({content_hash(t) for t in accepted}) == len(accepted)
    for task in accepted:
        seed = by_id[task.provenance.parent_id]
        assert task.environment == seed.environment and task.involved_classes == seed.involved_classes
        assert task.category == seed.category
        result = score(task, [[list(turn)] if turn else [] for turn in task.ground_truth])
        assert (result.progress, result.binary) == (1.0, 1), task.id
        assert profile_of(task).matches(profile_of(seed)), task.id
        assert task.ground_truth != seed.ground_truth or task.initial_config != seed.initial_config
        assert content_hash(task) != content_hash(seed)
        assert query_leak(task) == 0.0, task.question
        assert structure_verdict(task).passed
        assert all(v["passed"] for v in task.provenance.verdicts.values()), task.provenance.verdicts
    kinds = {t.category for t in accepted}
    assert {"miss_func", "miss_param"} <= kinds


def test_variant_queries_name_their_values_not_the_tools(seeds, synthesized):
    _, accepted = synthesized
    names = {d for env in ENVS for d in function_docs([env])}
    for task in accepted:
        text = " ".join(m.content for q in task.question for m in q)
        assert not any(re.search(rf"\b{n}\b", text) for n in names if "_" in n), text


def test_a_tool_named_like_a_bfcl_function_gets_the_generic_request(synthesized):
    _, accepted = synthesized
    orders = [t for t in accepted if any("place_order(" in c for turn in t.ground_truth for c in turn)]
    for task in orders:
        text = " ".join(m.content for q in task.question for m in q)
        assert "shares" not in text and "None" not in text, text  # BFCL's TradingBot phrase is not used


def test_state_values_skip_field_names_and_offer_ids(seeds):
    env = ToolEnvironment(next(s for s in seeds if s.id == "bank-0"))
    leaves = dict(snapshot_leaves(env, "synth_envs:Bank"))
    keys = {v for p, v in leaves.items() if p.endswith("#key")}
    assert {"acc-100", "acc-101", "acc-102"} <= keys
    assert "balance" not in keys and "owner" not in keys  # field names of records are not ids


def test_remapping_keeps_the_environment_vocabulary_and_the_config_loads(seeds):
    seed = next(s for s in seeds if s.id == "journal-0")
    words = vocabulary_of(seed.environment)
    assert {"pages", "title", "text", "tags", "next"} <= words
    for k in range(20):
        remapper = ValueRemapper(random.Random(k), words)
        body = remapper.remap(seed.initial_config[seed.environment])  # as the planner remaps each class's config
        config = {seed.environment: body}
        assert set(body) == {"pages", "next_id"}
        assert all(set(page) == {"title", "text"} for page in body["pages"].values())
        assert set(body["pages"]).isdisjoint(seed.initial_config[seed.environment]["pages"])
        ToolEnvironment(seed.model_copy(update={"initial_config": config}))  # loads: attributes kept


@settings(max_examples=150, deadline=None)
@given(env=st.sampled_from(ENVS), data=st.data())
def test_generic_requests_never_leak_and_say_every_supplied_value(env, data):
    docs = function_docs([env])
    name = data.draw(st.sampled_from(sorted(docs)))
    props = docs[name]["parameters"]["properties"]
    word = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=9)
    value = {"string": word.map(lambda w: w.capitalize() + " " + w),
             "integer": st.integers(11, 9999), "number": st.floats(11, 9999).map(lambda x: round(x, 2))}
    arguments = {p: data.draw(value.get(spec.get("type", "string"), word)) for p, spec in props.items()}
    assume(len({str(v).lower() for v in arguments.values()}) == len(arguments))
    bound = data.draw(st.sets(st.sampled_from(sorted(arguments)))) if arguments else set()
    text = generic_outcome(name, arguments, description=docs[name]["description"], params=list(props), bound=bound)
    assert leaks(f"Could you {text}?", [name], [env]) is None, text
    for param, v in arguments.items():
        said = re.search(rf"(?<![\w.]){re.escape(str(v))}(?![\w]|\.\d)", text) is not None
        assert said != (param in bound), (param, v, text)  # a bound value is never given away


def test_augmenter_turns_variants_of_any_environment_into_miss_func_and_miss_param(seeds):
    basic = [s for s in seeds if s.id in ("journal-0", "shop-0")]
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=3, workers=2, augment=1.0))
    accepted = pipeline(basic)
    assert not any(k.startswith("internal_error") for k in pipeline.report()["rejections"])
    assert {t.category for t in accepted} & {"miss_func", "miss_param"}
    for task in accepted:
        assert task.environment == next(s for s in basic if s.id == task.provenance.parent_id).environment
        assert structure_verdict(task).passed
        result = score(task, [[list(turn)] if turn else [] for turn in task.ground_truth])
        assert (result.progress, result.binary) == (1.0, 1)
