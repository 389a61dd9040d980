"""TF's numbers for every tree joint: translation and unit quaternion of ``X_parent_child``, per message.

:func:`joint_pose7` gives ``(njoints, 7)`` rows ``x y z qx qy qz qw`` for one configuration: the
transforms of :func:`robot_state_format.kinematics.fk.joint_transforms` with their rotations as
quaternions (``w >= 0``), without going through the rotation matrices for the joints that rotate
about one axis.  A revolute, continuous or screw joint is ``X(q) = A Rot(a, q) B`` (origin, axis,
child offset), so its quaternion is linear in the half-angle's sine and cosine:

    quat(q) = sin(q/2) P + cos(q/2) Q,   Q = quat(A B),   P = Q (x) (R_B^T a, 0)

(``qA (x) (a, 0) (x) qB = (qA (x) qB) (x) (qB* (x) (a, 0) (x) qB)``), both constant per joint.  The
translations are ``fk.joint_transforms``' own arithmetic (the same numbers; a constant where the child
sits on the axis, as in every URDF); prismatic and fixed joints
keep a constant rotation (its quaternion computed once); the other types (universal, revolute2,
planar, ball, floating) are converted from their matrices.  The quaternions agree with
``matrices_to_quaternions(joint_transforms(...))`` to rounding (a few 1e-16; the tests check it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from robot_state_format.kinematics import fk
from robot_state_format.kinematics.compiled_tree import CompiledTree
from robot_state_format.kinematics.fk_numpy import _local_generic
from robot_state_format.spatial import matrices_to_quaternions

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]

__all__ = ["joint_pose7", "left_compose_pose7"]


_Moving = tuple[IntArray, FloatArray, FloatArray, FloatArray, FloatArray | None]
"""Rows of a rotary group whose translation turns with the joint (the child off the axis: SDFormat), and
their m02/m1/m2/m3 translation columns ``(k, 3)``; the others' translations are constants."""


@dataclass
class _Pose7Constants:
    template: FloatArray  # (njoints, 7): fixed and prismatic rows' constant quaternions, fixed translations
    rot: list[tuple[IntArray, IntArray, _Moving | None, FloatArray, FloatArray]]  # joints, qa col, translations, P, Q
    pri: tuple[IntArray, IntArray, FloatArray, FloatArray] | None  # joints, col, d (g, 3), t0 (g, 3)
    gen: IntArray


def _quat_mul_axis(q: FloatArray, u: FloatArray) -> FloatArray:
    """``q (x) (u, 0)`` for rows of quaternions ``(g, 4)`` ``(x, y, z, w)`` and vectors ``u`` ``(g, 3)``."""
    v, w = q[:, :3], q[:, 3]
    out = np.empty_like(q)
    out[:, :3] = w[:, None] * u + np.cross(v, u)
    out[:, 3] = -np.einsum("ij,ij->i", v, u)
    return out


def _constants(tree: CompiledTree) -> _Pose7Constants:
    cached = tree._cache.get("pose7")
    if isinstance(cached, _Pose7Constants):
        return cached
    tf = fk._tf_constants(tree)
    template = np.zeros((tree.njoints, 7))
    template[:, 6] = 1.0
    fixed = tree.fixed_joints
    if fixed.size:
        x = tf.template[fixed]
        template[fixed, :3] = x[:, :3, 3]
        template[fixed, 3:] = matrices_to_quaternions(x[:, :3, :3])
    cons = tree._twist_constants()
    rot = []
    for (joints, col, m02, m1, m2, m3), axes in zip(tf.rot, cons.rot_axes):
        q0 = matrices_to_quaternions((m02 - m2)[:, :3, :3])  # X(0) = A B
        r_b = cons.offset_r[joints, :, :, 0]  # (g, 3, 3)
        u = np.einsum("gji,gj->gi", r_b, axes[:, :, 0])  # R_B^T a
        moves = (m1[:, :, 3] != 0).any(axis=1) | (m2[:, :, 3] != 0).any(axis=1)
        if m3 is not None:
            moves |= (m3[:, :, 3] != 0).any(axis=1)
        template[joints[~moves], :3] = m02[~moves, :, 3]  # the child on the axis (URDF): a constant translation
        moving = None if not moves.any() else (np.flatnonzero(moves), m02[moves, :, 3].copy(), m1[moves, :, 3].copy(),
                                               m2[moves, :, 3].copy(), None if m3 is None else m3[moves, :, 3].copy())
        rot.append((joints, col[:, 0, 0], moving, _quat_mul_axis(q0, u), q0))
    pri = None
    if tf.pri is not None:
        joints, pcol, d, t0 = tf.pri
        template[joints, 3:] = matrices_to_quaternions(tf.template[joints, :3, :3])
        pri = (joints, pcol, d, t0)
    consts = _Pose7Constants(template, rot, pri, tf.gen)
    tree._cache["pose7"] = consts
    return consts


def joint_pose7(tree: CompiledTree, q: object) -> FloatArray:
    """``(njoints, 7)``: ``x y z qx qy qz qw`` of ``X_parent_child`` per tree joint (``tree.joint_names``
    order) at ``q`` (``(nq,)``, validated as :func:`fk.joint_transforms` does); quaternions unit, ``w >= 0``."""
    qa = fk._qa_single(tree, fk._check_single(tree, q))
    c = _constants(tree)
    out = c.template.copy()
    for joints, col, moving, p, q0 in c.rot:
        th = qa[col]  # (g,)
        if moving is not None:
            rows, t02, t1, t2, t3 = moving
            tm = th[rows]
            t = t1 * np.sin(tm)[:, None]  # fk.joint_transforms' translation column, the same operations
            t += t02
            t -= t2 * np.cos(tm)[:, None]
            if t3 is not None:
                t += t3 * tm[:, None]
            out[joints[rows], :3] = t
        half = 0.5 * th
        quat = p * np.sin(half)[:, None]
        quat += q0 * np.cos(half)[:, None]
        quat *= np.copysign(1.0, quat[:, 3])[:, None]  # w >= 0, as matrices_to_quaternions
        out[joints, 3:] = quat
    if c.pri is not None:
        joints, pcol, d, t0 = c.pri
        out[joints, :3] = d * qa[pcol][:, None] + t0
    if c.gen.size:
        local = np.empty((3, 4, tree.nlinks, 1))
        _local_generic(tree, qa[:, None], local)
        x = local[:, :, tree.nroot + c.gen, 0].transpose(2, 0, 1)  # (g, 3, 4)
        out[c.gen, :3] = x[:, :, 3]
        out[c.gen, 3:] = matrices_to_quaternions(np.ascontiguousarray(x[:, :, :3]))
    return out


def left_compose_pose7(x: FloatArray, rows: FloatArray, quat: FloatArray | None = None) -> FloatArray:
    """Rows ``x y z qx qy qz qw`` of ``X o T`` for a 4x4 ``x`` and rows of ``T`` (``(k, 7)``), ``w >= 0``.

    ``quat``: ``x``'s rotation as a quaternion when the caller keeps it (computed here otherwise)."""
    if quat is None:
        quat = matrices_to_quaternions(np.asarray(x, dtype=np.float64)[None, :3, :3])[0]
    qx, qy, qz, qw = quat.tolist()
    out = np.empty_like(rows)
    out[:, :3] = rows[:, :3] @ x[:3, :3].T + x[:3, 3]
    v, w = rows[:, 3:6], rows[:, 6]
    a = np.array([qx, qy, qz])
    out[:, 3:6] = qw * v + w[:, None] * a + np.cross(a, v)
    out[:, 6] = qw * w - v @ a
    out[:, 3:] *= np.copysign(1.0, out[:, 6])[:, None]
    return out
