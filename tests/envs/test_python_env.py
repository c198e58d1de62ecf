"""A user's Python class as an environment (rods.envs.python, docs/design.md §2.2)."""

from __future__ import annotations

import json
import time

import pytest
from pydantic import ValidationError

from rods.envs import Environment, ToolEnvironment, tool
from rods.envs.python import declared_effect
from rods.reward import score
from rods.tasks import Task

NOTEBOOK = "toy_envs:Notebook"


def notebook_task(**over) -> Task:
    body = {
        "id": "nb-0",
        "category": "base",
        "environment": NOTEBOOK,
        "question": [
            [{"role": "user", "content": "Save groceries: milk, then list my notes."}],
            [{"role": "user", "content": "Show me the groceries note."}],
        ],
        "ground_truth": [
            ["add_note(title='groceries', text='milk')", "list_notes()"],
            ["read_note(title='groceries')"],
        ],
        "initial_config": {NOTEBOOK: {"book": {"notes": {"old": "x"}}}},
    }
    body.update(over)
    return Task.model_validate(body)


def test_tools_come_from_public_methods_hints_and_docstrings():
    env = ToolEnvironment(notebook_task())
    assert isinstance(env, Environment)
    specs = {s.name: s for s in env.tools()}
    assert set(specs) == {"add_note", "list_notes", "read_note", "spin"}  # `_secret` is not a tool
    add = specs["add_note"]
    assert add.effect == "write" and add.group == NOTEBOOK
    assert add.required == ["title", "text"]
    assert add.parameters["properties"]["title"] == {"type": "string", "description": "the note's title"}
    assert add.description == "Save a note under a title."
    order = specs["list_notes"].parameters["properties"]["order"]
    assert order["enum"] == ["asc", "desc"] and order["default"] == "asc"
    assert specs["list_notes"].effect == "read" and specs["spin"].effect == "unknown"
    assert add.openai_schema()["function"]["parameters"]["type"] == "object"


def test_initial_config_loads_public_attributes_and_pydantic_state():
    env = ToolEnvironment(notebook_task())
    assert env.call("list_notes", {}) == '["old"]'
    assert env.snapshot() == {NOTEBOOK: {"book": {"notes": {"old": "x"}}}}  # last_seen is volatile
    with pytest.raises(ValueError, match="'pages', which is not a public attribute"):
        ToolEnvironment(notebook_task(initial_config={NOTEBOOK: {"pages": 3}}))


def test_reset_hook_gets_config_and_seed():
    task = Task.model_validate(
        {
            "id": "c",
            "category": "base",
            "environment": "toy_envs:Counter",
            "question": [[{"role": "user", "content": "count"}]],
            "ground_truth": [["increment(by=2)"]],
            "initial_config": {"toy_envs:Counter": {"start": 5}},
        }
    )
    env = ToolEnvironment(task)
    assert env.call("increment", {"by": 2}) == "7"
    env.reset(task.initial_config, seed=3)
    assert env.snapshot() == {"toy_envs:Counter": {"value": 5, "seed": 3}}


DESK = "validation_envs:Desk"


def test_a_constructor_that_takes_the_state_keeps_what_it_derives():
    """A class whose constructor takes the initial state as keyword arguments needs no `_reset`: it is called
    with the config, so what it derives (who borrowed what, the next member id) is there, in every copy."""
    from validation_envs import DESK_STATE, Desk

    from rods.envs.contract import template_for

    assert not hasattr(Desk, "_reset")
    task = Task.model_validate({
        "id": "desk", "category": "base", "environment": DESK,
        "question": [[{"role": "user", "content": "Sign up Ines Moreau and lend her Salt Road."}]],
        "ground_truth": [["add_member(name='Ines Moreau')", "lend_book(book_id='b1', member_id='m-3')"]],
        "initial_config": {DESK: DESK_STATE}})
    env = ToolEnvironment(task)
    assert env.instance(DESK).borrowed == {"m-1": [], "m-2": ["b2"]}  # derived from the books
    assert json.loads(env.call("add_member", {"name": "Ines Moreau"})) == {"member_id": "m-3"}  # m-1 is taken
    assert env.snapshot()[DESK]["members"] == {"m-1": "Hana Sato", "m-2": "Omar Haddad", "m-3": "Ines Moreau"}
    assert env.call("lend_book", {"book_id": "b1", "member_id": "m-3"}) == "b1 lent to m-3"
    assert env.snapshot()[DESK]["borrowed"] == {"m-1": [], "m-2": ["b2"], "m-3": ["b1"]}
    spawned = template_for(task).spawn()  # what the reward and the rollouts start from
    assert spawned.instance(DESK).borrowed == {"m-1": [], "m-2": ["b2"]}
    assert spawned.execute("add_member(name='Li Wei')") == '{"member_id": "m-3"}'
    assert score(task, [[list(task.ground_truth[0])]]).progress == 1.0
    assert DESK_STATE["members"] == {"m-1": "Hana Sato", "m-2": "Omar Haddad"}  # the config is not touched


def test_failures_are_error_results_never_exceptions():
    env = ToolEnvironment(notebook_task())
    assert env.call("add_note", {"title": "old", "text": "y"}) == "Error during execution: a note called 'old' exists"
    assert env.call("_secret", {}).startswith("Error during execution: name '_secret' is not defined")
    assert env.call("add_note", {"title": "t"}).startswith("Error during execution: ")  # missing argument
    assert env.execute("__import__('os').system('true')").startswith("Error during execution: ")
    assert json.loads(env.call("read_note", {"title": "old"})) == {"notes": {"old": "x"}}  # pydantic result as JSON


def test_a_tool_past_its_time_limit_is_stopped():
    env = ToolEnvironment(notebook_task())
    start = time.monotonic()
    result = env.call("spin", {})
    assert result == "Error during execution: spin ran past its time limit of 0.5 s"
    assert time.monotonic() - start < 5
    assert env.call("add_note", {"title": "after", "text": "ok"}) == "saved"  # the environment still works


def test_rollouts_are_isolated():
    task = notebook_task()
    a, b = ToolEnvironment(task), ToolEnvironment(task)
    a.call("add_note", {"title": "mine", "text": "a"})
    fork = a.fork()
    fork.call("add_note", {"title": "fork", "text": "f"})
    assert "mine" not in b.snapshot()[NOTEBOOK]["book"]["notes"]
    assert "fork" not in a.snapshot()[NOTEBOOK]["book"]["notes"]
    assert task.initial_config[NOTEBOOK]["book"]["notes"] == {"old": "x"}


def test_reward_scores_python_environments_by_state_and_results():
    task = notebook_task()
    gold = [[[c] for c in turn] for turn in task.ground_truth]
    assert score(task, gold).progress == 1.0
    wrong_text = [[["add_note(title='groceries', text='eggs')"], ["list_notes()"]], [["read_note(title='groceries')"]]]
    result = score(task, wrong_text)
    assert result.state_pass == [False, False] and result.progress == 0.0
    # a read-only tool touching a volatile attribute does not change the state check
    extra_read = [
        [["add_note(title='groceries', text='milk')"], ["list_notes(order='desc')"], ["list_notes()"]],
        [["read_note(title='groceries')"]],
    ]
    assert score(task, extra_read).progress == 1.0


def test_task_names_its_environment():
    assert notebook_task().involved_classes == [NOTEBOOK]
    with pytest.raises(ValidationError, match="neither 'bfcl' nor an import path"):
        notebook_task(environment="not a path", involved_classes=["x"])
    with pytest.raises(ValidationError, match="must be \\['toy_envs:Notebook'\\]"):
        notebook_task(involved_classes=["GorillaFileSystem"])
    with pytest.raises(ValueError, match="cannot import module 'no_such_module'"):
        ToolEnvironment(
            notebook_task(environment="no_such_module:X", involved_classes=["no_such_module:X"], initial_config={})
        )


def test_tool_decorator_checks_the_effect():
    with pytest.raises(ValueError, match="effect must be one of"):
        tool("delete")

    @tool
    def f() -> None: ...

    assert declared_effect(f) == "unknown"


SHELF = "toy_envs:Shelf"


def shelf_task() -> Task:
    return Task.model_validate({
        "id": "shelf", "category": "base", "environment": SHELF,
        "question": [[{"role": "user", "content": "Put 2 apples."}], [{"role": "user", "content": "How many pears?"}]],
        "ground_truth": [["put(item='apple', count=2)"], ["count(item='pear')"]],
        "initial_config": {SHELF: {"items": {"pear": 3}}},
    })


def test_a_protocol_only_environment_is_hosted_by_replay():
    from toy_envs import Shelf

    env = ToolEnvironment(shelf_task())
    assert [s.name for s in env.tools()] == ["put", "count"] and env.tools()[0].effect == "write"
    assert env.call("put", {"item": "apple", "count": 2}) == "ok"
    starts = Shelf.starts
    fork = env.fork()  # cannot be pickled: shares the live Shelf while both are in one state
    assert fork.snapshot() == env.snapshot() == {SHELF: {"state_snapshot": {"items": {"apple": 2, "pear": 3}}}}
    assert Shelf.starts == starts
    fork.call("put", {"item": "apple", "count": 1})  # the writer takes the Shelf over
    assert env.snapshot()[SHELF]["state_snapshot"]["items"]["apple"] == 2  # rebuilt: a new Shelf, calls replayed
    assert fork.snapshot()[SHELF]["state_snapshot"]["items"]["apple"] == 3
    assert Shelf.starts == starts + 1
    assert env.call("put", {"item": "fig", "count": 0}) == "Error during execution: count must be positive"
    assert env.execute("put('fig', 1)").startswith("Error during execution: put takes keyword arguments only")
    env.close()


def test_reward_scores_a_protocol_only_environment():
    task = shelf_task()
    assert score(task, [[[c] for c in turn] for turn in task.ground_truth]).progress == 1.0
    result = score(task, [[["put(item='apple', count=3)"]], [["count(item='pear')"]]])
    assert result.state_pass == [False, False] and result.progress == 0.0
