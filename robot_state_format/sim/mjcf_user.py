"""A user's own MJCF file in MuJoCo: the joint mapping of a Model read from it (docs/simulation.md).

``sim run robot.xml --engine mujoco`` loads the user's file itself (``MjModel.from_xml_path``: its
includes, meshes, options, actuators and contacts as written), not an MJCF generated from the Model.
The MJCF reader names every Model joint as MuJoCo's joint (an unnamed one ``joint<ID>``) and makes a
joint's value MuJoCo's ``qpos`` of it (a free joint's: the body's world pose), so the mapping is one
MuJoCo joint per moving Model joint, with identity frames. Bodies map by name (an unnamed one
``body<ID>``); the virtual links of a body with several joints have no MuJoCo body.
"""

from __future__ import annotations

import numpy as np

from robot_state_format.errors import ConversionError
from robot_state_format.limits import read_input_file
from robot_state_format.model.types import Model
from robot_state_format.sim.mjcf_writer import MappedJoint, MjcfLayout

__all__ = ["is_user_mjcf", "mj_body_name", "mj_joint_name", "user_layout"]


def is_user_mjcf(model: Model) -> bool:
    """The Model was read from an MJCF file (MuJoCo loads that file)."""
    return model.format == "mjcf"


def mj_joint_name(name: str | None, index: int) -> str:
    """The Model's name of MuJoCo joint ``index`` (the MJCF reader's rule for unnamed joints)."""
    return name or f"joint{index}"


def mj_body_name(name: str | None, index: int) -> str:
    """The Model's link name of MuJoCo body ``index``."""
    return name or f"body{index}"


def user_layout(model: Model) -> MjcfLayout:
    """The layout of the user's MJCF file: its text and one MuJoCo joint per moving Model joint."""
    try:
        text = read_input_file(model.source_file).decode("utf-8", "replace")
    except OSError as exc:
        raise ConversionError(f"{model.source_file}: cannot read: {exc}") from None
    joints = [MappedJoint(j.name, j.type, [j.name], np.eye(3), np.zeros(3), np.eye(4), np.eye(4))
              for j in model.joints.values() if j.is_moving]
    return MjcfLayout(text, joints, [], [n for n in model.links if "/" not in n],
                      ["MuJoCo runs the model file itself: its own options, actuators (no control) and contacts"])


