"""Shared fixtures, the rule that CI fails when a server test could not run, and one thread per worker."""

import os
import re

# pytest-xdist workers that together fill the cores get one math thread each (torch and its subprocesses):
# two workers with two threads each on two cores oversubscribe, and a run of the torch-heavy tests took
# 122-141 s at the default and 103 s at one thread (docs/results/test_suite.md). llama.cpp's test server
# gets as many threads; vLLM's chooses its own.
from servers.llama import WORKER_THREAD_VARS, threads_per_worker

_THREADS = threads_per_worker()
if _THREADS:
    for _name in WORKER_THREAD_VARS:
        os.environ.setdefault(_name, str(_THREADS))

import pytest
from hypothesis import settings

# Hypothesis' default 200 ms deadline per example is a wall-clock bound: on a shared
# machine it fails tests for their neighbours' load. Examples are judged on behaviour only.
settings.register_profile("rods", deadline=None)
settings.load_profile("rods")

from rods.tasks import load_bfcl_tasks, load_split

# Test servers (scripted OpenAI endpoint, llama.cpp and vLLM servers): see tests/servers/.
from servers.fixtures import llama_server, scripted_openai_server, vllm_server  # noqa: E402,F401


@pytest.fixture(scope="session", autouse=True)
def _rods_cache_in_tmp(tmp_path_factory):
    """`rods reward`'s ground-truth cache goes to a folder of this session, never `~/.cache`."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RODS_CACHE_DIR", str(tmp_path_factory.mktemp("rods-cache")))
        yield


@pytest.fixture(scope="session")
def bfcl_tasks():
    """All 800 BFCL multi-turn tasks."""
    return load_bfcl_tasks()


@pytest.fixture(scope="session")
def train_tasks():
    return load_split("train")


# -- CI: a test that needs llama.cpp, vLLM or verl must run, not be skipped ---------

#: Skip reasons that mean "a server dependency is missing" (its install failed).
SERVER_SKIP = re.compile(r"llama[-_.]cpp|\bvllm\b|\bverl\b|\bray\b|make llama|install_verl", re.IGNORECASE)


def _servers_required() -> bool:
    """`make test` sets RODS_REQUIRE_SERVERS=1: it installs llama.cpp, vLLM and verl first, so they must be there."""
    return os.environ.get("RODS_REQUIRE_SERVERS") == "1"


def _skip_reason(longrepr) -> str:
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _fail_server_skip(report) -> None:
    reason = _skip_reason(report.longrepr)
    if report.skipped and _servers_required() and SERVER_SKIP.search(reason):
        report.outcome = "failed"
        report.longrepr = (
            f"{reason}\nRODS_REQUIRE_SERVERS=1: a test that needs llama.cpp, vLLM or verl was skipped; "
            "its install failed or is missing (make llama / make vllm / make verl)."
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _fail_server_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _fail_server_skip(outcome.get_result())  # module-level importorskip("verl") skips at collection


# -- two workers (pytest-xdist, `make test`): each server starts once --------------------------------

#: Session fixtures that start a server: the tests using one run on one worker (`--dist loadgroup`), so it
#: starts once per run, not once per worker.
SERVER_FIXTURES = {"vllm_server": "vllm", "llama_server": "llama"}


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups into the node ids
def pytest_collection_modifyitems(config, items):
    for item in items:
        for fixture, group in SERVER_FIXTURES.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(pytest.mark.xdist_group(name=group))
                break


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    """Refuse to run when xdist could not group: every worker would start its own vLLM server."""
    if not getattr(session.config.option, "loadgroup", False):  # set on xdist workers only
        return
    ungrouped = [item.nodeid for item in session.items
                 if any(item.iter_markers("xdist_group")) and "@" not in item.nodeid]
    if ungrouped:
        raise pytest.UsageError(f"--dist loadgroup did not group {ungrouped[0]} (and {len(ungrouped) - 1} more): "
                                "this pytest and pytest-xdist do not work together (see the dev extra's pins)")

