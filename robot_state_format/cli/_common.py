"""Pieces shared by the commands that read a model: options and the error → exit-code contract."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from robot_state_format.errors import (
    DiagnosticError,
    KinematicsError,
    ModelIOError,
    RobotStateFormatError,
    Severity,
)
from robot_state_format.lazy_modules import MissingDependencyError
from robot_state_format.model.xacro.args import parse_xacro_args
from robot_state_format.options import json_object


def add_model_options(p: argparse.ArgumentParser) -> None:
    """Options shared by commands that read a model: ``--xacro-arg`` and ``--search-path``."""
    p.add_argument("--xacro-arg", action="append", default=[], metavar="NAME:=VALUE",
                   help="xacro argument (repeatable); may also be given as a positional NAME:=VALUE")
    p.add_argument("--search-path", action="append", default=[], metavar="DIR",
                   help="extra directory for SDFormat includes (repeatable)")
    p.add_argument("--xacro", action="store_true",
                   help="expand xacro whatever the file's name (by default only .xacro files and files whose "
                        "root declares xmlns:xacro are expanded)")


def split_xacro_items(items: list[str], options: list[str]) -> tuple[list[str], dict[str, str]]:
    """Positional ``items`` → (model paths, xacro arguments).

    As on the ``xacro`` command line, an item ``name:=value`` is a xacro argument (unless a file of
    that name exists); the others are model paths. ``options`` are the ``--xacro-arg`` values; a
    name given both ways takes the positional value. Raise ``ValueError`` (a usage error) on a
    malformed argument.
    """
    paths: list[str] = []
    positional: list[str] = []
    for item in items:
        if ":=" in item and not os.path.lexists(item):  # never raises (a name too long is no file)
            positional.append(item)
        else:
            paths.append(item)
    if not positional and not options:
        return paths, {}
    args = parse_xacro_args(options)
    args.update(parse_xacro_args(positional))
    return paths, args


def report_error(prog: str, exc: RobotStateFormatError, path: str) -> int:
    """Print ``exc`` the way every command does and return its exit code.

    I/O errors and a missing dependency: ``PROG: error: ...``, exit 2. Document errors: each diagnostic as
    ``FILE:LINE: error: [CODE] text`` (errors first, then warnings), exit 1. Kinematics errors
    (positions that do not fit the model): ``PROG: error: ...``, exit 1. Any other error of this
    package makes the file unusable: ``PATH: error: ...``, exit 1.
    """
    if isinstance(exc, (ModelIOError, MissingDependencyError)):  # MissingDependencyError: e.g. xacro for a .xacro
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    if isinstance(exc, DiagnosticError):
        errors = [d for d in exc.diagnostics if d.severity is Severity.ERROR]
        others = [d for d in exc.diagnostics if d.severity is not Severity.ERROR]
        for d in errors + others:
            print(d.format(), file=sys.stderr)
        return 1
    if isinstance(exc, KinematicsError):
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 1
    print(f"{path}: error: {exc}", file=sys.stderr)
    return 1


def json_mapping(text: str, option: str) -> dict[str, Any]:
    """A ``{joint: value}`` JSON object given inline, as ``@FILE``, or as the path of a JSON file.

    Raise ``ValueError`` (a usage error, exit 2) naming ``option`` when it cannot be read or is not
    a JSON object.
    """
    return json_object(text, option)
