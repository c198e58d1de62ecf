"""Shared fixtures."""

import pytest

from rods.tasks import load_bfcl_tasks, load_split

# Test servers (scripted OpenAI endpoint, llama.cpp server): see tests/servers/.
from servers.fixtures import llama_server, scripted_openai_server  # noqa: E402,F401


@pytest.fixture(scope="session")
def bfcl_tasks():
    """All 800 BFCL multi-turn tasks."""
    return load_bfcl_tasks()


@pytest.fixture(scope="session")
def train_tasks():
    return load_split("train")
