"""Shared fixtures."""

import pytest

from rods.tasks import load_bfcl_tasks, load_split


@pytest.fixture(scope="session")
def bfcl_tasks():
    """All 800 BFCL multi-turn tasks."""
    return load_bfcl_tasks()


@pytest.fixture(scope="session")
def train_tasks():
    return load_split("train")
