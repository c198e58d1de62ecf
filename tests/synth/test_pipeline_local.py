"""The local backend (transformers, the embedded SmolLM2) runs the whole pipeline.

Quality may be poor; the run must finish and account for every variant.
"""

import pytest

from rods.llm import make_backend
from rods.synth.pipeline import Pipeline
from rods.synth.profile import trace_task
from rods.synth.settings import SynthConfig

pytestmark = pytest.mark.slow


def test_pipeline_end_to_end_with_the_embedded_model(seeds_by_category, api_graph):
    llm = make_backend("local", temperature=0.0, max_tokens=64, json_repairs=0, timeout_s=300)
    seeds = [t for t in seeds_by_category["base"] if t.id == "multi_turn_base_50"]  # one turn, two calls
    pipeline = Pipeline(llm, SynthConfig(per_seed=1, workers=1, recast=0.0), graph=api_graph)
    accepted = pipeline(seeds)
    stats = pipeline.stats
    assert stats.variants == 1
    assert stats.accepted + sum(stats.rejections.values()) == 1, stats
    total = llm.stats.total
    assert total.chats >= 1 and total.completion_tokens > 0
    report = pipeline.report()
    assert report["llm"]["total"]["chats"] == total.chats
    for task in accepted:
        assert not trace_task(task).errors and task.provenance.backend.startswith("local")
    llm.close()
