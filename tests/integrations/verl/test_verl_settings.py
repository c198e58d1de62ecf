"""The `rods:` section of a verl config, read without verl: typed, round-tripping, errors naming the dotted key."""

import pytest

from rods.engine import EngineConfig
from rods.integrations.verl.settings import RodsVerlSettings, VerlSynthesisSettings


def test_section_round_trips_and_types_the_engine():
    settings = RodsVerlSettings.from_dict(
        {"engine": {"K": 8, "min_observations": 4, "burn_in_rollouts": 4}, "synthesis": {"base_url": "http://h/v1"}}
    )
    assert isinstance(settings.engine, EngineConfig) and settings.engine.K == 8
    assert isinstance(settings.synthesis, VerlSynthesisSettings) and settings.synthesis.num_workers == 4
    assert RodsVerlSettings.from_dict(settings.to_dict()) == settings
    assert RodsVerlSettings.from_dict(None) == RodsVerlSettings()


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"engine": {"alpha_plus": 2.0}}, r"rods.engine.alpha_plus: Input should be less than or equal to 1"),
        ({"engine": {"alpha_minus": 0.9, "alpha_plus": 0.5}}, r"rods.engine: need alpha_minus <= alpha_plus"),
        ({"rewrd": "binary"}, r"rods.rewrd: unknown key; known keys here: .*reward"),
        ({"synthesis": {"num_workers": 2}}, r"rods.synthesis: base_url is required"),
        ({"synthesis": {"backend": "template", "factory": "no_colon"}}, r"rods.synthesis.factory: String should match"),
        ({"max_steps_per_turn": 0}, r"rods.max_steps_per_turn: Input should be greater than or equal to 1"),
    ],
)
def test_bad_values_are_named_by_dotted_key(section, message):
    with pytest.raises(ValueError, match=message):
        RodsVerlSettings.from_dict(section)
