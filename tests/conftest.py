"""Shared fixtures."""

import pytest

from rods.tasks import load_bfcl_tasks, load_split

# Test servers (scripted OpenAI endpoint, llama.cpp server): see tests/servers/.
from servers.fixtures import llama_server, scripted_openai_server  # noqa: E402,F401


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
