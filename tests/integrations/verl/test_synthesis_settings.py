"""The verl `rods.synthesis` section: one backend or an ensemble, errors naming the entry (no verl needed)."""

import pytest

from rods.integrations.verl.settings import RodsVerlSettings, VerlSynthesisSettings


def test_one_backend_or_an_ensemble_of_them():
    one = VerlSynthesisSettings(backend="openai", base_url="http://h:8000/v1", model="Qwen/Qwen3-32B")
    assert one.backend_specs(api_key="k") == [("openai", {"base_url": "http://h:8000/v1", "model": "Qwen/Qwen3-32B",
                                                          "api_key": "k"})]
    ensemble = VerlSynthesisSettings(backends=[{"backend": "openai", "base_url": "http://a/v1", "model": "qwen"},
                                           {"backend": "openai", "base_url": "http://b/v1", "model": "glm"}],
                                 pipeline_kwargs={"routing": "acceptance"})
    assert [(n, kw["base_url"], kw["model"]) for n, kw in ensemble.backend_specs()] == [
        ("openai", "http://a/v1", "qwen"), ("openai", "http://b/v1", "glm")]
    with pytest.raises(ValueError, match=r"rods.synthesis.backends\[1\].base_url is required"):
        VerlSynthesisSettings(backends=[{"backend": "template"}, {"backend": "openai", "model": "m"}])
    with pytest.raises(ValueError, match=r"backends\[0\]: needs 'backend'"):
        VerlSynthesisSettings(backends=[{"model": "m"}])


def test_engine_signal_setting():
    assert RodsVerlSettings.from_dict({}).engine_signal is None  # the engine sees the training reward
    settings = RodsVerlSettings.from_dict({"reward": "progress", "engine_signal": "binary"})
    assert (settings.reward, settings.engine_signal) == ("progress", "binary")
    with pytest.raises(ValueError, match="engine_signal"):
        RodsVerlSettings.from_dict({"engine_signal": "accuracy"})
