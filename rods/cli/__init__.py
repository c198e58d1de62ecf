"""The `rods` command line: one subcommand module per job.

Each module under `rods.cli` exposes `register(subparsers)`, which adds its
parser and sets `func`. Modules keep heavy imports (torch, transformers) inside
their functions, so e.g. `rods reward` starts fast and never imports torch.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

#: Subcommand modules, in the order `rods --help` lists them.
COMMAND_MODULES = (
    "rods.cli.tasks",
    "rods.cli.envs",
    "rods.cli.reward",
    "rods.cli.synth",
    "rods.cli.train",
    "rods.cli.compare",
    "rods.cli.eval",
    "rods.cli.export",
    "rods.cli.report",
    "rods.cli.demo",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rods",
        description="Reward-driven Online Data Synthesis for multi-turn tool-use RL.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log at DEBUG level")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError as err:
            # A missing subcommand is a broken install, never something to skip quietly.
            raise ImportError(f"rods: cannot load the subcommand module {name}: {err}") from err
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except (ValueError, OSError, RuntimeError) as err:
        # Bad input (a missing file, a directory where a file belongs, ...) gets a clear one-line error.
        print(f"rods {args.command}: error: {_said(err)}", file=sys.stderr)
        if args.verbose:
            raise
        return 1


def _said(err: Exception) -> str:
    """An error as one line; an OS error names its path first (`runs/x: Is a directory`)."""
    if isinstance(err, OSError) and err.filename is not None and err.strerror:
        return f"{err.filename}: {err.strerror}"
    return str(err)


if __name__ == "__main__":
    sys.exit(main())
