"""An independent forward-kinematics reference for the tests.

Nothing here comes from ``robot_state_format.spatial`` or ``robot_state_format.kinematics``: rotations
are built from first principles (elementary rotations, Rodrigues' formula as ``I + sin K + (1 - cos) K^2``,
quaternions applied by the Hamilton product written out), and link poses come from a plain recursive
walk over the joints of a :class:`~robot_state_format.model.types.Model` (its fields only), one joint
after another, mimic coordinates resolved here from the joints' ``mimic`` entries.

The joint motions are those of the package's documentation (docs/kinematics, ``kinematics/tree.py``):

* revolute, continuous: rotation by ``q`` about ``axis``; prismatic: translation ``q * axis``;
* screw: rotation by ``q`` about ``axis`` and translation ``pitch * q / (2 pi)`` along it;
* universal, revolute2: ``Rot(axis, q0) @ Rot(axis2, q1)``;
* planar: ``Trans(x e1 + y e2) @ Rot(n, yaw)``, ``e1`` the unit projection onto the plane of the first
  of X, Y, Z with the smallest ``|n_i|``, ``e2 = n x e1``;
* ball: rotation by the unit quaternion ``(x, y, z, w)``; floating: translation then rotation;
* a missing axis is X in URDF, Z in SDFormat; every axis is normalised.

``X_parent_child = origin @ motion(q) @ child_offset``; root links sit at ``Link.pose``; a joint whose
parent is ``world`` poses its child in the root frame.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from robot_state_format.model.types import WORLD, Joint, JointType, Model

Matrix = np.ndarray


def rot_x(a: float) -> Matrix:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def rot_y(a: float) -> Matrix:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def rot_z(a: float) -> Matrix:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def rpy(roll: float, pitch: float, yaw: float) -> Matrix:
    """Fixed-axis roll, pitch, yaw (URDF, SDFormat): about X, then Y, then Z of the parent frame."""
    return rot_z(yaw) @ rot_y(pitch) @ rot_x(roll)


def homogeneous(rot: Matrix | None = None, p: Sequence[float] = (0.0, 0.0, 0.0)) -> Matrix:
    t = np.eye(4)
    if rot is not None:
        t[:3, :3] = rot
    t[:3, 3] = [float(v) for v in p]
    return t


def pose(x: float = 0.0, y: float = 0.0, z: float = 0.0, roll: float = 0.0, pitch: float = 0.0,
         yaw: float = 0.0) -> Matrix:
    """``<origin xyz rpy>`` as a 4x4 transform."""
    return homogeneous(rpy(roll, pitch, yaw), (x, y, z))


def normalised(v: Sequence[float]) -> Matrix:
    a = np.array([float(c) for c in v])
    return a / math.sqrt(float(a @ a))


def cross_matrix(a: Sequence[float]) -> Matrix:
    x, y, z = (float(c) for c in a)
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def axis_angle(axis: Sequence[float], angle: float) -> Matrix:
    """Rodrigues: ``I + sin(angle) K + (1 - cos(angle)) K^2`` with ``K`` the cross matrix of the unit axis."""
    k = cross_matrix(normalised(axis))
    return np.eye(3) + math.sin(angle) * k + (1.0 - math.cos(angle)) * (k @ k)


def hamilton(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float, float]:
    """The Hamilton product ``a b`` of quaternions in ``(x, y, z, w)`` order."""
    ax, ay, az, aw = (float(c) for c in a)
    bx, by, bz, bw = (float(c) for c in b)
    return (aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz)


def quaternion_rotate(q: Sequence[float], v: Sequence[float]) -> Matrix:
    """``q v q*`` for a unit quaternion ``q`` ``(x, y, z, w)`` and a 3-vector ``v``."""
    x, y, z, w = (float(c) for c in q)
    r = hamilton(hamilton((x, y, z, w), (float(v[0]), float(v[1]), float(v[2]), 0.0)), (-x, -y, -z, w))
    return np.array(r[:3])


def quaternion_matrix(q: Sequence[float]) -> Matrix:
    """The rotation of ``q`` (normalised first): columns are the images of the unit vectors."""
    u = normalised(q)
    return np.column_stack([quaternion_rotate(u, e) for e in np.eye(3)])


def matrix_quaternion(rot: Matrix) -> Matrix:
    """``(x, y, z, w)``, ``w >= 0``, of a rotation: the unit eigenvector of Bar-Itzhack's symmetric 4x4
    matrix for its largest eigenvalue (a method unrelated to Shepperd's)."""
    m = np.asarray(rot, dtype=float)
    (a, b, c), (d, e, f), (g, h, i) = m[0], m[1], m[2]
    k = np.array([[a - e - i, d + b, g + c, h - f],
                  [d + b, e - a - i, h + f, c - g],
                  [g + c, h + f, i - a - e, d - b],
                  [h - f, c - g, d - b, a + e + i]]) / 3.0
    vals, vecs = np.linalg.eigh(k)
    q = vecs[:, int(np.argmax(vals))]
    return -q if q[3] < 0 else q


def rotation_angle_axis(rot: Matrix) -> Matrix:
    """The rotation vector (angle times unit axis) of a rotation with angle below pi."""
    c = max(-1.0, min(1.0, (float(np.trace(rot)) - 1.0) / 2.0))
    angle = math.acos(c)
    if angle < 1e-12:
        return np.zeros(3)
    w = np.array([rot[2, 1] - rot[1, 2], rot[0, 2] - rot[2, 0], rot[1, 0] - rot[0, 1]])
    return angle / (2.0 * math.sin(angle)) * w


def planar_basis(normal: Sequence[float]) -> tuple[Matrix, Matrix]:
    n = normalised(normal)
    i = int(np.argmin(np.abs(n)))  # first of the smallest
    u = np.zeros(3)
    u[i] = 1.0
    e1 = normalised(u - (u @ n) * n)
    return e1, np.cross(n, e1)


def default_axis(model: Model) -> tuple[float, float, float]:
    return (1.0, 0.0, 0.0) if model.format == "urdf" else (0.0, 0.0, 1.0)


def joint_motion(j: Joint, q: Sequence[float], axis: Sequence[float] = (1.0, 0.0, 0.0)) -> Matrix:
    """``motion(q)`` of joint ``j`` in its joint frame (``axis``: the default when ``j.axis`` is None)."""
    ax = normalised(j.axis if j.axis is not None else axis)
    t = np.eye(4)
    jt = j.type
    if jt in (JointType.REVOLUTE, JointType.CONTINUOUS):
        t[:3, :3] = axis_angle(ax, q[0])
    elif jt is JointType.PRISMATIC:
        t[:3, 3] = ax * q[0]
    elif jt is JointType.SCREW:
        t[:3, :3] = axis_angle(ax, q[0])
        t[:3, 3] = ax * (float(j.screw_pitch) * q[0] / (2.0 * math.pi))
    elif jt in (JointType.UNIVERSAL, JointType.REVOLUTE2):
        t[:3, :3] = axis_angle(ax, q[0]) @ axis_angle(j.axis2 if j.axis2 is not None else (0.0, 0.0, 1.0), q[1])
    elif jt is JointType.PLANAR:
        n = normalised(j.axis if j.axis is not None else (0.0, 0.0, 1.0))
        e1, e2 = planar_basis(n)
        t[:3, :3] = axis_angle(n, q[2])
        t[:3, 3] = q[0] * e1 + q[1] * e2
    elif jt is JointType.BALL:
        t[:3, :3] = quaternion_matrix(q)
    elif jt is JointType.FLOATING:
        t[:3, :3] = quaternion_matrix(q[3:7])
        t[:3, 3] = q[:3]
    elif jt is not JointType.FIXED:
        raise ValueError(f"no reference motion for {jt}")
    return t


def joint_transform(model: Model, j: Joint, q: Sequence[float]) -> Matrix:
    """``X_parent_child`` of joint ``j``: ``origin @ motion(q) @ child_offset``."""
    return np.asarray(j.origin) @ joint_motion(j, q, default_axis(model)) @ np.asarray(j.child_offset)


def resolve_mimic(model: Model, values: Mapping[str, Sequence[float]]) -> dict[str, Matrix]:
    """Every moving joint's coordinates: ``values`` (independent joints; zeros or the identity
    quaternion for a joint left out), then each mimic coordinate ``leader * multiplier + offset``,
    repeated until nothing changes (a chain of mimics resolves in as many rounds as it is long)."""
    out: dict[str, Matrix] = {}
    for name, j in model.joints.items():
        if j.type is JointType.FIXED:
            continue
        v = np.zeros(j.type.nq)
        if j.type is JointType.BALL:
            v[3] = 1.0
        elif j.type is JointType.FLOATING:
            v[6] = 1.0
        if name in values:
            v = np.array([float(c) for c in values[name]])
        out[name] = v
    for _ in range(len(model.joints) + 1):
        changed = False
        for name, j in model.joints.items():
            for m in j.mimic:
                new = out[m.joint][m.leader_dof] * m.multiplier + m.offset
                if out[name][m.dof] != new:
                    out[name][m.dof] = new
                    changed = True
        if not changed:
            return out
    raise ValueError("mimic cycle")


def link_poses(model: Model, values: Mapping[str, Sequence[float]], *, world: bool = False) -> dict[str, Matrix]:
    """``X_root_link`` of every link (``X_world_link`` with ``world=True``) by a recursive walk from the
    root links and from ``world``; ``values`` are the independent joints' coordinates (mimic resolved here)."""
    q = resolve_mimic(model, values)
    children: dict[str, list[Joint]] = {}
    has_parent = set()
    for j in model.joints.values():
        children.setdefault(j.parent, []).append(j)
        has_parent.add(j.child)
    out: dict[str, Matrix] = {}

    def walk(link: str, x: Matrix) -> None:
        out[link] = x
        for j in children.get(link, []):
            walk(j.child, x @ joint_transform(model, j, q.get(j.name, ())))

    base = np.asarray(model.pose) if world else np.eye(4)
    for j in children.get(WORLD, []):
        if WORLD not in model.links:
            walk(j.child, base @ joint_transform(model, j, q.get(j.name, ())))
    for name, link in model.links.items():
        if name not in has_parent:
            walk(name, base @ np.asarray(link.pose))
    return out


def link_twists(model: Model, values: Mapping[str, Sequence[float]], rates: Mapping[str, Sequence[float]],
                h: float = 1e-6) -> dict[str, Matrix]:
    """``[linear, angular]`` twists in the root frame (velocity of each link origin, angular velocity),
    by central differences of :func:`link_poses` along the path ``q(t)``: scalar coordinates move by
    ``rate * t``; a quaternion (ball, floating) turns by its body-frame angular velocity (the last three
    rates), a floating joint's origin moves by its child-frame linear velocity (the first three)."""
    def moved(t: float) -> dict[str, Matrix]:
        out: dict[str, Matrix] = {}
        for name, v in values.items():
            j = model.joints[name]
            v = np.array([float(c) for c in v])
            r = np.array([float(c) for c in rates.get(name, np.zeros(j.type.nv))])
            if j.type in (JointType.BALL, JointType.FLOATING):
                quat = v[-4:]
                w = r[-3:]
                speed = math.sqrt(float(w @ w))
                turn = axis_angle(w, speed * t) if speed > 0.0 else np.eye(3)
                newq = matrix_quaternion(quaternion_matrix(quat) @ turn)
                if newq @ quat < 0:
                    newq = -newq
                if j.type is JointType.FLOATING:
                    v = np.concatenate([v[:3] + quaternion_matrix(quat) @ r[:3] * t, newq])
                else:
                    v = newq
            else:
                v = v + r * t
            out[name] = v
        return out

    plus, minus = link_poses(model, moved(h)), link_poses(model, moved(-h))
    return {name: np.concatenate([(plus[name][:3, 3] - minus[name][:3, 3]) / (2 * h),
                                  rotation_angle_axis(plus[name][:3, :3] @ minus[name][:3, :3].T) / (2 * h)])
            for name in plus}
