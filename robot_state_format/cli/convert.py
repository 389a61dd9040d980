"""``robot-state-format convert MODEL --to urdf|sdf [-o OUT]``: rewrite a model in the other format.

Exit codes: 0 written (notes about the conversion on stderr), 1 the model is invalid or cannot
be expressed in the target format (the reason on stderr), 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from pathlib import Path

from robot_state_format.errors import ConversionError, DiagnosticError, ModelIOError, Severity
from robot_state_format.limits import shown_path
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.writer import convert_model
from robot_state_format.output_dirs import ensure_parent, output_file_problem


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("convert", help="convert a model between URDF and SDFormat",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", metavar="MODEL", help="model file: .urdf, .xacro, .sdf")
    p.add_argument("--to", required=True, choices=("urdf", "sdf"), help="target format")
    p.add_argument("-o", "--output", metavar="OUT", help="output file (default: standard output)")
    p.add_argument("--strict", action="store_true",
                   help="refuse instead of moving a link frame to its joint frame (SDFormat to URDF)")
    p.add_argument("--xacro-arg", action="append", default=[], metavar="NAME:=VALUE",
                   help="xacro argument (repeatable)")
    p.add_argument("--xacro", action="store_true",
                   help="expand xacro whatever the file's name (by default only .xacro files and files whose "
                        "root declares xmlns:xacro are expanded)")
    p.add_argument("--search-path", action="append", default=[], metavar="DIR",
                   help="extra directory for SDFormat includes (repeatable)")
    p.set_defaults(func=run)


def _err(msg: str) -> None:
    print(f"robot-state-format convert: {msg}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    xacro_args: dict[str, str] = {}
    for item in args.xacro_arg:
        name, sep, value = item.partition(":=")
        if not sep or not name:
            _err(f"error: --xacro-arg {item!r} is not NAME:=VALUE")
            return 2
        xacro_args[name] = value
    try:
        model = load_model_file(args.model, xacro_args=xacro_args, search_paths=args.search_path,
                                xacro=args.xacro)
    except ModelIOError as exc:
        _err(f"error: {exc}")
        return 2
    except DiagnosticError as exc:
        for d in exc.diagnostics:
            if d.severity is Severity.ERROR:
                print(d.format(), file=sys.stderr)
        return 1
    try:
        result = convert_model(model, args.to, strict=args.strict)
    except ConversionError as exc:
        _err(f"error: cannot convert {args.model} to {args.to}: {exc}")
        return 1
    for w in result.warnings:
        _err(f"warning: {w}")
    if not args.output:
        sys.stdout.write(result.text)
        return 0
    out = Path(args.output)
    problem = output_file_problem(out)
    problem = f"{shown_path(out)}: {problem}" if problem is not None else ensure_parent(out)
    if problem is not None:
        _err(f"error: {problem}")
        return 2
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=str(out.parent or Path(".")))
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(result.text)
        os.replace(tmp, out)
    except OSError as exc:
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(tmp)
        _err(f"error: cannot write {shown_path(out)}: {exc.strerror or exc}")
        return 2
    return 0
