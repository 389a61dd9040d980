"""The ``robot-state-format`` command line.

Each command group lives in its own module under ``robot_state_format/cli/`` and exposes
``register(subparsers) -> None``, adding its sub-command(s) with ``set_defaults(func=...)``;
``func(args) -> int`` returns the exit code.  Modules are discovered here, so adding a
command never edits a shared file.

Exit codes (a contract): 0 success/valid, 1 invalid input document, 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence

from robot_state_format import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="robot-state-format",
        description="Read robot models, compute their frames and share their state as USDF.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(func(args))
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


def entry_point() -> None:
    sys.exit(main())
