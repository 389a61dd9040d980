"""Per-joint constants of the compilation: unit axes, cross-product matrices, the planar basis, the
kernels' array layouts, and how the pose kernel treats each joint (:class:`JointInfo`, ``KIND_*``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from robot_state_format.errors import KinematicsError
from robot_state_format.kinematics.plan import aligned_columns
from robot_state_format.model.types import Joint, JointType

FloatArray = NDArray[np.float64]

KIND_FIXED, KIND_ALIGNED_X, KIND_ALIGNED_Y, KIND_ALIGNED_Z, KIND_GENERAL, KIND_PRISMATIC, KIND_GENERIC = range(7)
"""How the pose kernel treats a joint (links of a level are grouped by it)."""

EYE4 = np.eye(4)
EYE4.flags.writeable = False  # shared: only ever read

def unit3(v: Sequence[float] | None, default: tuple[float, float, float], joint: Joint,
           what: str) -> tuple[float, float, float]:
    """``v`` (or ``default``) scaled to unit length, as three floats (plain Python: cheaper than numpy)."""
    src = default if v is None else v
    try:
        x, y, z = (float(c) for c in src)
    except (TypeError, ValueError):
        raise KinematicsError(f"joint {joint.name!r}: {what} must be a non-zero finite 3-vector, got {v!r}") from None
    n = math.sqrt(x * x + y * y + z * z)
    if not math.isfinite(n) or n < 1e-12:
        raise KinematicsError(f"joint {joint.name!r}: {what} must be a non-zero finite 3-vector, got {v!r}")
    return x / n, y / n, z / n


def unit(v: Sequence[float] | None, default: tuple[float, float, float], joint: Joint, what: str) -> FloatArray:
    return np.array(unit3(v, default, joint, what))


def skew(a: FloatArray) -> FloatArray:
    k = np.zeros((4, 4))
    k[:3, :3] = [[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]]
    return k


def skews(axes: FloatArray) -> FloatArray:
    """``(g, 4, 4)`` cross-product matrices of unit axes ``(g, 3)``."""
    k = np.zeros((len(axes), 4, 4))
    x, y, z = axes[:, 0], axes[:, 1], axes[:, 2]
    k[:, 0, 1], k[:, 0, 2], k[:, 1, 2] = -z, y, -x
    k[:, 1, 0], k[:, 2, 0], k[:, 2, 1] = z, -y, x
    return k


def planar_basis3(n: Sequence[float] | FloatArray) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    x, y, z = (float(c) for c in n)
    mags = [abs(x), abs(y), abs(z)]
    i = mags.index(min(mags))  # first index of the smallest |n_i|
    u = [0.0, 0.0, 0.0]
    u[i] = 1.0
    ni = (x, y, z)[i]
    e = (u[0] - ni * x, u[1] - ni * y, u[2] - ni * z)
    m = math.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
    e1 = (e[0] / m, e[1] / m, e[2] / m)
    e2 = (y * e1[2] - z * e1[1], z * e1[0] - x * e1[2], x * e1[1] - y * e1[0])
    return e1, e2


def planar_basis(normal: Sequence[float] | FloatArray) -> tuple[FloatArray, FloatArray]:
    """In-plane basis ``(e1, e2)`` of a planar joint with unit normal ``normal`` (see module doc)."""
    e1, e2 = planar_basis3(normal)
    return np.array(e1), np.array(e2)


def transform(t: object, joint: Joint, what: str) -> FloatArray:
    a = np.asarray(t, dtype=np.float64)
    if a.shape != (4, 4) or not np.all(np.isfinite(a)):
        raise KinematicsError(f"joint {joint.name!r}: {what} must be a finite 4x4 transform")
    return a


def top(m: FloatArray) -> FloatArray:
    """3x4 top block of a 4x4 transform."""
    return np.array(m[:3, :], dtype=np.float64)


def stack(items: list[FloatArray]) -> FloatArray:
    """Stack per-joint constants on a joint axis placed before a trailing configuration axis of 1.

    ``(3, 4)`` items give ``(3, 4, g, 1)``; ``(3,)`` items give ``(3, g, 1)``.
    """
    return np.ascontiguousarray(np.stack(items, axis=-1)[..., None])


def tops(m: FloatArray) -> FloatArray:
    """``(g, 4, 4)`` transforms to the kernels' ``(3, 4, g, 1)`` layout (see :func:`stack`)."""
    return np.ascontiguousarray(m[:, :3, :].transpose(1, 2, 0)[..., None])



@dataclass
class JointInfo:
    """What the compilation needs of one joint, computed once."""

    kind: int
    axis: tuple[float, float, float] | None  # unit axis (None: fixed, ball, floating)
    q: FloatArray | None  # revolute/continuous: the change of basis Q (None: I, an axis along +-X/Y/Z)
    sign: float  # revolute/continuous: sign of the coordinate axis
    held: bool  # the pose kernel holds the child as X D^-1 (D = Q^T child_offset != I)


AXIS_TYPES = (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.SCREW, JointType.PRISMATIC,
               JointType.UNIVERSAL, JointType.REVOLUTE2)


def joint_info(j: Joint, default_axis: tuple[float, float, float], b: FloatArray, b_is_eye: bool) -> JointInfo:
    """``b``: the joint's child offset (validated), ``b_is_eye``: whether it is the identity."""
    t = j.type
    if t is JointType.FIXED:
        return JointInfo(KIND_FIXED, None, None, 1.0, False)
    if t is JointType.PLANAR:
        return JointInfo(KIND_GENERIC, unit3(j.axis, (0.0, 0.0, 1.0), j, "axis"), None, 1.0, False)
    if t not in AXIS_TYPES:
        return JointInfo(KIND_GENERIC, None, None, 1.0, False)
    ax = unit3(j.axis, default_axis, j, "axis")
    if t is JointType.SCREW:
        return JointInfo(KIND_GENERAL, ax, None, 1.0, False)
    if t is JointType.PRISMATIC:
        return JointInfo(KIND_PRISMATIC, ax, None, 1.0, False)
    if t not in (JointType.REVOLUTE, JointType.CONTINUOUS):
        return JointInfo(KIND_GENERIC, ax, None, 1.0, False)
    cols = aligned_columns(ax)
    if cols is None:  # turned onto Z by Q = [e1 e2 axis] (the planar basis)
        e1, e2 = planar_basis3(ax)
        q = np.array([[e1[0], e2[0], ax[0], 0.0], [e1[1], e2[1], ax[1], 0.0], [e1[2], e2[2], ax[2], 0.0],
                      [0.0, 0.0, 0.0, 1.0]])
        # Q^T b == I only if b == Q, never the identity here (the axis is not a coordinate axis)
        return JointInfo(KIND_ALIGNED_Z, ax, q, 1.0, b_is_eye or not np.array_equal(q.T @ b, EYE4))
    kind = (KIND_ALIGNED_X, KIND_ALIGNED_Y, KIND_ALIGNED_Z)[(1, 2, 0).index(cols[0])]
    return JointInfo(kind, ax, None, cols[2], not b_is_eye)


