"""BFCL's function docs, read from the installed `bfcl-eval` package (`data/multi_turn_func_doc/*.json`).

Never copied into this repository. BFCL writes Python-ish types (`dict`,
`float`, `tuple`, `any`); `rods.envs.schemas` maps them to JSON-schema types.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from rods.tasks.bfcl import API_CLASS_FILES

#: API class -> its function-doc file in `data/multi_turn_func_doc/`.
DOC_FILES = {cls: f"{stem}.json" for cls, stem in API_CLASS_FILES.items()}


@cache
def all_docs() -> dict[str, tuple[dict[str, Any], ...]]:
    """API class -> its function docs (shared: callers copy before editing)."""
    from rods.tasks.bfcl import bfcl_data_dir

    folder = bfcl_data_dir() / "multi_turn_func_doc"
    out = {}
    for cls, name in DOC_FILES.items():
        with (folder / name).open(encoding="utf-8") as fh:
            out[cls] = tuple(json.loads(line) for line in fh if line.strip())
    return out
