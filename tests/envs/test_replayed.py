"""Copies of a protocol environment share one live server while in the same state (rods.envs.replayed).

In memory (rods' SQLite server built in this process): a copy made by pickling
starts on its original's server, the first copy that writes takes it over, and
every copy, whatever the order of reads, writes and copies, reads exactly the
state its own calls lead to (checked against a fresh replay of its calls).
"""

from __future__ import annotations

import pickle

import pytest

pytest.importorskip("mcp")

from hypothesis import HealthCheck, given, settings, strategies as st
from mcp_envs import in_memory_sqlite

from rods.envs import replayed
from rods.envs.mcp import shutdown_all
from rods.envs.replayed import ReplayedEnvironment


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    where = tmp_path_factory.mktemp("sqlite")
    yield in_memory_sqlite(where)
    shutdown_all()


def copy(env: ReplayedEnvironment) -> ReplayedEnvironment:
    return pickle.loads(pickle.dumps(env))


def stock(env: ReplayedEnvironment, name: str) -> int:
    rows = env.rods_state()["state_snapshot"]["sqlite"]["products"]["rows"]
    return next(row[3] for row in rows if row[1] == name)


def test_a_copy_shares_the_server_until_one_writes(key):
    original = ReplayedEnvironment(key, {})
    twin = copy(original)
    assert twin._host is original._host  # no new server for a copy
    assert twin.read_query(query="SELECT name FROM products WHERE stock = 0") == '[{"name": "lamp"}]'
    assert twin._host is original._host  # a read keeps sharing
    twin.write_query(query="UPDATE products SET stock = 7 WHERE name = 'lamp'")
    assert stock(twin, "lamp") == 7
    assert stock(original, "lamp") == 0  # the original rebuilt its own state by replay
    assert twin._host is not original._host
    twin.close()
    original.close()


def test_copies_of_a_copy_made_after_a_write_start_from_that_write(key):
    env = ReplayedEnvironment(key, {})
    env.write_query(query="UPDATE products SET stock = 3 WHERE name = 'pen'")
    later = copy(env)
    assert later._host is env._host
    assert stock(later, "pen") == 3
    env.close()
    assert stock(later, "pen") == 3  # the server stays while one copy uses it
    later.close()


WRITES = [f"UPDATE products SET stock = {n} WHERE name = '{p}'" for n in (1, 2, 3) for p in ("pen", "lamp")]
OPERATIONS = st.lists(st.tuples(st.sampled_from(["copy", "read", "write", "close"]), st.integers(0, 3),
                                st.sampled_from(WRITES)), min_size=1, max_size=12)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(OPERATIONS)
def test_every_copy_reads_the_state_its_own_calls_lead_to(key, operations):
    envs = [ReplayedEnvironment(key, {})]
    for op, which, write in operations:
        env = envs[which % len(envs)]
        if op == "copy":
            envs.append(copy(env))
        elif op == "read":
            env.read_query(query="SELECT stock FROM products")
        elif op == "write":
            env.write_query(query=write)
        elif len(envs) > 1:
            envs.remove(env)
            env.close()
    for env in envs:
        fresh = ReplayedEnvironment(key, {}, None, tuple(env._calls))
        assert env.rods_state() == fresh.rods_state()
        fresh.close()
    for env in envs:
        env.close()
    assert not replayed._HOSTS  # the last user of a server gave it back


def test_a_write_that_fails_without_changing_the_state_keeps_sharing(key):
    original = ReplayedEnvironment(key, {})
    original.rods_state()  # the state the failed call is compared with
    twin = copy(original)
    assert twin.write_query(query="UPDATE no_such_table SET x = 1").startswith("Error during execution")
    assert twin._host is original._host and stock(original, "lamp") == 0
    again = copy(twin)  # the failed call is in the recipe, not in the state's name
    assert again._host is original._host
    twin.write_query(query="UPDATE products SET stock = 2 WHERE name = 'lamp'")
    assert stock(twin, "lamp") == 2 and stock(again, "lamp") == 0 and stock(original, "lamp") == 0
    for env in (original, twin, again):
        env.close()


def test_a_tool_argument_called_name_reaches_the_environment():
    env = ReplayedEnvironment("broken_envs:Forgiving", {})
    assert env.increment(name="a") == "1"
    assert env.state_snapshot == {"counts": {"a": 1}}
