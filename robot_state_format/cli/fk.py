"""``robot-state-format fk MODEL --positions JSON [--velocities JSON] [--json]``: forward kinematics.

Poses of every model, link, joint and frame at the given configuration, in the world frame, as
``frames`` prints them (``--json``: the same document as ``frames --json``).  ``--positions`` and
``--velocities`` take a JSON object (or ``@FILE`` holding one) mapping joint names (scoped, e.g.
``robot::elbow``, or unscoped where unique) to a number or a list (ball: ``[qx, qy, qz, qw]``,
floating: ``[x, y, z, qx, qy, qz, qw]``, planar: ``[x, y, yaw]``); joints left out are at zero, or at
their default of a Drake Model Directives scene (``default_joint_positions``).
Values given for mimic followers are ignored with a warning; values outside a joint's limits are used as
given, each named in a warning line on stderr.  With ``--velocities`` the document
gains ``"twists": {LINK: {"linear": [..], "angular": [..]}}``: velocity of each link origin and
angular velocity, in the world frame.

Exit codes: 0 success, 1 invalid model or positions/velocities, 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np

from robot_state_format import options
from robot_state_format.cli._common import add_model_options, json_mapping, report_error
from robot_state_format.cli._kernel import numpy_kinematics
from robot_state_format.errors import RobotStateFormatError
from robot_state_format.kinematics import fk
from robot_state_format.kinematics.tree import compile_model
from robot_state_format.model.frames import format_frames_tree, frames_document
from robot_state_format.model.joint_limits import limit_warnings
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.types import Model
from robot_state_format.model.xacro.args import parse_xacro_args

PROG = "robot-state-format fk"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("fk", help="poses (and twists) of every link and frame at a configuration",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", metavar="MODEL", help="model file: .urdf, .xacro, .sdf, .world, .dmd.yaml")
    p.add_argument("--positions", metavar="JSON", default="{}",
                   help='joint positions, e.g. \'{"elbow": 0.5}\' or @positions.json (default: all zero)')
    p.add_argument("--velocities", metavar="JSON", default=None,
                   help="joint velocities, same form; adds link twists to the output")
    p.add_argument("--json", action="store_true", help="print the JSON document instead of a tree")
    p.add_argument("--indent", type=options.count(0, 64), default=2, help="JSON indentation (default 2)")
    add_model_options(p)
    p.set_defaults(func=numpy_kinematics(run))


def _clean(v: float) -> float:
    return 0.0 if abs(v) < 1e-15 else float(v)


def fk_document(model: Model, positions: dict[str, Any], velocities: dict[str, Any] | None,
                warn: list[str]) -> dict[str, Any]:
    """The ``fk --json`` document (``frames_document`` at the configuration, plus twists)."""
    tree = compile_model(model)
    q, w = tree.resolve_mapping({**model.default_positions, **positions})  # scene defaults (directives) first
    warn.extend(w)
    warn.extend(limit_warnings(model, positions, tree.resolve_joint))  # used as given, named on stderr
    poses = fk.forward(tree, q)
    doc = frames_document(model, {name: poses[i] for i, name in enumerate(tree.link_names)})
    if velocities is not None:
        v, w = tree.resolve_mapping(velocities, velocities=True)
        warn.extend(w)
        rot = np.asarray(model.pose, dtype=float)[:3, :3]
        tw = fk.link_twists(tree, q, v)
        doc["twists"] = {
            model.scoped(name): {"linear": [_clean(x) for x in rot @ tw[i, :3]],
                                 "angular": [_clean(x) for x in rot @ tw[i, 3:]]}
            for i, name in enumerate(tree.link_names)
        }
    return doc


def _format_twists(twists: dict[str, Any]) -> str:
    lines = ["twists (world frame): linear | angular"]
    for name, t in twists.items():
        lin = " ".join(f"{x:.6g}" for x in t["linear"])
        ang = " ".join(f"{x:.6g}" for x in t["angular"])
        lines.append(f"  {name}: {lin} | {ang}")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    try:
        xacro_args = parse_xacro_args(args.xacro_arg)
        positions = json_mapping(args.positions, "--positions")
        velocities = None if args.velocities is None else json_mapping(args.velocities, "--velocities")
    except ValueError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    warn: list[str] = []
    try:
        model = load_model_file(args.model, xacro_args=xacro_args, search_paths=args.search_path,
                                xacro=args.xacro)
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused below, not warned about
            doc = fk_document(model, positions, velocities, warn)
    except RobotStateFormatError as exc:
        return report_error(PROG, exc, args.model)
    for d in model.warnings:
        print(d.format(), file=sys.stderr)
    for w in warn:
        print(f"{PROG}: warning: {w}", file=sys.stderr)
    try:  # JSON has no NaN or Infinity; neither form prints a non-finite pose
        text = json.dumps(doc, indent=args.indent if args.indent > 0 else None, allow_nan=False)
    except ValueError:
        print(f"{PROG}: error: {args.model}: a pose or twist is not finite at this configuration (values this large "
              "overflow once composed)", file=sys.stderr)
        return 1
    if args.json:
        sys.stdout.write(text + "\n")
    else:
        tree = compile_model(model)
        q, _ = tree.resolve_mapping({**model.default_positions, **positions})
        poses = fk.forward(tree, q)
        sys.stdout.write(format_frames_tree(model, {n: poses[i] for i, n in enumerate(tree.link_names)}))
        if "twists" in doc:
            sys.stdout.write(_format_twists(doc["twists"]))
    return 0

