"""Shared synthesis fixtures: the API graph (learned once), a stratified seed sample, the template population."""

from dataclasses import dataclass

import pytest

from rods.llm import make_backend
from rods.synth.api_graph import reference_graph
from rods.synth.pipeline import Pipeline
from rods.synth.settings import SynthConfig
from rods.tasks import Task

#: Tests that read the template population run on one worker (`--dist loadgroup`), so it is synthesized once.
POPULATION = pytest.mark.xdist_group("template_population")


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


@dataclass
class Population:
    seeds: list[Task]
    accepted: list[Task]
    pipeline: Pipeline
    report: dict  # the pipeline's report right after this batch (tests may run the pipeline again)


@pytest.fixture(scope="session")
def template_population(seeds_by_category, api_graph) -> Population:
    """40 stratified train seeds x 3 template variants (seed 7): the population the issue's bars are read on."""
    seeds = stratified(seeds_by_category, 10)
    pipeline = Pipeline(make_backend("template"), SynthConfig(per_seed=3, workers=2, seed=7, recast=0.0),
                        graph=api_graph)
    accepted = pipeline(seeds)
    return Population(seeds, accepted, pipeline, pipeline.report())
