"""``robot-state-format frames MODEL [--json]``: world poses of every model, link, joint and frame
at the zero configuration, as JSON (``{"frames": ..., "joints": ...}``) or a readable tree.

Exit codes: 0 success, 1 invalid model (errors on stderr), 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import json
import sys

from robot_state_format.cli._common import add_model_options, report_error
from robot_state_format.errors import RobotStateFormatError
from robot_state_format.model.frames import format_frames_tree, frames_document
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.xacro import parse_xacro_args


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("frames", help="poses of every model, link, joint and frame (zero configuration)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", metavar="MODEL", help="model file: .urdf, .xacro, .sdf, .world")
    p.add_argument("--json", action="store_true", help="print the JSON document instead of a tree")
    p.add_argument("--indent", type=int, default=2, help="JSON indentation (default 2)")
    add_model_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        xacro_args = parse_xacro_args(args.xacro_arg)
    except ValueError as exc:
        print(f"robot-state-format frames: error: {exc}", file=sys.stderr)
        return 2
    try:
        model = load_model_file(args.model, xacro_args=xacro_args, search_paths=args.search_path)
        if args.json:
            text = json.dumps(frames_document(model), indent=args.indent if args.indent > 0 else None)
            sys.stdout.write(text + "\n")
        else:
            sys.stdout.write(format_frames_tree(model))
    except RobotStateFormatError as exc:
        return report_error("robot-state-format frames", exc, args.model)
    for d in model.warnings:
        print(d.format(), file=sys.stderr)
    return 0
