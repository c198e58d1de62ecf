"""The tiny random Llama of tests/integrations/trl (its fixture, reused: built once per session)."""

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "rods_tests_trl_conftest", Path(__file__).resolve().parents[1] / "integrations" / "trl" / "conftest.py"
)
_trl = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_trl)

tiny_model_dir = _trl.tiny_model_dir
