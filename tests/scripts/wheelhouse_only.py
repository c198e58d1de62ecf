"""Run a script in this interpreter as if only some distributions were installed (the GPU machine's, simulated).

`python -c "import wheelhouse_only; wheelhouse_only.main()" ALLOWED SCRIPT [ARG...]` reads ALLOWED (a file
of distribution names, one a line), installs a `sys.meta_path` finder before anything else is imported,
then runs SCRIPT as `__main__` with its folder first on sys.path (as `python SCRIPT` would). A top-level
module that belongs only to distributions outside ALLOWED (`importlib.metadata.packages_distributions()`,
plus single-file extension modules, which it leaves out) cannot be imported: the import raises
ModuleNotFoundError naming the module and its distributions, and `importlib.util.find_spec` answers
None, as both do where the distribution is absent. Modules of no distribution (the standard library,
the repo's own folders on the path) stay importable. Every module hidden is listed on stderr at exit,
whether or not the script caught the error.

Only the import system is restricted: the hidden distributions' metadata (`importlib.metadata.version`)
still answers, as it would not on the machine.
"""

from __future__ import annotations

import atexit
import importlib.metadata as md
import importlib.util
import re
import runpy
import sys
from collections.abc import Iterable
from pathlib import Path

_EXTENSION = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\.[^/]*\.(so|pyd)$")


def normalize(name: str) -> str:
    """PEP 503."""
    return re.sub(r"[-_.]+", "-", name).lower()


def module_owners() -> dict[str, set[str]]:
    """{top-level module: normalized names of the distributions that provide it}."""
    owners = {module: {normalize(d) for d in dists} for module, dists in md.packages_distributions().items()}
    for dist in md.distributions():
        for file in dist.files or ():
            match = _EXTENSION.match(str(file)) if len(file.parts) == 1 else None
            if match:  # e.g. _cffi_backend.cpython-311-x86_64-linux-gnu.so, which packages_distributions skips
                owners.setdefault(match[1], set()).add(normalize(dist.metadata["Name"]))
    return owners


class WheelhouseOnly:
    """The meta-path finder: hides every top-level module of the distributions outside `allowed`."""

    def __init__(self, allowed: Iterable[str]):
        allowed = {normalize(name) for name in allowed}
        self.hidden = {module: sorted(dists) for module, dists in module_owners().items() if not dists & allowed}
        self.refused: dict[str, list[str]] = {}

    def find_spec(self, fullname, path=None, target=None):
        if path is None and fullname in self.hidden:
            dists = self.hidden[fullname]
            self.refused[fullname] = dists
            error = ModuleNotFoundError(f"No module named {fullname!r} (wheelhouse_only: distribution "
                                        f"{', '.join(dists)} is neither on the GPU image nor in the wheelhouse)",
                                        name=fullname)
            error.wheelhouse_only = True  # a plain ModuleNotFoundError, as logged where the module is absent
            raise error
        return None


_real_find_spec = importlib.util.find_spec


def _find_spec(name, package=None):
    try:
        return _real_find_spec(name, package)
    except ModuleNotFoundError as error:
        if getattr(error, "wheelhouse_only", False):
            return None  # as for a distribution that is not installed
        raise


def install(allowed: Iterable[str]) -> WheelhouseOnly:
    """Put the finder first on sys.meta_path; fails if a module it hides was imported already."""
    finder = WheelhouseOnly(allowed)
    early = sorted(name for name in list(sys.modules) if "." not in name and name in finder.hidden)
    if early:
        raise RuntimeError(f"wheelhouse_only: imported before install, so still importable: {early}")
    sys.meta_path.insert(0, finder)
    importlib.util.find_spec = _find_spec
    atexit.register(_report, finder)
    return finder


def _report(finder: WheelhouseOnly) -> None:
    for module, dists in sorted(finder.refused.items()):
        print(f"wheelhouse_only: hid {module} ({', '.join(dists)})", file=sys.stderr)


def main(argv: list[str] | None = None) -> None:
    allowed_file, script, *args = sys.argv[1:] if argv is None else argv
    install(line.strip() for line in Path(allowed_file).read_text().splitlines() if line.strip())
    script = Path(script).resolve()
    sys.argv = [str(script), *args]
    sys.path.insert(0, str(script.parent))
    runpy.run_path(str(script), run_name="__main__")
