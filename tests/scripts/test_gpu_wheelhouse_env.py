"""The GPU check's loop runs with only the GPU image's distributions and the wheelhouse's (simulated here).

The image's real environment (CUDA torch, Python 3.12, no network) cannot be built here, so it is
simulated in this venv: bench/gpu_check.py's loop runs on CPU in a subprocess in which a meta-path
finder (tests/scripts/wheelhouse_only.py) hides every module of a distribution that is neither on the
image's list (scripts/gpu_image_packages.txt), nor pinned by scripts/gpu_wheelhouse.py, nor one it never
carries because the image has it (torch, triton, nvidia-*, cuda-*), nor rods itself. The standard
library and the repo's folders belong to no distribution and stay importable. A second run without
one pin the loop imports (jsonschema, which the real GPU run once lacked) must fail and name it.

One allowance stands in for the image: its packages run here at this venv's versions, not the
image's (transformers 5.25 here, 5.17 there), and the image brings the dependencies of its own
versions, not of these. So the requirements of the image's packages as installed here are allowed
too (`image_dependencies`): transformers 5.25 requires `kernels` (and from_pretrained fails without
it), which 5.17 on the image does not. None of them is a pin the loop needs but for the ones the
image's packages pull here as well (pydantic through typer, httpx2 through huggingface-hub), which a
run without such a pin therefore could not catch; jsonschema is not among them.
"""

import importlib.metadata as md
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("gpu_wheelhouse", ROOT / "scripts" / "gpu_wheelhouse.py")
wheelhouse = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wheelhouse)

LOOP = ["--device", "cpu", "--check", "loop", "--k", "2", "--tasks-per-step", "2", "--reply-tokens", "4",
        "--hidden", "32", "--layers", "1", "--steps", "2"]


def image_dependencies(image) -> set[str]:
    """What the image's packages, at the versions installed here, require (markers for this interpreter)."""
    todo = [(name, frozenset()) for name in image]
    seen: set[tuple[str, frozenset]] = set()
    while todo:
        name, extras = todo.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        try:
            requires = md.distribution(name).requires or []
        except md.PackageNotFoundError:
            continue  # on the image, not installed here: this simulation cannot import it either way
        for line in requires:
            req = Requirement(line)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in extras | {""}):
                todo.append((canonicalize_name(req.name), frozenset(req.extras)))
    return {name for name, _ in seen} - set(image)


def allowed() -> set[str]:
    """What the machine would hold: the image's list and its packages' dependencies here, the pins, the
    never-carried ones installed here, rods."""
    installed = {canonicalize_name(dist.metadata["Name"]) for dist in md.distributions()}
    image = set(wheelhouse.image_packages())
    skew = image_dependencies(image) - set(wheelhouse.needed())
    print("allowed for the image's packages at this venv's versions:", sorted(skew))
    return (image | skew | set(wheelhouse.needed()) | {"rods"}
            | {name for name in installed if wheelhouse.excluded(name)})


def run_loop(tmp_path, names):
    listing = tmp_path / "allowed.txt"
    listing.write_text("\n".join(sorted(names)) + "\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(HERE)]), PYTHONUNBUFFERED="1",
               TOKENIZERS_PARALLELISM="false")
    cmd = [sys.executable, "-c", "import wheelhouse_only; wheelhouse_only.main()", str(listing),
           str(ROOT / "bench" / "gpu_check.py"), *LOOP, "--out", str(tmp_path / "run")]
    start = time.monotonic()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    print(f"restricted run: exit {done.returncode} in {time.monotonic() - start:.1f} s")
    return done


def test_gpu_check_loop_runs_with_only_the_image_and_the_wheelhouse(tmp_path):
    done = run_loop(tmp_path, allowed())
    assert done.returncode == 0, done.stderr[-6000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["learning"] is True and result["steps"] == 2
    # What the finder hid (optional imports the loop tolerates) is listed, for the record.
    print("\n".join(line for line in done.stderr.splitlines() if line.startswith("wheelhouse_only:")))


def test_without_a_needed_pin_the_loop_fails_and_names_it(tmp_path):
    names = allowed()
    assert "jsonschema" in names and "jsonschema" in wheelhouse.needed()
    done = run_loop(tmp_path, names - {"jsonschema"})
    assert done.returncode != 0
    assert "ModuleNotFoundError: No module named 'jsonschema'" in done.stderr, done.stderr[-6000:]
    assert "wheelhouse_only: hid jsonschema (jsonschema)" in done.stderr
