"""Rigid transforms, rotations and quaternions (the one implementation; numpy only): 4x4 homogeneous arrays.

Conventions (the whole package uses them):
- a pose is ``x y z roll pitch yaw`` with fixed-axis rpy: ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)``;
- quaternions are in ROS order ``(x, y, z, w)``;
- ``X_AB`` is the pose of frame B in frame A; ``X_AC = X_AB @ X_BC``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "Transform", "axis_angle_to_matrix", "from_rotation_translation", "identity", "inverse",
    "matrices_to_quaternions", "matrices_to_rpy", "matrix_to_quaternion", "matrix_to_rpy", "pose6_to_transform",
    "pose_to_transform", "quaternion_components_to_rotation", "quaternion_to_matrix", "quaternions_to_matrices",
    "rpy_to_matrix", "transform_to_pose6", "transforms_to_quaternions", "xyz_rpy_to_transform",
]

Transform = NDArray[np.float64]
"""A 4x4 homogeneous transform (float64)."""

_EYE4 = np.eye(4)


def identity() -> Transform:
    return np.eye(4)


def _rpy_rows(roll: float, pitch: float, yaw: float) -> tuple[tuple[float, float, float], ...]:
    """The rows of Rz(yaw) Ry(pitch) Rx(roll): the one rpy formula (:func:`rpy_to_matrix`, :func:`xyz_rpy_to_transform`)."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return (
        (cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr),
        (sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr),
        (-sp, cp * sr, cp * cr),
    )


def rpy_to_matrix(roll: float, pitch: float, yaw: float) -> NDArray[np.float64]:
    """3x3 rotation for fixed-axis roll, pitch, yaw: Rz(yaw) Ry(pitch) Rx(roll)."""
    return np.array(_rpy_rows(roll, pitch, yaw))


def xyz_rpy_to_transform(x: float, y: float, z: float, roll: float, pitch: float, yaw: float) -> Transform:
    """4x4 of a position and fixed-axis roll, pitch, yaw, built in one array (the readers' hot path)."""
    if roll == 0.0 and pitch == 0.0 and yaw == 0.0:
        t = _EYE4.copy()
        t[0, 3] = x
        t[1, 3] = y
        t[2, 3] = z
        return t
    r0, r1, r2 = _rpy_rows(roll, pitch, yaw)
    return np.array([[*r0, x], [*r1, y], [*r2, z], [0.0, 0.0, 0.0, 1.0]])


def matrices_to_rpy(rot: NDArray[np.float64]) -> NDArray[np.float64]:
    """Roll, pitch, yaw of rotation matrices ``(..., 3, 3)`` → ``(..., 3)``; inverse of :func:`rpy_to_matrix`.

    Pitch is in [-pi/2, pi/2]. Accurate everywhere, gimbal lock included: yaw comes from the first
    column, then roll and pitch from the matrix with that yaw removed, whose entries stay of order
    one, so ``rpy_to_matrix(*matrices_to_rpy(R))`` reproduces ``R`` to rounding even a hair away
    from pitch = +-pi/2 (where ``asin`` would lose half the digits). At exact lock yaw is 0.
    """
    r0, r1, r2 = rot[..., 0, :], rot[..., 1, :], rot[..., 2, :]
    # arctan2 on contiguous operands only: numpy may compute strided ones in another loop (libm rather than
    # its SIMD one on AVX-512), whose last bit differs, so a batch and a batch of one would disagree
    yaw = np.arctan2(np.ascontiguousarray(r1[..., 0]), np.ascontiguousarray(r0[..., 0]))
    cy, sy = np.cos(yaw), np.sin(yaw)
    m00 = cy * r0[..., 0] + sy * r1[..., 0]  # cos(pitch) >= 0
    m11 = cy * r1[..., 1] - sy * r0[..., 1]
    m12 = cy * r1[..., 2] - sy * r0[..., 2]
    out = np.empty(rot.shape[:-2] + (3,))
    out[..., 0] = np.arctan2(-m12, m11)
    out[..., 1] = np.arctan2(np.negative(r2[..., 0]), m00)  # a new, contiguous array
    out[..., 2] = yaw
    return out


def matrix_to_rpy(rot: NDArray[np.float64]) -> tuple[float, float, float]:
    """One rotation matrix → ``(roll, pitch, yaw)``; the same numbers as :func:`matrices_to_rpy`."""
    # a batch of one, laid out as a batch: numpy may take another loop for 0-d operands (a SIMD one on
    # AVX-512 machines), whose last bit can differ from the batch's
    r, p, y = matrices_to_rpy(np.ascontiguousarray(np.asarray(rot, dtype=np.float64)[None, :3, :3]))[0].tolist()
    return (r, p, y)


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


def quaternion_components_to_rotation(
    x: Any, y: Any, z: Any, w: Any, out: NDArray[np.float64] | None = None
) -> NDArray[np.float64]:
    """Rotation matrices from unit quaternion components, component axes first: ``(3, 3) + shape``.

    ``x, y, z, w`` are floats or arrays of one shape (``(g, C)`` in the kinematics); ``out`` (a
    ``(3, 3) + shape`` array or view) is filled and returned when given.  The one quaternion-to-matrix
    formula of the package: :func:`quaternion_to_matrix` and :func:`quaternions_to_matrices` use it.
    """
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    r = np.empty((3, 3) + np.shape(x)) if out is None else out
    r[0, 0] = 1.0 - 2.0 * (yy + zz)
    r[0, 1] = 2.0 * (xy - wz)
    r[0, 2] = 2.0 * (xz + wy)
    r[1, 0] = 2.0 * (xy + wz)
    r[1, 1] = 1.0 - 2.0 * (xx + zz)
    r[1, 2] = 2.0 * (yz - wx)
    r[2, 0] = 2.0 * (xz - wy)
    r[2, 1] = 2.0 * (yz + wx)
    r[2, 2] = 1.0 - 2.0 * (xx + yy)
    return r


def quaternions_to_matrices(q: NDArray[np.float64]) -> NDArray[np.float64]:
    """Unit quaternions ``(..., 4)`` in ROS order ``(x, y, z, w)`` → rotations ``(..., 3, 3)``."""
    a = np.asarray(q, dtype=np.float64)
    r = quaternion_components_to_rotation(a[..., 0], a[..., 1], a[..., 2], a[..., 3])
    return np.ascontiguousarray(np.moveaxis(r, (0, 1), (-2, -1)))


def quaternion_to_matrix(q: Sequence[float]) -> NDArray[np.float64]:
    """3x3 rotation from a unit quaternion ``(x, y, z, w)``."""
    x, y, z, w = (float(v) for v in q)
    return quaternion_components_to_rotation(x, y, z, w)


def _quaternion_map() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Linear map R (flattened 3x3) -> B = 4 q q^T (flattened 4x4, component order x y z w) + constant."""
    m = np.zeros((9, 16))
    c = np.zeros(16)
    w, x, y, z = 3, 0, 1, 2
    e = {(i, j): 3 * i + j for i in range(3) for j in range(3)}
    diag = {w: (1, 1, 1), x: (1, -1, -1), y: (-1, 1, -1), z: (-1, -1, 1)}
    for d, sg in diag.items():
        c[5 * d] = 1.0
        for a in range(3):
            m[e[a, a], 5 * d] = sg[a]
    off = {(w, x): ((2, 1, 1), (1, 2, -1)), (w, y): ((0, 2, 1), (2, 0, -1)), (w, z): ((1, 0, 1), (0, 1, -1)),
           (x, y): ((0, 1, 1), (1, 0, 1)), (x, z): ((0, 2, 1), (2, 0, 1)), (y, z): ((1, 2, 1), (2, 1, 1))}
    for (r, col), terms in off.items():
        for a, b, sign in terms:
            m[e[a, b], 4 * r + col] += sign
            m[e[a, b], 4 * col + r] += sign
    return m, c


_QMAP, _QCONST = _quaternion_map()
# The same map applied to a flattened 4x4 transform: rows of the translation are zero, and the
# constant rides on the transform's bottom-right 1.
_QMAP16 = np.zeros((16, 16))
_QMAP16[[0, 1, 2, 4, 5, 6, 8, 9, 10]] = _QMAP
_QMAP16[15] = _QCONST
_ROWS = np.arange(4096)
_ROWS.flags.writeable = False


def _shepperd(b: NDArray[np.float64], out: NDArray[np.float64] | None) -> NDArray[np.float64]:
    """``(n, 4)`` unit quaternions, ``w >= 0``, from ``b`` ``(n, 16)`` = flattened ``4 q q^T`` per row."""
    n = len(b)
    rows = _ROWS[:n] if n <= _ROWS.size else np.arange(n)  # no allocation per call on the TF path
    q = b.reshape(n, 4, 4)[rows, b[:, ::5].argmax(axis=1)]
    unit: NDArray[np.float64] = np.multiply(q, np.copysign(1.0 / np.sqrt(np.einsum("ij,ij->i", q, q)), q[:, 3])[:, None],
                                            out=out)
    return unit


def matrices_to_quaternions(rot: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rotations ``(..., 3, 3)`` → unit quaternions ``(..., 4)`` ``(x, y, z, w)`` with ``w >= 0``.

    Shepperd's method for all rows at once: ``B = 4 q q^T`` is linear in R; the row of B with
    the largest diagonal entry is ``4 q_k q`` (the best-conditioned choice), normalised to q.
    """
    a = np.asarray(rot, dtype=np.float64)
    b = a.reshape(-1, 9) @ _QMAP
    b += _QCONST
    return _shepperd(b, None).reshape(a.shape[:-2] + (4,))


def transforms_to_quaternions(x: NDArray[np.float64], out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """The quaternions of 4x4 transforms ``(n, 4, 4)`` (C-contiguous) as :func:`matrices_to_quaternions`,
    in one product (the translation is skipped by the map): the 1 kHz TF path.  ``out``: ``(n, 4)``."""
    return _shepperd(x.reshape(len(x), 16) @ _QMAP16, out)


def matrix_to_quaternion(rot: NDArray[np.float64]) -> tuple[float, float, float, float]:
    """Unit quaternion ``(x, y, z, w)`` with ``w >= 0`` from a 3x3 rotation.

    :func:`matrices_to_quaternions`' method (the row of ``B = 4 q q^T`` with the largest diagonal
    entry, first of x, y, z, w on a tie) for one matrix in plain floats (several times faster than the
    vectorised form on one matrix); the two agree to rounding (the tests check 1e-15).
    """
    m = np.asarray(rot, dtype=np.float64)
    (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = m[:3, :3].tolist()
    diag = ((r00 - r11 - r22) + 1.0, (r11 - r00 - r22) + 1.0, (r22 - r00 - r11) + 1.0, (r00 + r11 + r22) + 1.0)
    k = diag.index(max(diag))
    if k == 0:
        row = (diag[0], r01 + r10, r02 + r20, r21 - r12)
    elif k == 1:
        row = (r01 + r10, diag[1], r12 + r21, r02 - r20)
    elif k == 2:
        row = (r02 + r20, r12 + r21, diag[2], r10 - r01)
    else:
        row = (r21 - r12, r02 - r20, r10 - r01, diag[3])
    scale = math.copysign(1.0 / math.sqrt(row[0] * row[0] + row[1] * row[1] + row[2] * row[2] + row[3] * row[3]),
                          row[3])
    return (row[0] * scale, row[1] * scale, row[2] * scale, row[3] * scale)


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
