"""MoveIt's named sub-joints of multi-DOF joints (``<joint>/<dof>``): the one table every part uses.

floating ``trans_x trans_y trans_z rot_x rot_y rot_z rot_w``, planar ``x y theta``, ball
``rot_x rot_y rot_z rot_w``, universal and revolute2 ``axis1 axis2``. A quaternion's ``rot_w`` has
no velocity of its own.
"""

from __future__ import annotations

from robot_state_format.model.types import JointType

MULTI_DOF_NAMES: dict[JointType, tuple[tuple[str, int, int | None], ...]] = {
    JointType.FLOATING: (("trans_x", 0, 0), ("trans_y", 1, 1), ("trans_z", 2, 2),
                         ("rot_x", 3, 3), ("rot_y", 4, 4), ("rot_z", 5, 5), ("rot_w", 6, None)),
    JointType.PLANAR: (("x", 0, 0), ("y", 1, 1), ("theta", 2, 2)),
    JointType.BALL: (("rot_x", 0, 0), ("rot_y", 1, 1), ("rot_z", 2, 2), ("rot_w", 3, None)),
    JointType.UNIVERSAL: (("axis1", 0, 0), ("axis2", 1, 1)),
    JointType.REVOLUTE2: (("axis1", 0, 0), ("axis2", 1, 1)),
}
"""(suffix, index in the joint's q, index in the joint's v or None) per multi-DOF joint type."""

MULTI_DOF_SUFFIXES: dict[JointType, tuple[str, ...]] = {
    jtype: tuple(name for name, _, _ in dofs) for jtype, dofs in MULTI_DOF_NAMES.items()}
"""The sub-joint suffixes alone, in q order."""
