"""Shared synthesis fixtures: the API graph (learned once) and a stratified seed sample."""

import pytest

from rods.synth.api_graph import reference_graph


@pytest.fixture(scope="session")
def api_graph():
    return reference_graph("bfcl")


@pytest.fixture(scope="session")
def seeds_by_category(train_tasks):
    out = {}
    for task in train_tasks:
        out.setdefault(task.category, []).append(task)
    return out


def stratified(seeds_by_category, per_category, offset=0):
    """`per_category` seeds of each of the four categories, deterministic."""
    return [t for c in ("base", "miss_func", "miss_param", "long_context")
            for t in seeds_by_category[c][offset:offset + per_category]]
