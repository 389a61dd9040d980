"""``robot-state-format frames MODEL [NAME:=VALUE ...] [--json]``: world poses of every model, link,
joint and frame at the zero configuration (every joint at 0, a mimic follower at its ``offset``, the
value its relation gives with the leader at 0: what ``fk`` with no positions prints; a Drake Model Directives scene: at its
default joint positions), as JSON (``{"frames": ..., "joints": ...}``) or a readable
tree. ``NAME:=VALUE`` items are xacro arguments, as on the ``xacro`` command line (or
``--xacro-arg NAME:=VALUE``).

Exit codes: 0 success, 1 invalid model (errors on stderr), 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import json
import sys

from robot_state_format import options
from robot_state_format.cli._common import add_model_options, report_error, split_xacro_items
from robot_state_format.cli._kernel import numpy_kinematics
from robot_state_format.errors import RobotStateFormatError
from robot_state_format.kinematics import fk
from robot_state_format.kinematics.tree import compile_model
from robot_state_format.model.frames import format_frames_tree, frames_document
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.types import Model
from robot_state_format.spatial import Transform


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = subparsers.add_parser("frames", help="poses of every model, link, joint and frame (zero configuration)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", metavar="MODEL", help="model file: .urdf, .xacro, .sdf, .world, .dmd.yaml")
    p.add_argument("xacro_items", nargs="*", metavar="NAME:=VALUE", help="xacro argument(s)")
    p.add_argument("--json", action="store_true", help="print the JSON document instead of a tree")
    p.add_argument("--indent", type=options.count(0, 64), default=2, help="JSON indentation (default 2)")
    add_model_options(p)
    p.set_defaults(func=numpy_kinematics(run))


def default_link_poses(model: Model) -> dict[str, Transform]:
    """Link poses at the model's default configuration: zero, or ``Model.default_positions`` (a Drake
    Model Directives scene's ``default_joint_positions``), mimic followers from their leaders."""
    tree = compile_model(model)
    q, _ = tree.resolve_mapping(model.default_positions)
    poses = fk.forward(tree, q)
    return {name: poses[i] for i, name in enumerate(tree.link_names)}


def zero_link_poses(model: Model) -> dict[str, Transform] | None:
    """Link poses at the zero configuration (a directives scene: its default one) when a mimic relation
    moves a follower away from its ``Link.pose`` (leader at 0, follower at ``offset``) or the scene has
    default positions; None when ``Link.pose`` already is that."""
    if not model.default_positions and not any(m.offset != 0.0 for j in model.joints.values() for m in j.mimic):
        return None
    return default_link_poses(model)


def run(args: argparse.Namespace) -> int:
    try:
        models, xacro_args = split_xacro_items([args.model, *args.xacro_items], args.xacro_arg)
        if len(models) != 1:
            raise ValueError(f"expected one MODEL file, got {len(models)}: {' '.join(models) or '(none)'}")
    except ValueError as exc:
        print(f"robot-state-format frames: error: {exc}", file=sys.stderr)
        return 2
    path = models[0]
    try:
        model = load_model_file(path, xacro_args=xacro_args, search_paths=args.search_path,
                                xacro=args.xacro)
        link_poses = zero_link_poses(model)
        if args.json:
            try:  # JSON has no NaN or Infinity: a non-finite value is refused, never printed
                text = json.dumps(frames_document(model, link_poses), indent=args.indent if args.indent > 0 else None,
                                  allow_nan=False)
            except ValueError:
                print(f"robot-state-format frames: error: {path}: a pose or axis is not finite; not written as JSON",
                      file=sys.stderr)
                return 1
            sys.stdout.write(text + "\n")
        else:
            sys.stdout.write(format_frames_tree(model, link_poses))
    except RobotStateFormatError as exc:
        return report_error("robot-state-format frames", exc, path)
    for d in model.warnings:
        print(d.format(), file=sys.stderr)
    return 0
