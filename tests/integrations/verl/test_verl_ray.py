"""rods on verl + Ray, end to end on CPU: one local Ray cluster for the whole module.

- the engine actor gets rewards, ends steps, runs epoch boundaries, and resumes
  its state after `ray.kill`;
- the registered `rods_multiturn` agent loop (instantiated from verl's registry
  as verl's AgentLoopWorker does) plays real multi-turn BFCL tasks against
  stand-ins for verl's server manager (a tiny local transformers model, and a
  ground-truth player), masks tool/user tokens, and reports rewards to the actor;
- the `data.custom_cls` dataset, under verl's own sampler and collate function,
  re-reads the pool at the epoch boundary and serves the injected tasks;
- Ray synthesis workers call an OpenAI-compatible endpoint (a scripted HTTP
  server) for each selected seed and their variants reach the engine's queue.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from pathlib import Path

import pytest

pytest.importorskip("verl", reason="verl is not installed (scripts/install_verl_cpu.sh)")
ray = pytest.importorskip("ray")

from hydra import compose, initialize_config_dir  # noqa: E402

from rods.integrations.verl.engine_actor import RemoteEngine, forget_engine_actor  # noqa: E402
from rods.integrations.verl.settings import RodsVerlSettings, VerlSynthesisSettings  # noqa: E402

HERE = Path(__file__).resolve().parent
CONFIG_DIR = HERE.parents[2] / "configs" / "verl"
from verl_variants import make_variant  # noqa: E402

pytestmark = pytest.mark.slow

SMALL_ENGINE = {"K": 2, "min_observations": 2, "burn_in_rollouts": 2, "burn_in_threshold": 0.0, "exclusion_window": 1}


@pytest.fixture(scope="module")
def ray_cluster():
    """One local Ray cluster for every test here; workers can import the test helpers."""
    path = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])
    ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": {"PYTHONPATH": path}}, logging_level="ERROR")
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def seeds(train_tasks):
    by_id = {t.id: t for t in train_tasks}
    picked = ["multi_turn_base_100", "multi_turn_miss_func_132", "multi_turn_miss_func_104"]
    others = [t.id for t in train_tasks if t.category in ("base", "miss_param") and t.id not in picked][:7]
    return [by_id[i] for i in picked + others]


def settings_for(tmp_path, name, **extra) -> RodsVerlSettings:
    return RodsVerlSettings(
        run_dir=str(tmp_path / name),
        engine_actor=f"engine-{name}",
        namespace="rods-test",
        engine=dict(SMALL_ENGINE),
        **extra,
    )


def test_engine_actor_takes_rewards_and_resumes_after_kill(ray_cluster, seeds, tmp_path):
    settings = settings_for(tmp_path, "resume")
    engine = RemoteEngine.connect(settings, seeds)
    a, b = seeds[0].id, seeds[1].id
    assert engine.begin_step(1) == 0
    assert engine.report("g1", a, 1.0, 2) is None  # waits for the group's second reward
    assert engine.stats(a)["n_rewards"] == 0
    assert engine.report("g1", a, 0.0, 2) == "boundary"
    assert engine.stats(a)["rewards"] == [1.0, 0.0]
    engine.report("g2", b, 0.25, 2)  # a group cut short: observed when its step ends
    engine.begin_step(2)
    assert engine.stats(b)["rewards"] == [0.25]
    assert engine.metrics()["partial_groups"] == 1
    accepted = engine.submit([make_variant(seeds[0], 1), make_variant(seeds[2], 1)])
    assert len(accepted.accepted) == 2
    result = engine.end_epoch(2)
    injected = result["report"]["injected"]
    assert injected and set(injected) <= {f"{a}__v1", f"{seeds[2].id}__v1"}
    assert [t.id for t in result["tasks"]] == [t.id for t in seeds] + injected
    before = engine.state_dict()

    ray.kill(engine.handle)
    forget_engine_actor(settings.engine_actor, settings.namespace)
    deadline = time.monotonic() + 30
    while True:  # the name is released asynchronously after the kill
        try:
            revived = RemoteEngine.connect(settings)  # no seeds: everything comes from run_dir
            after = revived.state_dict()
            break
        except ray.exceptions.RayActorError:
            forget_engine_actor(settings.engine_actor, settings.namespace)
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    assert after == before
    assert revived.current_step() == 2
    assert [t.id for t in revived.active_tasks()] == [t.id for t in result["tasks"]]
    assert revived.stats(a)["rewards"] == [1.0, 0.0]
    ray.kill(revived.handle)


def trainer_config(tmp_path, name, **over):
    overrides = [
        "actor_rollout_ref.rollout.n=2",
        "actor_rollout_ref.rollout.prompt_length=32768",
        "actor_rollout_ref.rollout.response_length=4096",
        f"rods.run_dir={tmp_path / name}",
        f"rods.engine_actor=engine-{name}",
        "rods.namespace=rods-test",
        "rods.synthesis=null",
        *[f"+rods.engine.{k}={v}" for k, v in SMALL_ENGINE.items() if k != "K"],
        *[f"{k}={v}" for k, v in over.items()],
    ]
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
        return compose(config_name="paper_qwen3_4b", overrides=overrides)


def run_agent_loops(cfg, tokenizer, server, rows):
    """Instantiate the registered loop per trajectory, as verl's AgentLoopWorker does, and run them."""
    import hydra
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap, _agent_loop_registry

    for entry in OmegaConf.load(CONFIG_DIR / "agent_loops.yaml"):  # what agent_loop_config_path does
        _agent_loop_registry[entry.name] = entry

    async def one(row):
        loop = hydra.utils.instantiate(
            _agent_loop_registry[row["agent_name"]],
            trainer_config=DictConfigWrap(cfg),
            server_manager=server,
            tokenizer=tokenizer,
            processor=None,
            hf_model_type="qwen2",
            dataset_cls=None,
            data_config=DictConfigWrap(cfg.data),
            tools=ToolListWrap([]),
        )
        return await loop.run({"temperature": 1.0, "top_p": 1.0}, **row)

    async def all_rows():
        return await asyncio.gather(*(one(r) for r in rows))

    return asyncio.run(all_rows())


def runs(mask, ids):
    """Contiguous runs of `ids` where `mask` is 1 and where it is 0."""
    ones, zeros, cur, cur_bit = [], [], [], None
    for m, i in zip(mask, ids):
        if m != cur_bit and cur:
            (ones if cur_bit else zeros).append(cur)
            cur = []
        cur_bit = m
        cur.append(i)
    if cur:
        (ones if cur_bit else zeros).append(cur)
    return ones, zeros


class Recording:
    """Wraps a stand-in server and records every reply's token ids."""

    def __init__(self, server):
        self.server, self.replies = server, []

    async def generate(self, request_id, **kw):
        out = await self.server.generate(request_id, **kw)
        self.replies.append(list(out.token_ids))
        return out


def test_agent_loop_plays_bfcl_tasks_masks_and_reports(ray_cluster, seeds, tmp_path):
    from rods.integrations.verl.dataset import task_row

    from verl_tiny import GoldServerManager, TinyServerManager, tiny_model, tiny_tokenizer

    cfg = trainer_config(tmp_path, "loop")
    settings = RodsVerlSettings.from_trainer_config(cfg)
    engine = RemoteEngine.connect(settings, seeds)
    engine.begin_step(1)
    short, reveal = seeds[0], seeds[1]  # 2 turns; 3 turns with a function reveal
    tok = tiny_tokenizer([short, reveal])

    # K=2 ground-truth rollouts of the reveal task: reward 1, exact masks.
    gold = Recording(GoldServerManager(tok, [reveal]))
    uid = uuid.uuid4().hex
    rows = [dict(task_row(reveal, 0, report=True), uid=uid) for _ in range(2)]
    outs = run_agent_loops(cfg, tok, gold, rows)
    for out in outs:
        assert out.reward_score == 1.0
        assert out.extra_fields["rods_turn_verdicts"] == [True, True, True]
        assert len(out.response_ids) == len(out.response_mask)
        ones, zeros = runs(out.response_mask, out.response_ids)
        assert all(run in gold.replies for run in ones)  # mask 1 = exactly what the server generated
        assert len(ones) == len(gold.replies) // 2
        context = tok.decode([i for run in zeros for i in run])
        assert "<|im_start|>tool" in context and "<|im_start|>user" in context  # tool results and user turns: 0
        assert "I have updated some more functions" in context  # the reveal turn, as BFCL words it
        assert out.prompt_ids == tok.apply_chat_template(
            [
                {
                    "role": "system",
                    "content": tok.decode(out.prompt_ids).split("<|im_start|>system\n")[1].split("<|im_end|>")[0],
                },
                {"role": "user", "content": reveal.question[0][0].content},
            ],
            add_generation_prompt=True,
            tokenize=True,
            return_dict=False,
        )
    assert engine.stats(reveal.id)["rewards"] == [1.0, 1.0]
    # The incremental token stream is the chat template's rendering of the whole episode.
    from rods.rollout.episode import Episode, EpisodeOptions

    episode = Episode(reveal, EpisodeOptions(tools_in_prompt=True))
    for run in runs(outs[0].response_mask, outs[0].response_ids)[0]:
        episode.advance(tok.decode(run, skip_special_tokens=True))
    assert episode.done
    rendered = tok.apply_chat_template(episode.messages, tokenize=False)
    assert tok.decode(outs[0].prompt_ids + outs[0].response_ids) + "\n" == rendered

    # A group of the short task: one rollout by the tiny random model, one by the gold player.
    model = tiny_model(len(tok))
    uid = uuid.uuid4().hex
    row = dict(task_row(short, 0, report=True), uid=uid)
    (sampled,) = run_agent_loops(cfg, tok, TinyServerManager(tok, model, max_new_tokens=6), [row])
    assert 0.0 <= sampled.reward_score <= 1.0
    assert sum(sampled.response_mask) >= 2 and 0 in sampled.response_mask  # generated + next user turn
    assert engine.stats(short.id)["n_rewards"] == 0  # the group is not complete yet
    (played,) = run_agent_loops(cfg, tok, GoldServerManager(tok, [short]), [row])
    assert played.reward_score == 1.0
    assert sorted(engine.stats(short.id)["rewards"]) == sorted([sampled.reward_score, 1.0])
    ray.kill(engine.handle)


def test_dataset_rereads_pool_at_epoch_boundary(ray_cluster, seeds, tmp_path):
    from torchdata.stateful_dataloader import StatefulDataLoader
    from verl.trainer.ppo.utils import create_rl_sampler
    from verl.utils.dataset.rl_dataset import collate_fn

    from rods.integrations.verl.dataset import RodsTaskDataset

    cfg = trainer_config(tmp_path, "data", **{"data.train_batch_size": 4})
    settings = RodsVerlSettings.from_trainer_config(cfg)
    engine = RemoteEngine.connect(settings, seeds)
    dataset = RodsTaskDataset.from_config(cfg)
    assert len(dataset) == 10
    loader = StatefulDataLoader(dataset, batch_size=4, drop_last=True, collate_fn=collate_fn,
                                sampler=create_rl_sampler(cfg.data, dataset))
    assert len(loader) == 2
    served = []
    for batch in loader:  # epoch 1: the trainer rolls out each batch and the loop reports rewards
        assert set(batch["agent_name"]) == {"rods_multiturn"}
        for info in batch["extra_info"]:
            served.append(info["task_id"])
            engine.report(f"{dataset.step}:{info['task_id']}", info["task_id"], 0.5, 2)
            engine.report(f"{dataset.step}:{info['task_id']}", info["task_id"], 0.0, 2)
        if len(served) == 4:  # synthesis delivers variants mid-epoch; they wait in the queue
            engine.submit([make_variant(seeds[0], 7), make_variant(seeds[3], 7), make_variant(seeds[4], 7)])
            assert [t.id for t in engine.active_tasks()] == [t.id for t in seeds]  # nothing injected mid-epoch
        dataset.on_batch_end(batch)  # verl's trainer, after each step: the epoch's last one runs the boundary
    assert len(served) == 8 and dataset.epoch == 1 and engine.current_step() == 2
    injected = dataset.last_report["injected"]
    assert len(injected) == 2 and len(dataset) == 12  # at most 20% of the active pool per injection

    second = []
    for batch in loader:
        second += [info["task_id"] for info in batch["extra_info"]]
        dataset.on_batch_end(batch)
    assert dataset.epoch == 2 and engine.current_step() == 5
    assert all(engine.stats(t)["n_groups"] >= 1 for t in set(served))
    assert len(second) == 12 and set(injected) <= set(second)  # the new epoch serves the injected tasks
    # the second epoch's boundary (after step 5) let the last variant join
    variants = {f"{seeds[i].id}__v7" for i in (0, 3, 4)}
    assert len(dataset) == 13 and dataset.last_report["injected"] == sorted(variants - set(injected))
    ray.kill(engine.handle)


def test_ray_synthesis_workers_call_the_endpoint_and_fill_the_queue(
    ray_cluster, seeds, tmp_path, scripted_openai_server
):
    # each endpoint call stalls a little, so a blocking hand-off would be visible
    scripted_openai_server.script([], default={"content": "A trader rebalances before the close.", "sleep": 2.0})
    synthesis = VerlSynthesisSettings(
        num_workers=2, backend="openai", base_url=scripted_openai_server.base_url, model="scripted-model",
        num_cpus=0, factory="verl_variants:narrative_variants", backend_kwargs={"max_retries": 1},
    )
    settings = settings_for(tmp_path, "synth", synthesis=synthesis)
    engine = RemoteEngine.connect(settings, seeds)
    engine.begin_step(1)
    for task in seeds[:3]:  # three boundary tasks (mean 0.5)
        engine.report(f"g-{task.id}", task.id, 1.0, 2)
        engine.report(f"g-{task.id}", task.id, 0.0, 2)
    assert engine.begin_step(2) == 3  # seeds selected and handed to the workers...
    early = engine.metrics()
    assert early["synthesis_pending"] == 3 and early["queue"] == 0  # ...and the step ended before they finished
    deadline = time.monotonic() + 60
    while engine.metrics()["queue"] < 3 and time.monotonic() < deadline:
        time.sleep(0.5)
    metrics = engine.metrics()
    assert metrics["queue"] == 3 and metrics["synthesis_produced"] == 3 and metrics["synthesis_failures"] == 0
    assert len(scripted_openai_server.requests) == 3
    report = engine.end_epoch(2)["report"]
    assert len(report["injected"]) == 2  # 20% of 10, in the order the variants arrived
    assert set(report["injected"]) <= {f"{t.id}__v1" for t in seeds[:3]}
    ray.kill(engine.handle)


def test_verls_agent_loop_worker_runs_a_pool_batch_and_rewards_reach_the_engine(ray_cluster, seeds, tmp_path):
    """verl's own AgentLoopWorker (registry file, HFModelConfig, postprocess) on a batch of the live pool."""
    import numpy as np
    from torchdata.stateful_dataloader import StatefulDataLoader
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.protocol import DataProto
    from verl.trainer.ppo.utils import create_rl_sampler
    from verl.utils.dataset.rl_dataset import collate_fn

    from rods.integrations.verl.dataset import RodsTaskDataset

    from verl_tiny import GoldServerManager, save_tiny_checkpoint, tiny_tokenizer

    tok = tiny_tokenizer(seeds)
    save_tiny_checkpoint(tok, tmp_path / "model")
    cfg = trainer_config(
        tmp_path, "worker",
        **{
            "data.train_batch_size": 4,
            "actor_rollout_ref.model.path": str(tmp_path / "model"),
            "actor_rollout_ref.rollout.agent.agent_loop_config_path": str(CONFIG_DIR / "agent_loops.yaml"),
        },
    )
    engine = RemoteEngine.connect(RodsVerlSettings.from_trainer_config(cfg), seeds)
    dataset = RodsTaskDataset.from_config(cfg)
    loader = StatefulDataLoader(dataset, batch_size=4, drop_last=True, collate_fn=collate_fn,
                                sampler=create_rl_sampler(cfg.data, dataset))
    batch = DataProto.from_single_dict(next(iter(loader)))  # what verl's fit loop does
    batch.non_tensor_batch["uid"] = np.array([uuid.uuid4().hex for _ in range(len(batch))], dtype=object)
    batch = batch.repeat(repeat_times=2, interleave=True)
    batch.meta_info["global_steps"] = 1

    async def generate():
        worker = AgentLoopWorker(cfg, llm_client=GoldServerManager(tok, seeds))
        return await worker.generate_sequences(batch)

    out = asyncio.run(generate())
    scores = out.batch["rm_scores"].sum(-1).tolist()
    assert out.batch["responses"].shape == out.batch["response_mask"].shape == (8, 4096)
    assert list(out.non_tensor_batch["rods_progress"]) == scores
    assert np.mean(scores) > 0.9  # ground-truth play
    task_ids = list(out.non_tensor_batch["rods_task_id"])
    assert task_ids == [i["task_id"] for i in batch.non_tensor_batch["extra_info"]]
    for task_id in set(task_ids):  # each group's two rewards reached the engine actor
        mine = [s for t, s in zip(task_ids, scores) if t == task_id]
        assert engine.stats(task_id)["rewards"] == mine
    ray.kill(engine.handle)


def test_ray_synthesis_workers_run_rods_pipeline(ray_cluster, seeds, tmp_path):
    """The default factory: rods' five-stage pipeline (model-free template backend) inside a Ray worker."""
    synthesis = VerlSynthesisSettings(num_workers=1, backend="template", num_cpus=0)
    settings = settings_for(tmp_path, "pipeline", synthesis=synthesis)
    engine = RemoteEngine.connect(settings, seeds)
    engine.begin_step(1)
    base = [t for t in seeds if t.category == "base"][:2]
    for task in base:
        engine.report(f"g-{task.id}", task.id, 1.0, 2)
        engine.report(f"g-{task.id}", task.id, 0.0, 2)
    assert engine.begin_step(2) == 2
    deadline = time.monotonic() + 90
    while engine.metrics()["synthesis_pending"] and time.monotonic() < deadline:
        time.sleep(0.5)
    metrics = engine.metrics()
    assert metrics["synthesis_failures"] == 0 and metrics["queue"] == metrics["synthesis_produced"] >= 1
    report = engine.end_epoch(2)["report"]
    variants = [t for t in engine.active_tasks() if t.id in report["injected"]]
    assert variants and all(
        v.origin == "synthetic" and v.provenance.parent_id in {t.id for t in base} for v in variants
    )
    # Seeds were selected at step 1 and again when end_epoch finished step 2; synthesis is
    # asynchronous and the pool injects the newest candidates first, so either step may show.
    assert {v.provenance.step_created for v in variants} <= {1, 2}, [v.provenance.step_created for v in variants]
    ray.kill(engine.handle)
