"""The wheelhouse scripts/gpu_check.sh installs on the lent GPU machine, derived from pyproject.toml.

That machine's image (Python 3.12, torch + CUDA, transformers, accelerate, peft, pandas, ...; the full
list is scripts/gpu_image_packages.txt) cannot fetch anything, so every distribution the check needs
that the image lacks travels as a wheel (`.whl/`, git-ignored, carried with the device call). Which
ones is derived here, never written by hand, so a dependency added to pyproject.toml gets there by itself:

* roots: `[project].dependencies` plus the `train` extra (TRL, peft, gguf, ...: what rods' training
  loop runs; the check runs that loop). The other extras are not followed: `vllm` is too large to carry
  (the check reports "not run" without it), `tau2`, `verl` and `mcp` are environments and backends the
  check does not use, `dev` is the test tools. Plus bfcl-eval, the source of every task and API class,
  which pyproject leaves out on purpose: the Makefile installs it with --no-deps, so none of its own
  requirements are followed, only mpmath, which its API classes need (declared in pyproject too);
* each root is walked through the metadata of the distributions installed here (`requires()`, markers
  evaluated for CPython 3.12 on x86-64 Linux, an `extra == ...` requirement only for an extra asked
  for). A distribution on the image's list is not carried and not followed (the image brings its own
  dependencies); one not on it is carried and followed; EXCLUDED ones are never carried;
* each carried distribution is pinned at the version installed here, so what runs there is what CI
  tests here.

Run from the project's venv: `python scripts/gpu_wheelhouse.py --list` prints the pins;
`python scripts/gpu_wheelhouse.py [OUT]` downloads their wheels (no dependencies) for CPython 3.12 on
manylinux x86-64 into OUT (default .whl/) and fails if they exceed the 64 MiB a device call carries.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
IMAGE_LIST = Path(__file__).resolve().parent / "gpu_image_packages.txt"
EXTRAS = ("train",)
# Installed with --no-deps beside rods (Makefile): name -> the only requirements of it to follow.
NO_DEPS_ROOTS = {"bfcl-eval": ("mpmath",)}
# Never carried, whatever the image list says: the image's CUDA build of torch and what comes with
# it (a CPU torch or a CUDA runtime would not fit in 64 MiB, and must not shadow the image's).
EXCLUDED_NAMES = frozenset({"torch", "triton"})
EXCLUDED_PREFIXES = ("nvidia-", "cuda-")
# The machine's interpreter, for marker evaluation (this venv may run another Python).
TARGET = {
    "python_version": "3.12", "python_full_version": "3.12.3", "implementation_name": "cpython",
    "implementation_version": "3.12.3", "platform_python_implementation": "CPython", "os_name": "posix",
    "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
    "platform_release": "", "platform_version": "",
}
PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
             "manylinux1_x86_64", "manylinux_2_24_x86_64", "manylinux_2_31_x86_64", "manylinux_2_34_x86_64",
             "manylinux_2_35_x86_64")
LIMIT_BYTES = 64 * 1024 * 1024


class WheelhouseError(Exception):
    """A needed distribution that cannot be pinned or downloaded (the message says which and why)."""


def excluded(name: str) -> bool:
    """Whether `name` (normalized) stays the image's and is never carried."""
    return name in EXCLUDED_NAMES or name.startswith(EXCLUDED_PREFIXES)


def image_packages(path: Path = IMAGE_LIST) -> frozenset[str]:
    """The normalized names on the image's list (comments and blank lines skipped)."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return frozenset(canonicalize_name(line) for line in lines if line)


def applies(req: Requirement, extras: frozenset[str]) -> bool:
    """Whether `req` holds on the machine when the extras `extras` of its requirer were asked for."""
    if req.marker is None:
        return True
    return any(req.marker.evaluate({**TARGET, "extra": extra}) for extra in extras | {""})


def declared(pyproject: Path, extras: tuple[str, ...] = EXTRAS) -> list[Requirement]:
    """pyproject's `[project].dependencies` plus those of `extras`, and the --no-deps roots."""
    project = tomllib.loads(pyproject.read_text())["project"]
    lines = list(project.get("dependencies", []))
    for extra in extras:
        lines += project["optional-dependencies"][extra]
    return [Requirement(line) for line in lines] + [Requirement(name) for name in NO_DEPS_ROOTS]


def needed(pyproject: Path = ROOT / "pyproject.toml", image: frozenset[str] | None = None,
           extras: tuple[str, ...] = EXTRAS) -> dict[str, str]:
    """{normalized name: installed version} of every distribution to carry (see the module's docstring).

    Raises WheelhouseError naming the distribution and its requirer when one is not installed here.
    """
    image = image_packages() if image is None else image
    todo = [(req, "pyproject.toml") for req in declared(pyproject, extras) if applies(req, frozenset())]
    pins: dict[str, str] = {}
    seen: dict[str, frozenset[str]] = {}  # extras already followed per distribution
    while todo:
        req, requirer = todo.pop()
        name = canonicalize_name(req.name)
        extras_here = frozenset(req.extras) | seen.get(name, frozenset())
        if name in image or excluded(name) or (name in seen and seen[name] == extras_here):
            continue
        seen[name] = extras_here
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            raise WheelhouseError(f"{name} (required by {requirer}) is not installed in {sys.prefix}: "
                                  "install the project (make venv) before building the wheelhouse") from None
        pins[name] = dist.version
        if name in NO_DEPS_ROOTS:
            requires = [Requirement(dep) for dep in NO_DEPS_ROOTS[name]]
        else:
            requires = [Requirement(line) for line in dist.requires or []]
        todo += [(dep, f"{name} {dist.version}") for dep in requires if applies(dep, extras_here)]
    return pins


def pin_list(pins: dict[str, str]) -> list[str]:
    """`name==version` lines, sorted by name."""
    return [f"{name}=={version}" for name, version in sorted(pins.items())]


def download(pins: list[str], out: Path) -> tuple[int, int]:
    """Download the wheels of `pins` (no dependencies, CPython 3.12, manylinux x86-64) into a fresh `out`.

    Returns (wheels, bytes); raises WheelhouseError when pip finds no wheel or the total is too large.
    """
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
           "--python-version", "3.12", "--implementation", "cp", "-d", str(out)]
    for platform in PLATFORMS:
        cmd += ["--platform", platform]
    proc = subprocess.run(cmd + pins, capture_output=True, text=True)
    if proc.returncode:
        sys.stderr.write(proc.stderr)
        message = f"pip download failed (exit {proc.returncode})"
        missing = re.findall(r"No matching distribution found for (\S+)", proc.stderr)
        if missing:
            message += (f": no wheel for CPython 3.12 on manylinux x86-64 of {', '.join(missing)}. A pure-Python "
                        "package that publishes only an sdist has none: it must be built into one here (`python -m "
                        "pip wheel --no-deps NAME==VERSION`) and carried with the others (not done here)")
        raise WheelhouseError(message)
    wheels = sorted(out.glob("*.whl"))
    size = sum(wheel.stat().st_size for wheel in wheels)
    if size >= LIMIT_BYTES:
        raise WheelhouseError(f"{len(wheels)} wheels, {size / 2**20:.1f} MiB in {out}: over the 64 MiB a call carries")
    return len(wheels), size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("out", nargs="?", type=Path, default=ROOT / ".whl", help="wheel folder (default .whl/)")
    parser.add_argument("--list", action="store_true", help="print the pins and download nothing")
    args = parser.parse_args(argv)
    try:
        pins = pin_list(needed())
        if args.list:
            print("\n".join(pins))
            return 0
        count, size = download(pins, args.out)
    except WheelhouseError as error:
        print(f"gpu_wheelhouse: {error}", file=sys.stderr)
        return 1
    print(f"gpu_wheelhouse: {count} wheels, {size // 2**20} MiB in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
