"""Fixtures for engine tests; the task helpers live in `engine_factory.py`."""

from __future__ import annotations

import pytest

from rods.tasks import Task

from engine_factory import CATEGORY_OF_TYPE, make_seeds, make_task, variant  # noqa: F401


@pytest.fixture
def seeds() -> list[Task]:
    return make_seeds(40)
