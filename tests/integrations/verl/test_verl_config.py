"""configs/verl load and validate with verl 0.9.1's own config machinery (hydra + dataclass configs)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("verl", reason="verl is not installed (scripts/install_verl_cpu.sh)")

from hydra import compose, initialize_config_dir  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

from rods.integrations.verl.settings import AGENT_NAME, POOL_SOURCE, RodsVerlSettings, check_against_verl  # noqa: E402

CONFIG_DIR = Path(__file__).resolve().parents[3] / "configs" / "verl"
EXPERIMENTS = ["paper_qwen3_4b"] + sorted(f"ablations/{p.stem}" for p in (CONFIG_DIR / "ablations").glob("*.yaml"))
TRL_ABLATIONS = sorted(p.stem for p in (CONFIG_DIR.parent / "ablations").glob("*.yaml"))


def load(name: str, overrides: list[str] | None = None):
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
        return compose(config_name=name, overrides=overrides or [])


@pytest.fixture(scope="module")
def configs():
    with initialize_config_dir(config_dir=str(CONFIG_DIR), version_base=None):
        return {name: compose(config_name=name) for name in EXPERIMENTS}


def test_verl_is_the_pinned_cpu_install():
    import torch
    import verl

    assert verl.__version__ == "0.9.1"
    assert torch.__version__.startswith("2.13.0") and not torch.cuda.is_available()
    # the modules rods builds on import without vLLM
    import verl.experimental.agent_loop.agent_loop  # noqa: F401
    import verl.trainer.ppo.ray_trainer  # noqa: F401
    import verl.utils.dataset.rl_dataset  # noqa: F401
    import verl.workers.reward_manager  # noqa: F401


def test_every_experiment_passes_verls_validation(configs):
    from verl.trainer.config import AlgoConfig
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config
    from verl.workers.config import RolloutConfig

    assert {f"ablations/{name}" for name in TRL_ABLATIONS} <= set(configs)  # every TRL experiment has a verl twin
    for name, cfg in configs.items():
        OmegaConf.resolve(cfg)
        validate_config(cfg, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg))
        rollout = omega_conf_to_dataclass(cfg.actor_rollout_ref.rollout)
        assert isinstance(rollout, RolloutConfig), name
        assert rollout.agent.default_agent_loop == AGENT_NAME and rollout.multi_turn.enable, name
        assert isinstance(omega_conf_to_dataclass(cfg.algorithm), AlgoConfig)
        assert cfg.algorithm.adv_estimator == "grpo"
        settings = RodsVerlSettings.from_trainer_config(cfg)
        check_against_verl(settings, cfg)
        assert settings.engine_config().K == rollout.n == 16
        assert cfg.data.train_files == POOL_SOURCE
        assert cfg.data.custom_cls.name == "RodsTaskDataset"
        assert RodsVerlSettings.from_trainer_config(cfg.data) == settings  # what the dataset sees


def test_verl_loads_the_custom_dataset_class_and_agent_loop_file(configs):
    from verl.utils.dataset.rl_dataset import get_dataset_class
    from verl.utils.import_utils import resolve_config_path

    from rods.integrations.verl.dataset import RodsTaskDataset

    cfg = configs["paper_qwen3_4b"]
    assert get_dataset_class(cfg.data) is RodsTaskDataset
    loops = OmegaConf.load(resolve_config_path(str(CONFIG_DIR / "agent_loops.yaml")))
    assert [entry.name for entry in loops] == [AGENT_NAME]
    assert loops[0]._target_ == "rods.integrations.verl.agent_loop.RodsAgentLoop"


def test_ablations_change_only_what_they_name(configs):
    paper = RodsVerlSettings.from_trainer_config(configs["paper_qwen3_4b"])
    engine = paper.engine_config()
    assert paper.reward == "progress" and engine.capacity == 400 and not engine.random_seeds
    assert paper.synthesis is not None and paper.synthesis.model.startswith("Qwen/Qwen3-32B")

    def settings(name):
        return RodsVerlSettings.from_trainer_config(configs[f"ablations/{name}"])

    assert settings("binary_reward_training").reward == "binary"
    assert settings("binary_reward_training").engine_signal is None  # the engine follows the reward
    detection = settings("binary_detection")  # the paper's ablation: engine on binary, policy on RP
    assert detection.reward == "progress" and detection.engine_signal == "binary"
    assert settings("random_seeds").engine_config().random_seeds
    assert settings("no_retirement").engine_config().no_retirement
    assert settings("one_shot_synthesis").engine_config().one_shot
    assert settings("static_pool").synthesis is None and settings("static_pool").engine_config().capacity == 0
    assert [settings(f"capacity_{c}").engine_config().capacity for c in (0, 50, 100, 200, 400)] == [
        0,
        50,
        100,
        200,
        400,
    ]
    from rods.synth.settings import SynthConfig

    for name, switch in [
        ("no_rewrite", "rewrite"),
        ("no_narrative", "narrative"),
        ("no_feedback_repair", "feedback_repair"),
    ]:
        kwargs = settings(name).synthesis.pipeline_kwargs
        assert isinstance(kwargs, SynthConfig)  # the pipeline's own settings, typed
        assert kwargs.model_fields_set == {switch} and getattr(kwargs, switch) is False
        assert kwargs == SynthConfig.ablation(name)
    for name in EXPERIMENTS:
        assert configs[name].trainer.experiment_name == name.split("/")[-1]
        other = RodsVerlSettings.from_trainer_config(configs[name])
        assert other.max_steps_per_turn == paper.max_steps_per_turn == 20  # BFCL's step cap everywhere


def test_mismatched_settings_are_named():
    cfg = load("paper_qwen3_4b", ["actor_rollout_ref.rollout.n=8", "rods.engine.K=16"])
    with pytest.raises(ValueError, match=r"rollout.n=8 but rods.engine.K=16"):
        check_against_verl(RodsVerlSettings.from_trainer_config(cfg), cfg)
    cfg = load("paper_qwen3_4b", ["data.dataloader_num_workers=4"])
    with pytest.raises(ValueError, match="dataloader_num_workers"):
        check_against_verl(RodsVerlSettings.from_trainer_config(cfg), cfg)
    from rods.integrations.verl.dataset import RodsTaskDataset

    with pytest.raises(ValueError, match="dataloader_num_workers"):  # as verl builds it: data section only
        RodsTaskDataset(cfg.data.train_files, None, cfg.data)
    cfg = load("paper_qwen3_4b", ["+rods.engine.alpha_plus=2.0"])
    with pytest.raises(
        ValueError, match=r"verl config: rods.engine.alpha_plus: Input should be less than or equal to 1"
    ):
        RodsVerlSettings.from_trainer_config(cfg)
    cfg = load("paper_qwen3_4b", ["+rods.rewrd=binary"])
    with pytest.raises(ValueError, match=r"verl config: rods.rewrd: unknown key; known keys here: .*reward"):
        RodsVerlSettings.from_trainer_config(cfg)
    cfg = load("paper_qwen3_4b", ["rods.synthesis.base_url=null"])
    with pytest.raises(ValueError, match="rods.synthesis: base_url is required"):
        RodsVerlSettings.from_trainer_config(cfg)


def test_the_lora_experiment_sets_verls_lora_fields():
    """configs/verl/lora_qwen3_4b.yaml: the paper plus verl's LoRA fields.

    Not through verl's validate_config: for a LoRA rank it imports verl's vLLM rollout, which needs vLLM
    (GPU machines); verl's model dataclass fetches the model's config from the hub.
    """
    from verl.utils.config import omega_conf_to_dataclass
    from verl.workers.config import RolloutConfig

    from rods.train.load import load_config

    cfg = load("lora_qwen3_4b")
    OmegaConf.resolve(cfg)
    fields = cfg.actor_rollout_ref.model
    assert (fields.lora_rank, fields.lora_alpha, fields.target_modules) == (64, 128, "all-linear")
    rollout = omega_conf_to_dataclass(cfg.actor_rollout_ref.rollout)
    assert isinstance(rollout, RolloutConfig) and rollout.load_format == "safetensors" and rollout.layered_summon
    settings = RodsVerlSettings.from_trainer_config(cfg)
    check_against_verl(settings, cfg)
    trl = load_config(CONFIG_DIR.parent / "lora_qwen3_4b.yaml").model.lora  # the TRL twin: the same adapter
    assert (trl.enabled, trl.rank, trl.alpha, trl.target_modules) == (True, 64, 128.0, "all-linear")


@pytest.mark.slow
def test_launcher_composes_through_verls_entry_point(tmp_path):
    """scripts/launch_verl.sh up to verl's hydra main (`--cfg job` prints the config instead of training)."""
    import subprocess
    import sys

    import yaml

    script = CONFIG_DIR.parents[1] / "scripts" / "launch_verl.sh"
    env = {**os.environ, "PYTHON": sys.executable, "RODS_SYNTH_URL": "http://127.0.0.1:9/v1"}
    proc = subprocess.run(
        [str(script), "ablations/no_rewrite", "trainer.total_training_steps=7", "--cfg", "job"],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "does not answer" in proc.stderr  # the synthesis endpoint check warns, it does not stop the run
    cfg = yaml.safe_load(proc.stdout[proc.stdout.index("actor_rollout_ref:"):])
    assert cfg["trainer"]["experiment_name"] == "no_rewrite" and cfg["trainer"]["total_training_steps"] == 7
    assert cfg["rods"]["synthesis"]["pipeline_kwargs"] == {"rewrite": False}
    assert cfg["actor_rollout_ref"]["rollout"]["agent"]["agent_loop_config_path"] == str(
        CONFIG_DIR / "agent_loops.yaml"
    )
    assert cfg["rods"]["run_dir"].endswith("runs/verl/ablations/no_rewrite")
