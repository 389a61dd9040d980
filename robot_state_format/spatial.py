"""Rigid transforms, rotations and quaternions (the one implementation; numpy only): 4x4 homogeneous arrays.

Conventions (the whole package uses them):
- a pose is ``x y z roll pitch yaw`` with fixed-axis rpy: ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)``;
- quaternions are in ROS order ``(x, y, z, w)``;
- ``X_AB`` is the pose of frame B in frame A; ``X_AC = X_AB @ X_BC``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

Transform = NDArray[np.float64]
"""A 4x4 homogeneous transform (float64)."""


def identity() -> Transform:
    return np.eye(4)


def rpy_to_matrix(roll: float, pitch: float, yaw: float) -> NDArray[np.float64]:
    """3x3 rotation for fixed-axis roll, pitch, yaw: Rz(yaw) Ry(pitch) Rx(roll)."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def matrices_to_rpy(rot: NDArray[np.float64]) -> NDArray[np.float64]:
    """Roll, pitch, yaw of rotation matrices ``(..., 3, 3)`` → ``(..., 3)``; inverse of :func:`rpy_to_matrix`.

    Pitch is in [-pi/2, pi/2]. Accurate everywhere, gimbal lock included: yaw comes from the first
    column, then roll and pitch from the matrix with that yaw removed, whose entries stay of order
    one, so ``rpy_to_matrix(*matrices_to_rpy(R))`` reproduces ``R`` to rounding even a hair away
    from pitch = +-pi/2 (where ``asin`` would lose half the digits). At exact lock yaw is 0.
    """
    r0, r1, r2 = rot[..., 0, :], rot[..., 1, :], rot[..., 2, :]
    yaw = np.arctan2(r1[..., 0], r0[..., 0])
    cy, sy = np.cos(yaw), np.sin(yaw)
    m00 = cy * r0[..., 0] + sy * r1[..., 0]  # cos(pitch) >= 0
    m11 = cy * r1[..., 1] - sy * r0[..., 1]
    m12 = cy * r1[..., 2] - sy * r0[..., 2]
    out = np.empty(rot.shape[:-2] + (3,))
    out[..., 0] = np.arctan2(-m12, m11)
    out[..., 1] = np.arctan2(-r2[..., 0], m00)
    out[..., 2] = yaw
    return out


def matrix_to_rpy(rot: NDArray[np.float64]) -> tuple[float, float, float]:
    """One rotation matrix → ``(roll, pitch, yaw)``; the same numbers as :func:`matrices_to_rpy`."""
    r, p, y = matrices_to_rpy(np.asarray(rot, dtype=np.float64)[:3, :3])
    return (float(r), float(p), float(y))


def pose_to_transform(xyz: Sequence[float], rpy: Sequence[float]) -> Transform:
    t = np.eye(4)
    t[:3, :3] = rpy_to_matrix(float(rpy[0]), float(rpy[1]), float(rpy[2]))
    t[:3, 3] = [float(v) for v in xyz]
    return t


def pose6_to_transform(pose: Sequence[float]) -> Transform:
    """``[x, y, z, roll, pitch, yaw]`` → 4x4."""
    return pose_to_transform(pose[:3], pose[3:6])


def transform_to_pose6(t: Transform) -> tuple[float, float, float, float, float, float]:
    r, p, y = matrix_to_rpy(t[:3, :3])
    return (float(t[0, 3]), float(t[1, 3]), float(t[2, 3]), r, p, y)


def quaternion_to_matrix(q: Sequence[float]) -> NDArray[np.float64]:
    """3x3 rotation from a unit quaternion ``(x, y, z, w)``."""
    x, y, z, w = (float(v) for v in q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def matrix_to_quaternion(rot: NDArray[np.float64]) -> tuple[float, float, float, float]:
    """Unit quaternion ``(x, y, z, w)`` with ``w >= 0`` from a 3x3 rotation."""
    m = rot
    tr = m[0, 0] + m[1, 1] + m[2, 2]
    if tr > 0.0:
        s = math.sqrt(tr + 1.0) * 2.0
        w = 0.25 * s
        x = (m[2, 1] - m[1, 2]) / s
        y = (m[0, 2] - m[2, 0]) / s
        z = (m[1, 0] - m[0, 1]) / s
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = math.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2]) * 2.0
        w = (m[2, 1] - m[1, 2]) / s
        x = 0.25 * s
        y = (m[0, 1] + m[1, 0]) / s
        z = (m[0, 2] + m[2, 0]) / s
    elif m[1, 1] > m[2, 2]:
        s = math.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2]) * 2.0
        w = (m[0, 2] - m[2, 0]) / s
        x = (m[0, 1] + m[1, 0]) / s
        y = 0.25 * s
        z = (m[1, 2] + m[2, 1]) / s
    else:
        s = math.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1]) * 2.0
        w = (m[1, 0] - m[0, 1]) / s
        x = (m[0, 2] + m[2, 0]) / s
        y = (m[1, 2] + m[2, 1]) / s
        z = 0.25 * s
    n = math.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / n, y / n, z / n, w / n
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    return (float(x), float(y), float(z), float(w))


def axis_angle_to_matrix(axis: Sequence[float], angle: float) -> NDArray[np.float64]:
    """Rodrigues' formula; ``axis`` must be a unit vector."""
    ax, ay, az = (float(v) for v in axis)
    c, s = math.cos(angle), math.sin(angle)
    v = 1.0 - c
    return np.array(
        [
            [c + ax * ax * v, ax * ay * v - az * s, ax * az * v + ay * s],
            [ay * ax * v + az * s, c + ay * ay * v, ay * az * v - ax * s],
            [az * ax * v - ay * s, az * ay * v + ax * s, c + az * az * v],
        ]
    )


def inverse(t: Transform) -> Transform:
    out = np.eye(4)
    rt = t[:3, :3].T
    out[:3, :3] = rt
    out[:3, 3] = -rt @ t[:3, 3]
    return out


def from_rotation_translation(
    rot: NDArray[np.float64] | None = None, trans: Sequence[float] | None = None
) -> Transform:
    t = np.eye(4)
    if rot is not None:
        t[:3, :3] = rot
    if trans is not None:
        t[:3, 3] = [float(v) for v in trans]
    return t
