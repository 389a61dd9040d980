"""``robot-state-format check MODEL... [NAME:=VALUE ...]``: validate robot descriptions (URDF, xacro,
SDFormat). ``NAME:=VALUE`` items are xacro arguments, as on the ``xacro`` command line (or
``--xacro-arg NAME:=VALUE``).

One flag, one verdict: plain ``check`` is urdfdom's verdict on a URDF (as robot_state_publisher loads it),
``--strict`` adds the file's own lint (its warnings fail), ``--gazebo`` is libsdformat 12's (Gazebo's URDF
conversion). What Gazebo alone would refuse is printed without ``--gazebo`` as a note
(``FILE:LINE: note: [CODE] libsdformat 12 (Gazebo) refuses this URDF: ...``), which neither plain ``check``
nor ``--strict`` fails on.

Exit codes: 0 every file valid (warnings printed on stdout as ``FILE:LINE: warning: [CODE] text``),
1 some file invalid (its errors, then its warnings, on stderr as ``FILE:LINE: error: [CODE] text``),
or, with ``--gazebo``, some URDF is refused by libsdformat 12 (Gazebo's URDF conversion),
or, with ``--strict``, some file has warnings,
2 usage or I/O error (unreadable file, malformed xacro argument, no MODEL), or xacro missing for a xacro file.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from robot_state_format.cli._common import add_model_options, report_error, split_xacro_items
from robot_state_format.errors import Diagnostic, RobotStateFormatError, Severity
from robot_state_format.model.loader import gazebo_refusals, load_model_file

PROG = "robot-state-format check"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("check", help="validate robot descriptions (URDF, xacro, SDFormat)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("models", nargs="+", metavar="MODEL",
                   help="model file(s): .urdf, .xacro, .sdf, .world, .dmd.yaml; NAME:=VALUE items are xacro arguments")
    p.add_argument("-q", "--quiet", action="store_true", help="print no summary line for valid files")
    p.add_argument("--strict", action="store_true",
                   help="lint: a file with warnings fails too (exit 1); without it only errors fail. What only "
                        "Gazebo refuses is a note, not a warning: --gazebo judges that")
    p.add_argument("--gazebo", action="store_true",
                   help="judge URDF (and xacro) as Gazebo loads it, by libsdformat 12's URDF conversion: what it "
                        "refuses fails (exit 1); without it a URDF is judged by urdfdom, as robot_state_publisher "
                        "loads it, and those refusals are notes. SDFormat is always judged by libsdformat")
    add_model_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        models, xacro_args = split_xacro_items(args.models, args.xacro_arg)
    except ValueError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    if not models:
        print(f"{PROG}: error: no MODEL file given (only xacro arguments)", file=sys.stderr)
        return 2
    status = 0
    for path in models:
        try:
            model = load_model_file(path, xacro_args=xacro_args, search_paths=args.search_path,
                                    xacro=args.xacro)
        except RobotStateFormatError as exc:
            status = max(status, report_error(PROG, exc, path))
            continue
        refused = gazebo_refusals(model) if args.gazebo else []
        if refused:  # libsdformat's verdict: its refusals are errors, printed as an invalid file's are
            for d in refused:
                print(replace(d, severity=Severity.ERROR).format(), file=sys.stderr)
            for d in model.warnings:
                if d not in refused:
                    print(d.format(), file=sys.stderr)
            status = max(status, 1)
            continue
        notes = gazebo_refusals(model)  # Gazebo's verdict, which only --gazebo judges by
        warnings = [d for d in model.warnings if d not in notes]
        for d in model.warnings:
            print(d.format() if d not in notes else _note(d))
        if args.strict and warnings:
            status = max(status, 1)
        if not args.quiet:
            kind = "world" if model.is_world else "model"
            gazebo = "; Gazebo would refuse it (check --gazebo)" if notes else ""
            print(f"{path}: valid {model.format} {kind} {model.name!r}: {len(model.links)} links, "
                  f"{len(model.joints)} joints, {len(warnings)} warnings{gazebo}")
    return status


def _note(d: Diagnostic) -> str:
    """``FILE:LINE: note: [CODE] text``: a Gazebo refusal shown by plain ``check`` (not a warning)."""
    return d.format().replace(f": {d.severity.value}: [{d.code}]", f": note: [{d.code}]", 1)
