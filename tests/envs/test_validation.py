"""Validation that can fail (rods.envs.validation): each way a gold call breaks, on each domain, said in one line.

Each case appends one broken call to the last turn of a valid task, so the
task's own calls stay as they were: the appended call must be the one and
only failure, of the right kind, named by turn and call, with its reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp_envs import in_memory_sqlite

from rods.envs.calls import ToolCall
from rods.envs.validation import CallFailure, argument_failure, describe, tool_check, validate_task
from rods.tasks import Task, bfcl_task, load_bfcl_tasks, read_tasks

ROOT = Path(__file__).resolve().parents[2]
DESK = "validation_envs:Desk"


def appended(task: Task, text: str, **over) -> Task:
    """`task` with `text` as one more gold call of its last turn (and any other fields replaced)."""
    truth = [list(turn) for turn in task.ground_truth]
    truth[-1].append(text)
    return Task.model_validate({**task.model_dump(), "ground_truth": truth, **over})


def desk_task(**over) -> Task:
    from validation_envs import DESK_STATE

    body = {"id": "desk-0", "category": "base", "environment": DESK,
            "question": [[{"role": "user", "content": "Is Salt Road in? Lend it to Hana."}],
                         [{"role": "user", "content": "Sign up Ines Moreau."}]],
            "ground_truth": [["book_details(book_id='b1')", "lend_book(book_id='b1', member_id='m-1')"],
                             ["add_member(name='Ines Moreau')"]],
            "initial_config": {DESK: DESK_STATE}}
    return Task.model_validate({**body, **over})


def bfcl_math_task() -> Task:
    return next(t for t in load_bfcl_tasks() if "MathAPI" in t.involved_classes and t.category == "base")


def tau2_task() -> Task:
    return read_tasks(ROOT / "examples" / "tau2_airline" / "train.jsonl")[0]


@pytest.fixture(scope="module")
def mcp_task(tmp_path_factory):
    from rods.envs.mcp import shutdown_all

    key = in_memory_sqlite(tmp_path_factory.mktemp("sqlite"))
    yield Task.model_validate({
        "id": "sql-0", "category": "base", "environment": key, "initial_config": {key: {}},
        "question": [[{"role": "user", "content": "Which products are out of stock?"}]],
        "ground_truth": [["read_query(query=\"SELECT name FROM products WHERE stock = 0\")"]]})
    shutdown_all()


#: domain -> (case, the appended call, the failure's kind, a fragment of its reason).
CASES = {
    "bfcl": [
        ("missing function", "no_such_function(x=1)", "unknown_function", "unknown function 'no_such_function'"),
        ("unknown argument", "mean(numbers=[1.0], weights=[1.0])", "schema",
         "unknown argument 'weights' (mean takes: numbers)"),
        ("missing argument", "mean()", "schema", "missing required argument 'numbers'"),
        ("wrong type", "mean(numbers='1, 2')", "schema", "argument 'numbers': '1, 2' is not of type 'array'"),
        ("raised exception", "power(base=0.0, exponent=-1.0)", "call_error",
         "the call fails: 0.0 cannot be raised to a negative power"),
        ("error result", "divide(a=1.0, b=0.0)", "call_error", "the call fails: Cannot divide by zero"),
    ],
    "python": [
        ("missing function", "lend(book_id='b1')", "unknown_function",
         "unknown function 'lend' (did you mean 'lend_book'?)"),
        ("unknown argument", "book_details(book_id='b1', shelf=3)", "schema", "unknown argument 'shelf'"),
        ("missing argument", "lend_book(book_id='b1')", "schema", "missing required argument 'member_id'"),
        ("wrong type", "renew(book_id='b1', weeks='two')", "schema",
         "argument 'weeks': 'two' is not of type 'integer'"),
        ("raised exception", "lend_book(book_id='b2', member_id='m-1')", "call_error",
         "the call fails: b2 is out with m-2"),
        ("error result", "book_details(book_id='b9')", "call_error", "the call fails: no book 'b9'"),
        ("the class's own convention", "renew(book_id='b1', weeks=6)", "call_error",
         "the call fails: at most 4 weeks"),
    ],
    # tau2's tools say every failure by raising (tau2 shows the agent "Error: ..."): no error objects
    "tau2": [
        ("missing function", "get_user(user_id='raj_sanchez_7340')", "unknown_function",
         "unknown function 'get_user'"),
        ("unknown argument", "get_user_details(user_id='raj_sanchez_7340', verbose=True)", "schema",
         "unknown argument 'verbose'"),
        ("missing argument", "get_user_details()", "schema", "missing required argument 'user_id'"),
        ("wrong type", "get_user_details(user_id=7340)", "schema",
         "argument 'user_id': 7340 is not of type 'string'"),
        ("raised exception", "get_user_details(user_id='nobody_0000')", "call_error",
         "the call fails: User nobody_0000 not found"),
        ("error result", "calculate(expression='1 / 0')", "call_error", "the call fails: division by zero"),
    ],
    # an MCP tool says failure by `isError`: an exception inside the tool, or a request it refuses
    "mcp": [
        ("missing function", "run_query(query='SELECT 1')", "unknown_function", "unknown function 'run_query'"),
        ("unknown argument", "read_query(query='SELECT 1', limit=5)", "schema", "unknown argument 'limit'"),
        ("missing argument", "read_query()", "schema", "missing required argument 'query'"),
        ("wrong type", "read_query(query=5)", "schema", "argument 'query': 5 is not of type 'string'"),
        ("raised exception", "read_query(query='SELECT * FROM nowhere')", "call_error",
         "OperationalError: no such table: nowhere"),
        ("error result", "write_query(query='SELECT 1')", "call_error",
         "write_query runs INSERT, UPDATE or DELETE only"),
    ],
}


def _task_of(domain: str, request) -> Task:
    return {"bfcl": bfcl_math_task, "python": desk_task, "tau2": tau2_task,
            "mcp": lambda: request.getfixturevalue("mcp_task")}[domain]()


@pytest.mark.parametrize(("domain", "case", "call", "kind", "reason"),
                         [(d, *c) for d, cases in CASES.items() for c in cases],
                         ids=[f"{d}: {c[0]}" for d, cases in CASES.items() for c in cases])
def test_each_broken_call_is_the_one_failure_in_one_line(domain, case, call, kind, reason, request):
    task = _task_of(domain, request)
    assert validate_task(task) == []  # the task as it is passes
    broken = appended(task, call)
    failures = validate_task(broken)
    turn, index = task.num_turns - 1, len(task.ground_truth[-1])
    assert [(f.kind, f.turn, f.call) for f in failures] == [(kind, turn, index)], failures
    line = describe(failures[0], broken.id, "seeds.jsonl:7")
    assert line.startswith(f"seeds.jsonl:7: task {broken.id}: turn {turn}, call {index} ")
    assert reason in line and "\n" not in line


def test_the_line_names_file_line_task_turn_call_and_reason():
    failures = validate_task(appended(desk_task(), "lend(book_id='b1')"))
    assert describe(failures[0], "desk-0", "desk.jsonl:3") == (
        "desk.jsonl:3: task desk-0: turn 1, call 1 lend(book_id='b1'): "
        "unknown function 'lend' (did you mean 'lend_book'?)")


def test_a_broken_bfcl_train_task_fails_where_a_replay_of_itself_scored_1():
    from rods.reward import score
    from rods.reward.perturb import replay

    task = bfcl_task("multi_turn_base_0")
    truth = [list(turn) for turn in task.ground_truth]
    truth[0][0] = "no_such_function(x=1)"
    broken = Task.model_validate({**task.model_dump(), "ground_truth": truth})
    assert score(broken, replay(broken)).progress == 1.0  # the old check: blind to it
    assert [(f.kind, f.turn, f.call) for f in validate_task(broken)][0] == ("unknown_function", 0, 0)


# -- expected errors ----------------------------------------------------------------------------------


def test_a_call_marked_as_expected_to_fail_must_fail():
    failing = "lend_book(book_id='b2', member_id='m-1')"  # b2 is out: it raises
    assert validate_task(appended(desk_task(), failing, expected_errors={"1": [1]})) == []
    marked_wrongly = validate_task(desk_task(expected_errors={"0": [0]}))  # book_details(b1) succeeds
    assert [(f.kind, f.turn, f.call) for f in marked_wrongly] == [("expected_error", 0, 0)]
    assert "marked as expected to fail (expected_errors) but it succeeded" in marked_wrongly[0].reason


def test_an_expected_failure_still_needs_a_real_function_and_its_schema():
    typo = appended(desk_task(), "lend_book(book_id='b2', member='m-1')", expected_errors={"1": [1]})
    assert [(f.kind, f.call) for f in validate_task(typo)] == [("schema", 1)]  # not passed off as the error


# -- determinism, loading, parsing ----------------------------------------------------------------------


def _single(cls: str, call: str) -> Task:
    return Task.model_validate({"id": f"{cls}-0", "category": "base", "environment": f"validation_envs:{cls}",
                                "question": [[{"role": "user", "content": "go"}]], "ground_truth": [[call]]})


def test_two_replays_must_give_the_same_results():
    failures = validate_task(_single("Lottery", "draw()"))
    assert [(f.kind, f.turn, f.call) for f in failures] == [("nondeterministic", 0, 0)]
    assert failures[0].reason.startswith("two replays return different results")
    assert validate_task(_single("Lottery", "draw()"), replays=1) == []


def test_two_replays_must_leave_the_same_state():
    failures = validate_task(_single("Stamper", "stamp()"))
    assert [(f.kind, f.turn, f.call) for f in failures] == [("nondeterministic", 0, None)]
    assert failures[0].reason == ("two replays leave different states (first at "
                                  "['validation_envs:Stamper']['stamps'][0])")
    assert describe(failures[0], "Stamper-0").startswith("task Stamper-0: turn 0: two replays")


def test_an_environment_that_does_not_load_is_one_failure_not_a_crash():
    bad = desk_task(initial_config={DESK: {"books": {}, "shelves": 3}})
    failures = validate_task(bad)
    assert [f.kind for f in failures] == ["environment"]
    assert "the environment cannot be run: ValueError" in failures[0].reason and "'shelves'" in failures[0].reason


def test_a_gold_call_that_is_not_a_call_is_named():
    failures = validate_task(appended(desk_task(), "lend_book(book_id=open('x'), member_id='m-1')"))
    assert [(f.kind, f.turn, f.call) for f in failures] == [("parse", 1, 1)]
    assert "must be a literal value" in failures[0].reason


# -- the schema check ----------------------------------------------------------------------------------

BFCL_STYLE = {"name": "f", "parameters": {"type": "dict", "required": ["x"], "properties": {
    "x": {"type": "any"}, "y": {"type": "float"}, "z": {"type": "tuple", "items": {"type": "integer"}},
    "w": {"type": "dict", "properties": {"n": {"type": "integer"}}}}}}


@pytest.mark.parametrize(("call", "reason"), [
    (ToolCall("f", {"x": {"any": ["thing"]}, "y": 3, "z": (1, 2), "w": {"n": 1}}), None),  # any, int as float
    (ToolCall("f", {"x": None, "z": [1, 2]}), None),
    (ToolCall("f", {}, ("first", 2.5)), None),  # positional arguments, in doc order
    (ToolCall("f", {"x": 1, "y": "3"}), "argument 'y': '3' is not of type 'number'"),
    (ToolCall("f", {"x": 1, "z": [1, "a"]}), "argument 'z'[1]: 'a' is not of type 'integer'"),
    (ToolCall("f", {"x": 1, "w": {"n": 1.5}}), "argument 'w'['n']: 1.5 is not of type 'integer'"),
    (ToolCall("f", {}, (1, "3")), "argument 'y': '3' is not of type 'number'"),
    (ToolCall("f", {"x": 2}, (1,)), "argument 'x' is given twice (by position and by name)"),
    (ToolCall("f", {}, (1, 2, (3,), {}, 5)), "f takes 4 argument(s), got 5 positional"),
])
def test_bfcl_types_positional_arguments_and_nesting(call, reason):
    assert argument_failure(call, tool_check(BFCL_STYLE)) == reason


def test_bfcl_positional_gold_maps_in_doc_order():
    task = bfcl_task("multi_turn_base_0")
    assert task.ground_truth[0][0] == "cd(folder='document')"

    def first_call(text: str) -> Task:
        truth = [list(turn) for turn in task.ground_truth]
        truth[0][0] = text
        return Task.model_validate({**task.model_dump(), "ground_truth": truth})

    assert validate_task(first_call("cd('document')")) == []  # `folder` by position
    wrong = validate_task(first_call("cd(3)"))
    assert [f.reason for f in wrong][0] == "argument 'folder': 3 is not of type 'string'"


def test_untyped_arguments_of_a_domain_keep_name_checks():
    doc = {"name": "close", "parameters": {"type": "dict", "required": ["ticket_id"],
                                           "properties": {"ticket_id": {"type": "integer"}}}}
    assert argument_failure(ToolCall("close", {"ticket_id": "t-1"}), tool_check(doc, {"ticket_id"})) is None
    assert argument_failure(ToolCall("close", {"ticket_id": "t-1"}), tool_check(doc)) is not None
    assert argument_failure(ToolCall("close", {"id": 1}), tool_check(doc, {"ticket_id"})) == (
        "unknown argument 'id' (close takes: ticket_id)")


def test_a_tool_with_keyword_arguments_takes_any_name():
    doc = {"name": "g", "parameters": {"type": "object", "properties": {"a": {"type": "string"}},
                                       "required": [], "additionalProperties": True}}
    assert argument_failure(ToolCall("g", {"a": "x", "extra": 1}), tool_check(doc)) is None


def test_a_schema_that_is_not_json_schema_is_named():
    doc = {"name": "h", "parameters": {"type": "dict", "properties": {"a": {"type": 7}}}}
    reason = argument_failure(ToolCall("h", {"a": 1}), tool_check(doc))
    assert reason is not None and reason.startswith("the schema of h is not valid JSON Schema")


def test_failures_compare_as_values():
    assert CallFailure("schema", "r", 0, 1, "f()") == CallFailure("schema", "r", 0, 1, "f()")
