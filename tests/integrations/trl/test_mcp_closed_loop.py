"""The closed loop on an MCP server: GRPO steps with a tiny random model over rods' SQLite server, in memory.

rollouts on per-rollout servers -> rewards -> engine zones and seed selection ->
template synthesis of SQL tasks (free-text queries from the seeds' examples) ->
injection at the epoch boundary -> the next epoch trains on the injected task.

As in test_closed_loop.py, the seeds are chosen so a model that never calls a
tool lands some in the boundary zone: a task whose first turn has empty ground
truth (the user has not said enough yet) scores 1/3 for a silent rollout, a
one-turn task scores 0 (hard).
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mcp")

from mcp_envs import in_memory_sqlite

from rods.engine import DataEngine
from rods.engine.events import read_jsonl
from rods.envs.mcp import shutdown_all
from rods.tasks import Task, write_tasks
from rods.train import config_from_dict
from rods.train.run import train

pytestmark = pytest.mark.slow


def task(key: str, id_: str, category: str, questions: list[str], truth: list[list[str]]) -> Task:
    return Task.model_validate({
        "id": id_, "category": category, "environment": key, "involved_classes": [key],
        "initial_config": {key: {}}, "question": [[{"role": "user", "content": q}] for q in questions],
        "ground_truth": truth,
    })


@pytest.fixture()
def seeds(tmp_path):
    where = tmp_path / "sqlite"
    key = in_memory_sqlite(where)
    restock = "write_query(query=\"UPDATE products SET stock = 15 WHERE name = 'lamp'\")"
    price = "write_query(query=\"UPDATE products SET price = 13.5 WHERE name = 'stapler'\")"
    yield [
        task(key, "restock", "miss_param", ["Please restock a product for me.", "The lamp: 15 units.",
                                            "Which products have more than 10 in stock now?"],
             [[], [restock], ["read_query(query=\"SELECT name FROM products WHERE stock > 10\")"]]),
        task(key, "reprice", "miss_param", ["Change a price for me.", "The stapler should cost 13.5.",
                                            "What does the stapler cost now?"],
             [[], [price], ["read_query(query=\"SELECT price FROM products WHERE name = 'stapler'\")"]]),
        task(key, "out_of_stock", "base", ["Which products are out of stock?"],
             [["read_query(query=\"SELECT name FROM products WHERE stock = 0\")"]]),
    ]
    shutdown_all()


def test_closed_loop_on_an_mcp_server(tmp_path, tiny_model_dir, seeds):
    seeds_file = tmp_path / "seeds.jsonl"
    write_tasks(seeds_file, seeds)
    run_dir = tmp_path / "run"
    config = config_from_dict({
        "name": "mcp_loop",
        "output_dir": str(run_dir),
        "model": {"name_or_path": str(tiny_model_dir)},
        "data": {"seeds": str(seeds_file)},
        "rollout": {"max_steps_per_turn": 1, "max_reply_tokens": 4, "max_completion_tokens": 512,
                    "tool_docs": "signatures"},
        "grpo": {"num_generations": 2, "tasks_per_step": 2, "steps_per_epoch": 2, "max_steps": 4,
                 "save_steps": 4, "learning_rate": 1e-3},
        "engine": {"K": 2, "min_observations": 2, "burn_in_rollouts": 2, "burn_in_threshold": 0.0,
                   "max_seeds_per_step": 2, "quotas": {"basic": 1, "miss_func": 0, "miss_param": 1},
                   "exclusion_window": 1, "capacity": 8, "max_injection_fraction": 1.0},
        "synthesis": {"backend": "template", "wait_at_epoch_end": True},
    })
    summary = train(config)
    assert summary.steps == 4 and summary.epochs == 2

    events = read_jsonl(run_dir / "events.jsonl")
    assert {"select", "submit", "inject", "epoch_end"} <= {e["event"] for e in events}
    selected = {s["task_id"] for e in events if e["event"] == "select" for s in e["seeds"]}
    assert "out_of_stock" not in selected, "a hard task is never selected"
    assert selected & {"restock", "reprice"}, "boundary seeds are selected"
    injected = [e for e in events if e["event"] == "inject"]
    assert injected and injected[0]["step"] == 2, "injection at the first epoch boundary"
    new_id = injected[0]["task_id"]
    with DataEngine.resume(run_dir) as engine:
        variant = engine.task(new_id)
        assert variant.origin == "synthetic" and variant.environment == seeds[0].environment
        assert variant.provenance.parent_id in {"restock", "reprice"}
        calls = [c for turn in variant.ground_truth for c in turn]
        assert all(c.startswith(("read_query(", "write_query(", "create_table(", "list_tables(", "describe_table("))
                   for c in calls)
        assert engine.stats(new_id)["n_rewards"] >= 2, "the next epoch trained on the injected task"
        zones = engine.metrics(4)["zones"]
        assert zones["boundary"] >= 1 and zones["hard"] >= 1
    assert json.loads((run_dir / "summary.json").read_text())["steps"] == 4
