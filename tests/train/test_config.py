"""TrainConfig, YAML experiments (every file under configs/ validates), errors naming the key."""

from pathlib import Path

import pytest

from rods.engine import EngineConfig
from rods.train import ConfigError, TrainConfig, config_from_dict, dump_config, load_config
from rods.train.load import apply_overrides, explain_config

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
EXPERIMENTS = sorted(CONFIGS.glob("*.yaml")) + sorted((CONFIGS / "ablations").glob("*.yaml")) + sorted(
    p for folder in ("compare", "learning") for p in (CONFIGS / folder).glob("*.yaml") if p.name != "base.yaml"
)


def test_paper_defaults():
    config = TrainConfig(synthesis={"backend": "openai"})
    assert config.grpo.num_generations == 16
    engine = config.engine_config()
    assert (engine.K, engine.alpha_minus, engine.alpha_plus, engine.capacity) == (16, 0.20, 0.85, 400)
    assert config.grpo.reward == "progress"
    assert config.rollout.max_steps_per_turn == 20


def test_every_field_has_help():
    from pydantic import BaseModel

    def walk(model: type[BaseModel], prefix: str):
        for name, field in model.model_fields.items():
            assert field.description, f"{prefix}{name} has no help text"
            if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel):
                walk(field.annotation, f"{prefix}{name}.")

    walk(TrainConfig, "")


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: p.name)
def test_every_experiment_file_validates(path):
    config = load_config(path)
    assert isinstance(config.engine_config(), EngineConfig)
    # an experiment's name is its file name (comparison arms may prefix their folder's: compare_static)
    assert config.name.removeprefix(f"{path.parent.name}_") == path.stem
    # The resolved YAML round-trips to the same config.
    import yaml

    assert config_from_dict(yaml.safe_load(dump_config(config))) == config


def test_paper_and_ablations_differ_only_where_they_say():
    paper = load_config(CONFIGS / "paper_qwen3_4b.yaml")
    assert paper.grpo.num_generations == 16 and paper.engine.K == 16
    assert paper.synthesis.backend == "openai" and "32B" in paper.synthesis.backend_args["model"]
    assert paper.engine.capacity == 400 and paper.data.seeds == "train"
    ab = CONFIGS / "ablations"
    assert load_config(ab / "binary_reward_training.yaml").grpo.reward == "binary"
    detection = load_config(ab / "binary_detection.yaml").grpo
    assert (detection.reward, detection.engine_signal) == ("progress", "binary")
    assert load_config(ab / "random_seeds.yaml").engine_config().random_seeds
    assert load_config(ab / "no_retirement.yaml").engine_config().no_retirement
    assert load_config(ab / "one_shot_synthesis.yaml").engine_config().one_shot
    static = load_config(ab / "static_pool.yaml")
    assert not static.synthesis.enabled and static.engine_config().capacity == 0
    assert [load_config(ab / f"capacity_{c}.yaml").engine_config().capacity for c in (0, 50, 100, 200, 400)] == [
        0, 50, 100, 200, 400
    ]
    # inherited values stay
    assert load_config(ab / "no_rewrite.yaml").grpo.num_generations == 16


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("grpo:\n  learnin_rate: 0.1\n", r"bad.yaml: grpo.learnin_rate: unknown key.*learning_rate"),
        ("engine:\n  alpha_pluss: 0.9\n", r"bad.yaml: engine.alpha_pluss: unknown key; known keys here: .*alpha_plus"),
        ("engine:\n  alpha_minus: 0.9\n  alpha_plus: 0.5\n", r"bad.yaml: engine: .*alpha_minus <= alpha_plus"),
        ("engine:\n  K: 0\n", r"bad.yaml: engine.K: Input should be greater than or equal to 1"),
        ("rollout:\n  tool_docs: short\n", r"bad.yaml: rollout.tool_docs: Input should be 'full', 'compact'"),
        ("grpo:\n  num_generations: lots\n", r"bad.yaml: grpo.num_generations"),
    ],
)
def test_bad_key_or_value_is_named_with_the_file(tmp_path, text, message):
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(bad)


def test_batch_shape_must_fit_the_groups():
    with pytest.raises(ConfigError, match=r"gradient_accumulation_steps"):
        config_from_dict({"grpo": {"num_generations": 4, "tasks_per_step": 1, "gradient_accumulation_steps": 3}})


def test_base_inheritance_overrides_and_cycles(tmp_path):
    (tmp_path / "a.yaml").write_text("name: a\ngrpo:\n  max_steps: 7\n  beta: 0.1\nsynthesis:\n  backend: template\n")
    (tmp_path / "b.yaml").write_text("base: a.yaml\nname: b\ngrpo:\n  max_steps: 9\n")
    config = load_config(tmp_path / "b.yaml", ["grpo.learning_rate=0.5", "engine.capacity=3"])
    assert (config.grpo.max_steps, config.grpo.beta, config.grpo.learning_rate) == (9, 0.1, 0.5)
    assert config.engine_config().capacity == 3
    (tmp_path / "c.yaml").write_text("base: d.yaml\n")
    (tmp_path / "d.yaml").write_text("base: c.yaml\n")
    with pytest.raises(ConfigError, match="circular"):
        load_config(tmp_path / "c.yaml")
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="section.key=value"):
        apply_overrides({}, ["novalue"])


def test_synthesis_backend_is_never_a_silent_default(tmp_path):
    """Enabling synthesis without naming its backend stops with the key and the choices."""
    bare = tmp_path / "bare.yaml"
    bare.write_text("name: bare\n")
    with pytest.raises(ConfigError, match=r"bare.yaml: .*synthesis.backend is required.*template, openai, local"):
        load_config(bare)
    with pytest.raises(ValueError, match="synthesis.backend"):
        TrainConfig()
    assert config_from_dict({"synthesis": {"enabled": False}}).synthesis.backend is None  # static: no backend
    assert config_from_dict({"synthesis": {"backend": "template"}}).synthesis.backend == "template"
    two = config_from_dict({"synthesis": {"backends": [{"backend": "template"},
                                                       {"backend": "openai", "backend_args": {"model": "m"}}]}})
    assert [b.backend for b in two.synthesis.backends] == ["template", "openai"]
    with pytest.raises(ConfigError, match="not both"):
        config_from_dict({"synthesis": {"backend": "template", "backends": [{"backend": "template"}]}})
    with pytest.raises(ConfigError, match=r"synthesis.backends.0.backend"):
        config_from_dict({"synthesis": {"backends": [{"backend": "gpt"}]}})
    for path in EXPERIMENTS:  # every shipped experiment says which backend (or turns synthesis off)
        synth = load_config(path).synthesis
        assert not synth.enabled or synth.backend or synth.backends, path


def test_explained_config_is_the_resolved_tree_with_every_help_text():
    import yaml
    from pydantic import BaseModel

    config = load_config(CONFIGS / "demo.yaml", ["engine.capacity=7"])
    text = explain_config(config)
    assert yaml.safe_load(text) == config.model_dump(mode="json")
    comments = " ".join(line.strip().removeprefix("# ") for line in text.splitlines() if line.strip().startswith("#"))

    def walk(section: BaseModel):
        for name, field in type(section).model_fields.items():
            assert " ".join(field.description.split()) in comments, name
            if isinstance(getattr(section, name), BaseModel):
                walk(getattr(section, name))

    walk(config)
    assert "engine:\n" in text and "  capacity: 7" in text


def test_synthesis_options_are_the_pipelines_typed_settings(tmp_path):
    """`synthesis.options` is `SynthConfig`: bounds checked, unknown keys named with the file, one routing knob."""
    from rods.synth.settings import SynthConfig

    path = tmp_path / "typo.yaml"
    path.write_text("synthesis:\n  backend: template\n  options:\n    rewrit: false\n")
    with pytest.raises(ConfigError, match=r"typo.yaml: synthesis.options.rewrit: unknown key; known keys.*rewrite"):
        load_config(path)
    with pytest.raises(ConfigError, match=r"synthesis.options.max_attempts: Input should be greater than or equal"):
        config_from_dict({"synthesis": {"backend": "template", "options": {"max_attempts": 0}}})
    with pytest.raises(ConfigError, match=r"synthesis.options.augment: Input should be less than or equal to 1"):
        config_from_dict({"synthesis": {"backend": "template", "options": {"augment": 1.5}}})
    ablated = load_config(CONFIGS / "ablations" / "no_rewrite.yaml").synthesis.options
    assert isinstance(ablated, SynthConfig) and ablated.rewrite is False and ablated.max_attempts == 3
    # routing: given at either place it is the same value in both; two different values are an error
    for synth in ({"routing": "acceptance"}, {"options": {"routing": "acceptance"}}):
        got = config_from_dict({"synthesis": {"backend": "template", **synth}}).synthesis
        assert got.routing == got.options.routing == "acceptance"
        dumped = dump_config(config_from_dict({"synthesis": {"backend": "template", **synth}}))
        again = config_from_dict(yaml_round_trip(dumped))
        assert again.synthesis.routing == again.synthesis.options.routing == "acceptance"
    with pytest.raises(ConfigError, match="disagree"):
        config_from_dict({"synthesis": {"backend": "template", "routing": "round_robin",
                                        "options": {"routing": "acceptance"}}})


def yaml_round_trip(text: str) -> dict:
    import yaml

    return yaml.safe_load(text)
