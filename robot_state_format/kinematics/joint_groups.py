"""Per-joint-type constant groups of a :class:`~.compiled_tree.CompiledTree` (fixed, rotary,
prismatic, two-axis, planar, quaternion joints) and the constants of its twists."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from robot_state_format.errors import KinematicsError
from robot_state_format.kinematics.compiled_tree import (
    CompiledTree,
    PlanarGroup,
    PrismaticGroup,
    QuaternionGroup,
    RotaryGroup,
    TwistConstants,
    TwoAxisGroup,
)
from robot_state_format.kinematics.joint_axes import (
    JointInfo,
    planar_basis,
    skew,
    skews,
    stack,
    top,
    tops,
    unit,
)
from robot_state_format.model.types import Joint, JointType

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]

__all__ = ["compile_groups"]


def compile_groups(tree: CompiledTree, joint_order: list[Joint], infos: list[JointInfo], origins: FloatArray,  # noqa: PLR0915 (84 statements): to be split, issue 38
                    offsets: FloatArray) -> None:
    """Per-type constants (fixed, rotary and prismatic ones computed for the whole group at once)."""
    by_type: dict[JointType, list[int]] = {}
    for k, j in enumerate(joint_order):
        by_type.setdefault(j.type, []).append(k)

    def idx(*types: JointType) -> IntArray:
        return np.array(sorted(k for t in types for k in by_type.get(t, [])), dtype=np.intp)

    fixed = idx(JointType.FIXED)
    tree.fixed_joints = fixed
    tree.fixed_x = tops(origins[fixed] @ offsets[fixed]) if fixed.size else np.zeros((3, 4, 0, 1))
    rot_axes: list[FloatArray] = []
    rot_pitch: list[FloatArray] = []
    for types in ((JointType.REVOLUTE, JointType.CONTINUOUS), (JointType.SCREW,)):
        ks = idx(*types)
        if not ks.size:
            continue
        a, b = origins[ks], offsets[ks]
        axes = np.array([infos[k].axis for k in ks], dtype=np.float64)
        kk = skews(axes)
        ak = a @ kk
        m0, m1, m2 = tops(a @ b), tops(ak @ b), tops(ak @ kk @ b)
        pitch = np.zeros(len(ks))
        m3 = None
        if types[0] is JointType.SCREW:
            pitch = np.array([float(joint_order[k].screw_pitch) for k in ks]) / (2.0 * math.pi)
            if not np.all(np.isfinite(pitch)):
                bad = joint_order[int(ks[np.nonzero(~np.isfinite(pitch))[0][0]])]
                raise KinematicsError(f"joint {bad.name!r}: screw pitch must be finite")
            tr = np.zeros((len(ks), 4, 4))
            tr[:, :3, 3] = axes * pitch[:, None]
            m3 = tops(a @ tr @ b)
        tree.rotary.append(RotaryGroup(ks, tree.joint_qa[ks], m0, m1, m2, m3, np.ascontiguousarray(m0 + m2)))
        rot_axes.append(np.ascontiguousarray(axes[:, :, None]))
        rot_pitch.append(pitch.reshape(-1, 1, 1))
    pri = idx(JointType.PRISMATIC)
    pri_axes = np.zeros((0, 3))
    if pri.size:
        a, b = origins[pri], offsets[pri]
        ab = a @ b
        pri_axes = np.array([infos[k].axis for k in pri], dtype=np.float64)
        d = (a[:, :3, :3] @ pri_axes[:, :, None])[..., 0]
        tree.prismatic = PrismaticGroup(pri, tree.joint_qa[pri], np.ascontiguousarray(ab[:, :3, :3].transpose(1, 2, 0)[..., None]),
                                        np.ascontiguousarray(ab[:, :3, 3].T[..., None]),
                                        np.ascontiguousarray(d.T[..., None]))
    two: tuple[list[int], list[int], list[list[FloatArray]], list[list[FloatArray]]] = ([], [], [], [])
    pla: tuple[list[int], list[int], list[list[FloatArray]], list[FloatArray], list[FloatArray]] = ([], [], [], [], [])
    quat: dict[bool, tuple[list[int], list[int], list[FloatArray], list[FloatArray]]] = {}
    two_axes: list[tuple[FloatArray, FloatArray]] = []
    pla_axes: list[tuple[FloatArray, FloatArray, FloatArray]] = []
    for k in idx(JointType.UNIVERSAL, JointType.REVOLUTE2, JointType.PLANAR, JointType.BALL, JointType.FLOATING):
        j = joint_order[k]
        a, b = origins[k], offsets[k]
        col = int(tree.joint_qa[k])
        t = j.type
        if t in (JointType.UNIVERSAL, JointType.REVOLUTE2):
            a1 = np.array(infos[k].axis)
            a2 = unit(j.axis2, (0.0, 0.0, 1.0), j, "axis2")
            k1, k2 = skew(a1), skew(a2)
            two[0].append(k)
            two[1].append(col)
            two[2].append([top(a), top(a @ k1), top(a @ k1 @ k1)])
            two[3].append([top(b), top(k2 @ b), top(k2 @ k2 @ b)])
            two_axes.append((a1, a2))
        elif t is JointType.PLANAR:
            n = np.array(infos[k].axis)
            e1, e2 = planar_basis(n)
            kk = skew(n)
            pla[0].append(k)
            pla[1].append(col)
            pla[2].append([top(a @ b), top(a @ kk @ b), top(a @ kk @ kk @ b)])
            pla[3].append(a[:3, :3] @ e1)
            pla[4].append(a[:3, :3] @ e2)
            pla_axes.append((e1, e2, n))
        else:
            g2 = quat.setdefault(t is JointType.FLOATING, ([], [], [], []))
            g2[0].append(k)
            g2[1].append(col)
            g2[2].append(top(a))
            g2[3].append(top(b))
    if two[0]:
        tree.two_axis = TwoAxisGroup(
            np.array(two[0], dtype=np.intp), np.array(two[1], dtype=np.intp),
            (stack([p[0] for p in two[2]]), stack([p[1] for p in two[2]]), stack([p[2] for p in two[2]])),
            (stack([r[0] for r in two[3]]), stack([r[1] for r in two[3]]), stack([r[2] for r in two[3]])),
        )
    if pla[0]:
        tree.planar = PlanarGroup(
            np.array(pla[0], dtype=np.intp), np.array(pla[1], dtype=np.intp),
            (stack([m[0] for m in pla[2]]), stack([m[1] for m in pla[2]]), stack([m[2] for m in pla[2]])),
            stack(pla[3]), stack(pla[4]),
        )

    def vecs(vs: list[FloatArray]) -> FloatArray:
        return np.ascontiguousarray(np.array(vs, dtype=np.float64).reshape(len(vs), 3, 1))

    a1s = [a1 for a1, _ in two_axes]
    k2a1 = [np.cross(a2, a1) for a1, a2 in two_axes]
    k2k2a1 = [np.cross(a2, np.cross(a2, a1)) for a1, a2 in two_axes]
    tree.twist = TwistConstants(
        rot_axes=rot_axes,
        rot_pitch=rot_pitch,
        pri_axes=np.ascontiguousarray(pri_axes.reshape(-1, 3, 1)),
        two=(vecs(a1s), vecs(k2a1), vecs(k2k2a1), vecs([a2 for _, a2 in two_axes])),
        planar=(vecs([e[0] for e in pla_axes]), vecs([e[1] for e in pla_axes]), vecs([e[2] for e in pla_axes])),
        offset_t=np.ascontiguousarray(offsets[:, :3, 3, None]),
        offset_r=np.ascontiguousarray(offsets[:, :3, :3, None]),
    )
    for floating in (False, True):
        if floating in quat:
            g2 = quat[floating]
            tree.quaternion.append(QuaternionGroup(np.array(g2[0], dtype=np.intp), np.array(g2[1], dtype=np.intp),
                                                   stack(g2[2]), stack(g2[3]), floating))
