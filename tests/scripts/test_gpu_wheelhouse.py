"""scripts/gpu_wheelhouse.py: the GPU machine's wheelhouse holds everything the project declares that the image lacks.

Completeness is checked independently of the script's walk, by closure: every root pyproject declares
(core dependencies, the `train` extra, bfcl-eval) and every requirement of every carried distribution
(markers evaluated for CPython 3.12 on Linux x86-64) is on the image's list, carried, or excluded. The
same check fails on the list the script replaced (OLD_LIST), and a dependency added to pyproject
reaches the pins with no other change. No network: `--list` only.
"""

import importlib.metadata as md
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("gpu_wheelhouse", ROOT / "scripts" / "gpu_wheelhouse.py")
wheelhouse = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(wheelhouse)

# The hand-written list scripts/gpu_wheelhouse.sh held before the script derived it.
OLD_LIST = ["trl", "datasets", "dill", "multiprocess", "pydantic", "pydantic-core", "annotated-types",
            "typing-inspection", "openai", "jiter", "httpx2", "httpcore2", "truststore", "sniffio", "bfcl-eval",
            "jsonschema", "jsonschema-specifications", "referencing", "rpds-py", "attrs", "docstring-parser", "faker"]
MACHINE = {"python_version": "3.12", "python_full_version": "3.12.3", "sys_platform": "linux",
           "platform_system": "Linux", "platform_machine": "x86_64", "extra": ""}
IMAGE = wheelhouse.image_packages()


def is_excluded(name):
    return name in {"torch", "triton"} or name.startswith(("nvidia-", "cuda-"))


def roots(pyproject):
    """Names pyproject declares for the check (core and `train`), plus bfcl-eval (Makefile, --no-deps)."""
    import tomllib

    project = tomllib.loads(pyproject.read_text())["project"]
    lines = project["dependencies"] + project["optional-dependencies"]["train"] + ["bfcl-eval"]
    return {canonicalize_name(Requirement(line).name) for line in lines}


def missing(carried, pyproject=ROOT / "pyproject.toml"):
    """Needed names neither on the image, carried, nor excluded: the roots, then each carried one's requirements."""
    carried = {canonicalize_name(name) for name in carried}
    needed = set(roots(pyproject))
    for name in carried - {"bfcl-eval"}:  # bfcl-eval is installed without its requirements
        for line in md.distribution(name).requires or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate(MACHINE):
                needed.add(canonicalize_name(req.name))
    return sorted(n for n in needed if n not in IMAGE and n not in carried and not is_excluded(n))


def test_image_list_is_normalized_and_holds_the_image_stack():
    lines = [line for line in (ROOT / "scripts" / "gpu_image_packages.txt").read_text().splitlines()
             if line and not line.startswith("#")]
    assert lines == [re.sub(r"[-_.]+", "-", line).lower() for line in lines]
    assert len(lines) == len(set(lines)) == len(IMAGE)
    assert {"torch", "transformers", "accelerate", "peft", "mpmath", "numpy"} <= IMAGE


def test_pins_are_complete_and_at_installed_versions():
    pins = wheelhouse.needed()
    assert missing(pins) == []
    assert {"trl", "datasets", "pydantic", "openai", "jsonschema", "bfcl-eval"} <= set(pins)
    assert not set(pins) & IMAGE
    assert all(md.version(name) == version for name, version in pins.items())


def test_the_old_hand_list_was_incomplete():
    gaps = missing(OLD_LIST)
    print("the old hand list missed:", gaps)
    assert gaps and "gguf" in gaps  # the `train` extra's gguf never reached it


def test_exclusions_stay_tiny_and_never_pinned():
    assert wheelhouse.EXCLUDED_NAMES == {"torch", "triton"}
    assert wheelhouse.EXCLUDED_PREFIXES == ("nvidia-", "cuda-")
    pins = wheelhouse.needed(image=frozenset())  # even with an empty image list
    assert pins and not [name for name in pins if is_excluded(name)]


def test_bfcl_eval_is_pinned_as_the_makefile_installs_it():
    version = wheelhouse.needed()["bfcl-eval"]
    assert f"--no-deps bfcl-eval=={version}" in (ROOT / "Makefile").read_text()
    assert wheelhouse.NO_DEPS_ROOTS == {"bfcl-eval": ("mpmath",)}


def _with_dependency(tmp_path, name):
    text = (ROOT / "pyproject.toml").read_text()
    assert text.count("dependencies = [\n") == 1
    path = tmp_path / "pyproject.toml"
    path.write_text(text.replace("dependencies = [\n", f'dependencies = [\n    "{name}",\n'))
    return path


def test_a_new_dependency_reaches_the_pins(tmp_path):
    before = wheelhouse.needed()
    candidates = sorted(canonicalize_name(d.metadata["Name"]) for d in md.distributions() if not d.requires)
    new = next(n for n in candidates if n not in IMAGE and n not in before and not is_excluded(n))
    pyproject = _with_dependency(tmp_path, new)
    assert missing(before, pyproject) == [new]
    after = wheelhouse.needed(pyproject)
    assert after == {**before, new: md.version(new)}
    assert missing(after, pyproject) == []


def test_a_dependency_not_installed_is_named(tmp_path):
    with pytest.raises(wheelhouse.WheelhouseError, match="no-such-dist-rods.*required by pyproject.toml"):
        wheelhouse.needed(_with_dependency(tmp_path, "no-such-dist-rods"))


def test_the_shell_wrapper_lists_the_pins():
    out = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_wheelhouse.sh"), "--list"], env={"PYTHON": sys.executable,
                         "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, check=True).stdout
    assert out.split() == wheelhouse.pin_list(wheelhouse.needed())
