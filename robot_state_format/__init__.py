"""robot_state_format: one truth about a robot's state, shared across ROS 2 and simulators.

The public Python API (docs/api.md, one runnable example per name):

* models: :func:`load_model_file`, :func:`load_model`, :func:`detect_format`, :class:`Model` and its
  parts (:class:`Link`, :class:`Joint`, :class:`JointType`, :class:`Frame`, :class:`ModelFrame`,
  :class:`Limits`, :class:`Mimic`);
* kinematics: :func:`compile_model` → :class:`CompiledTree`; :func:`forward`, :func:`forward_batch`,
  :func:`joint_transforms`, :func:`joint_transforms_batch`, :func:`link_twists`,
  :func:`link_twists_batch`; :class:`KinematicsWarning`;
* USDF world states: :class:`WorldState`, :class:`ModelState`, :class:`LinkState`,
  :class:`JointState`, :class:`FrameState`, :class:`Stamp`; :func:`read_world_state`,
  :func:`read_world_state_file`, :func:`write_world_state`, :func:`write_world_state_file`;
  :func:`validate_against_model`, :func:`validate_world_against_models`, :func:`validate_schema`;
  :func:`state_from_model`, :class:`SnapshotBuilder` (and its :class:`Placement`), :func:`world_poses`;
* exports: :func:`state_to_sdf`, :func:`sdf_to_state` (SDFormat ``<state>``),
  :func:`load_mujoco_model`, :func:`mujoco_keyframe` (MuJoCo, an optional dependency);
* errors: :class:`RobotStateFormatError` and its subclasses, :class:`Diagnostic`, :class:`Severity`.

Importing the package is light: each name is imported from its home module on first use
(:pep:`562` ``__getattr__``), so ``import robot_state_format`` (and the command line's ``--help``)
loads neither numpy nor lxml.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (about 2 ms of every start-up)
if TYPE_CHECKING:  # the same names, for type checkers; at run time __getattr__ imports them when used
    from typing import Any

    from robot_state_format.errors import (
        ConversionError,
        Diagnostic,
        DiagnosticError,
        KinematicsError,
        ModelError,
        ModelIOError,
        RobotStateFormatError,
        Severity,
        UsdfError,
    )
    from robot_state_format.kinematics.fk import (
        forward,
        forward_batch,
        joint_transforms,
        joint_transforms_batch,
        link_twists,
        link_twists_batch,
    )
    from robot_state_format.kinematics.tree import CompiledTree, KinematicsWarning, compile_model
    from robot_state_format.model.loader import detect_format, load_model, load_model_file
    from robot_state_format.model.types import Frame, Joint, JointType, Limits, Link, Mimic, Model, ModelFrame
    from robot_state_format.usdf.build import Placement, SnapshotBuilder, state_from_model, world_poses
    from robot_state_format.usdf.export.mujoco import load_mujoco_model, mujoco_keyframe
    from robot_state_format.usdf.export.sdf_state import sdf_to_state, state_to_sdf
    from robot_state_format.usdf.reader import read_world_state, read_world_state_file
    from robot_state_format.usdf.types import FrameState, JointState, LinkState, ModelState, Stamp, WorldState
    from robot_state_format.usdf.validate import (
        validate_against_model,
        validate_schema,
        validate_world_against_models,
    )
    from robot_state_format.usdf.writer import write_world_state, write_world_state_file

_HOMES: dict[str, tuple[str, ...]] = {
    # home module: the public names it holds
    "robot_state_format.model.loader": ("load_model", "load_model_file", "detect_format"),
    "robot_state_format.model.types": ("Model", "Link", "Joint", "JointType", "Frame", "ModelFrame", "Limits",
                                       "Mimic"),
    "robot_state_format.kinematics.tree": ("compile_model", "CompiledTree", "KinematicsWarning"),
    "robot_state_format.kinematics.fk": ("forward", "forward_batch", "joint_transforms", "joint_transforms_batch",
                                         "link_twists", "link_twists_batch"),
    "robot_state_format.usdf.types": ("WorldState", "ModelState", "LinkState", "JointState", "FrameState", "Stamp"),
    "robot_state_format.usdf.reader": ("read_world_state", "read_world_state_file"),
    "robot_state_format.usdf.writer": ("write_world_state", "write_world_state_file"),
    "robot_state_format.usdf.validate": ("validate_against_model", "validate_world_against_models",
                                         "validate_schema"),
    "robot_state_format.usdf.build": ("state_from_model", "SnapshotBuilder", "Placement", "world_poses"),
    "robot_state_format.usdf.export.sdf_state": ("state_to_sdf", "sdf_to_state"),
    "robot_state_format.usdf.export.mujoco": ("load_mujoco_model", "mujoco_keyframe"),
    "robot_state_format.errors": ("RobotStateFormatError", "DiagnosticError", "ModelError", "ModelIOError",
                                  "KinematicsError", "UsdfError", "ConversionError", "Diagnostic", "Severity"),
}
_HOME_OF: dict[str, str] = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "CompiledTree",
    "ConversionError",
    "Diagnostic",
    "DiagnosticError",
    "Frame",
    "FrameState",
    "Joint",
    "JointState",
    "JointType",
    "KinematicsError",
    "KinematicsWarning",
    "Limits",
    "Link",
    "LinkState",
    "Mimic",
    "Model",
    "ModelError",
    "ModelFrame",
    "ModelIOError",
    "ModelState",
    "Placement",
    "RobotStateFormatError",
    "Severity",
    "SnapshotBuilder",
    "Stamp",
    "UsdfError",
    "WorldState",
    "__version__",
    "compile_model",
    "detect_format",
    "forward",
    "forward_batch",
    "joint_transforms",
    "joint_transforms_batch",
    "link_twists",
    "link_twists_batch",
    "load_model",
    "load_model_file",
    "load_mujoco_model",
    "mujoco_keyframe",
    "read_world_state",
    "read_world_state_file",
    "sdf_to_state",
    "state_from_model",
    "state_to_sdf",
    "validate_against_model",
    "validate_schema",
    "validate_world_against_models",
    "world_poses",
    "write_world_state",
    "write_world_state_file",
]


def __getattr__(name: str) -> Any:
    """A public name, imported from its home module on first use (then cached in this module)."""
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
