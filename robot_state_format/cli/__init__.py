"""The ``robot-state-format`` command line.

Each command group lives in its own module under ``robot_state_format/cli/`` and exposes
``register(subparsers) -> None``, adding its sub-command(s) with ``set_defaults(func=...)``;
``func(args) -> int`` returns the exit code.

Commands are loaded lazily: :data:`COMMANDS` names each command's module and one-line help, so
``--help`` imports no command module and a command imports only its own module (``check`` does not
pay for numpy-heavy kinematics or rclpy).  A new command module joins with one line in
:data:`COMMANDS`; until then it is still found (every module of this package not listed is imported
when the command line names no listed command: slower, but never missing).  A command module
imports what it needs at its top (only optional heavy packages, such as mujoco or matplotlib, are
imported where used); commands that compute kinematics wrap their ``func`` in
:func:`robot_state_format.cli._kernel.numpy_kinematics`.

Exit codes (a contract, the same for every command; README "Command line"): 0 success/valid (also a
command stopped by Ctrl-C or SIGTERM), 1 invalid input or refused (an invalid model or document, joint
values that do not fit the model, a restart file that does not fit, nothing to save), 2 usage or I/O
error (bad options or JSON, a missing or unreadable file, an output that cannot be written).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from robot_state_format import __version__
from robot_state_format.lazy_modules import MissingDependencyError
from robot_state_format.options import Parser

EXIT_CODES = ("exit codes (every command): 0 done/valid (also stopped by Ctrl-C or SIGTERM where a command runs "
              "until stopped); 1 invalid input or refused (invalid model or document, joint values that do not "
              "fit the model, nothing to save); 2 usage or I/O error (bad options or JSON, a missing or "
              "unreadable file, an output that cannot be written)")

COMMANDS: dict[str, tuple[str, str]] = {
    # command: (module in robot_state_format/cli/, the help line shown by --help)
    "check": ("check", "validate robot descriptions (URDF, xacro, SDFormat)"),
    "convert": ("convert", "convert a model between URDF and SDFormat"),
    "fk": ("fk", "poses (and twists) of every link and frame at a configuration"),
    "frames": ("frames", "poses of every model, link, joint and frame (zero configuration)"),
    "state": ("state", "USDF world_state files: validate, build, export, import, plot"),
    "save": ("store", "write one restart file from the live state"),
    "record": ("store", "record a session (TF, model, joint states, snapshots) into MCAP"),
    "replay": ("store", "publish a restart file, or play a recording"),
    "reindex": ("reindex", "rebuild metadata.yaml of a recording from its MCAP files"),
    "joint-states": ("joint_states", "publish joint states: fixed values, a sweep, or a file"),
    "sim": ("sim", "simulate a model (MuJoCo, Drake) with USDF restart files"),
    "view": ("view", "show a model, restart file, recording or live robots in a browser"),
}


def _unlisted_modules() -> list[str]:
    """Command modules of this package that :data:`COMMANDS` does not name (``_*`` skipped).

    Read from the directory (``os.scandir``: pkgutil would cost ``--help`` about 3 ms of imports).
    """
    listed = {m for m, _ in COMMANDS.values()}
    found: set[str] = set()
    for directory in __path__:
        with os.scandir(directory) as entries:
            for e in entries:
                if e.is_file() and e.name.endswith(".py"):
                    name = e.name[:-3]
                elif e.is_dir() and os.path.isfile(os.path.join(e.path, "__init__.py")):
                    name = e.name  # a command package
                else:
                    continue
                if name.isidentifier() and not name.startswith("_") and name not in listed:
                    found.add(name)
    return sorted(found)


def _register(sub: argparse._SubParsersAction, module: str) -> None:  # type: ignore[type-arg]
    register = getattr(importlib.import_module(f"{__name__}.{module}"), "register", None)
    if register is not None:
        register(sub)


def _command_word(argv: Sequence[str]) -> str | None:
    """The command named on the command line (the first word not starting with ``-``)."""
    for word in argv:
        if not word.startswith("-"):
            return word
    return None


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser, with the full sub-parser of the command ``argv`` names (all of them when None).

    The other commands get a placeholder (name and help line) so that ``--help`` lists them.
    """
    parser = Parser(
        prog="robot-state-format",
        description="Read robot models, compute their frames and share their state as USDF.",
        epilog=EXIT_CODES,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    if argv is None:
        modules = sorted({m for m, _ in COMMANDS.values()}) + _unlisted_modules()
    else:
        word = _command_word(argv)
        modules = [COMMANDS[word][0]] if word in COMMANDS else _unlisted_modules()
    for module in modules:
        _register(sub, module)
    for name, (_module, help_line) in COMMANDS.items():
        if name not in sub.choices:
            sub.add_parser(name, help=help_line, add_help=False)
    _plain_help(parser)
    return parser


def _plain_help(parser: argparse.ArgumentParser) -> None:
    """The commands' descriptions are their module docstrings (reStructuredText): ``code`` shows as `code`."""
    for action in parser._actions:
        if action.help:
            action.help = action.help.replace("``", "`")
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _plain_help(child)
    if parser.description:
        parser.description = parser.description.replace("``", "`")
    if parser.epilog:
        parser.epilog = parser.epilog.replace("``", "`")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return _main(argv)
    except MissingDependencyError as exc:  # an optional part is not installed: one line, how to install it
        word = next((a for a in argv if a in COMMANDS), "")
        print(f"robot-state-format{' ' + word if word else ''}: error: {exc}", file=sys.stderr)
        return 2


def _main(argv: list[str]) -> int:
    parser = build_parser(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    try:  # commands that compute kinematics run them with numpy (cli/_kernel.py)
        return int(func(args))
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt as exc:  # Ctrl-C, or a stop forced while blocked (ros/spin.py: its signal)
        return 128 + int(getattr(exc, "signum", 2))


def entry_point() -> None:
    sys.exit(main())
