"""BFCL's failures in shapes of its own are errors by its domain's convention (rods.envs.bfcl.errors)."""

from rods.envs.contract import environment_from
from rods.envs.domains import domain_of


def error(cls: str, result: str) -> str | None:
    return domain_of(cls).error_of(cls, result)


def test_failure_lists_and_refused_logins_are_errors():
    env = environment_from({}, ["TradingBot", "TicketAPI", "MessageAPI"])
    assert error("TradingBot", env.execute("get_watchlist()")) == (
        "Error: User not authenticated. Please log in to view the watchlist.")
    assert error("TradingBot", env.execute("get_order_history()")).startswith("User not authenticated")
    assert error("TicketAPI", env.execute("get_user_tickets()")).startswith("User not authenticated")
    assert error("MessageAPI", env.execute("message_login(user_id='nobody')")) == "User ID 'nobody' not found."


def test_answers_stay_answers():
    assert error("TradingBot", "['NVDA', 'AAPL']") is None
    assert error("TradingBot", "[]") is None
    assert error("TradingBot", "[{'id': 1}, {'error': 'x'}]") is None  # not every item failed
    assert error("MessageAPI", '{"login_status": true, "message": "ok"}') is None
    assert error("MessageAPI", '{"login_status": false}') is None  # the status query's answer
    assert error("TravelAPI", '{"verification_status": false, "verification_failure": "too young"}') is None
    assert error("TradingBot", "[__import__('os').system('true')]") is None  # read as a literal, never run


def test_no_gold_call_of_bfcl_is_an_error(bfcl_tasks):
    for task in bfcl_tasks[::20]:
        env = environment_from(task.initial_config, task.involved_classes, long_context=task.long_context)
        for call in (c for turn in task.ground_truth for c in turn):
            result = env.execute(call)
            owner = env.owners[call.split("(")[0]]
            assert error(owner, result) is None, (task.id, call, result)
