"""Helpers shared by the SDFormat tests (not a test module)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference_kinematics import axis_angle, pose

from robot_state_format.errors import ModelError
from robot_state_format.model.sdf import read_sdf
from robot_state_format.model.types import Joint, JointType, Model


def sdf(body: str, version: str = "1.7") -> Model:
    return read_sdf(f'<sdf version="{version}">{body}</sdf>')


def codes_of(body: str, version: str = "1.7") -> list[str]:
    with pytest.raises(ModelError) as info:
        sdf(body, version)
    return [d.code for d in info.value.errors]


def T(x: float = 0, y: float = 0, z: float = 0, r: float = 0, p: float = 0, yw: float = 0) -> np.ndarray:
    return pose(x, y, z, r, p, yw)


def assert_pose(actual: np.ndarray, expected: np.ndarray, tol: float = 1e-9) -> None:
    np.testing.assert_allclose(actual, expected, atol=tol, rtol=0)


def motion(joint: Joint, q: float) -> np.ndarray:
    """The joint motion for one coordinate (revolute/continuous/prismatic), written independently."""
    m = np.eye(4)
    a = np.array(joint.axis)
    if joint.type in (JointType.REVOLUTE, JointType.CONTINUOUS):
        m[:3, :3] = axis_angle(a, q)
    elif joint.type is JointType.PRISMATIC:
        m[:3, 3] = a * q
    elif joint.type is JointType.SCREW:
        m[:3, :3] = axis_angle(a, q)
        m[:3, 3] = a * joint.screw_pitch * q / (2 * math.pi)
    return m


def fk(model: Model, q: dict[str, float]) -> dict[str, np.ndarray]:
    """Link poses in the root frame: X_PC(q) = origin @ motion(q) @ child_offset along the tree."""
    poses: dict[str, np.ndarray] = {}
    for name in model.root_links():
        poses[name] = model.links[name].pose
    pending = list(model.joints.values())
    for j in pending:
        if j.parent == "world":
            poses[j.child] = j.origin @ motion(j, q.get(j.name, 0.0)) @ j.child_offset
    changed = True
    while changed:
        changed = False
        for j in pending:
            if j.parent in poses and j.child not in poses:
                poses[j.child] = poses[j.parent] @ j.origin @ motion(j, q.get(j.name, 0.0)) @ j.child_offset
                changed = True
    return poses
