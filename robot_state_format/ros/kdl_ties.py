"""robot_state_publisher's quaternion sign where its rule meets a tie: KDL's own matrix, float for float.

The C++ node turns each link's frame into a quaternion with KDL's ``Rotation::GetQuaternion``: ``w`` positive
while the trace of the rotation matrix exceeds 1e-12, else the component of the largest diagonal element
positive (x when ``m00`` is larger than ``m11`` and ``m22``, else y when ``m11 > m22``, else z). Our rule
(:func:`~robot_state_format.ros.messages.kdl_quaternion_signs`) decides the same from our own numbers, and
agrees wherever the decision is not a tie. Where two diagonal elements are equal in exact arithmetic, which one
KDL finds larger depends on the rounding of its own matrix: a camera turned half a turn about ``(1, 0, -1)``
(go1's), an arm joint whose origin keeps two diagonal elements equal at every angle (tiago's ``arm_left_4``).
There the two nodes sent opposite (equivalent) quaternions.

:class:`KdlRows` redoes KDL's arithmetic for those joints, in the order the C++ code runs it (IEEE doubles,
no fused operations; ``math.sin``/``math.cos`` are the C library's, as the C++ node's):

* urdfdom reads ``<origin rpy>`` into a quaternion (``Rotation::setFromRPY``, then ``normalize``) and
  kdl_parser makes it a matrix (``Rotation::Quaternion``);
* a fixed or prismatic joint's child frame has that matrix (KDL multiplies it by identities only);
* a revolute or continuous joint's is ``Rot2(a, angle) * M``, where ``a`` is ``M * <axis xyz>`` divided by
  KDL's ``Vector::Norm`` and ``angle`` is the position (a mimic follower's: ``leader * multiplier + offset``).

Only URDF descriptions (the C++ node reads nothing else): fixed and prismatic joints once (their matrix is
constant), a revolute joint's quaternion on the messages where our rule decided on a near tie (the two largest
diagonal elements within 1e-9, or the trace within 1e-9 of KDL's threshold), for the joints where that can
happen over a turn (sampled at start). Anything unreadable: no rows, and our rule stands.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from lxml import etree

from robot_state_format.errors import RobotStateFormatError
from robot_state_format.model.xml import parse_bytes
from robot_state_format.numbers import parse_numbers

Matrix = tuple[float, float, float, float, float, float, float, float, float]
Vec3 = tuple[float, float, float]

TRACE_EPS = 1e-12  # KDL's
TIE = 1e-9  # two diagonal elements this close: the rounding decides, so KDL's arithmetic is redone
W, X, Y, Z = 3, 0, 1, 2  # the component of x y z w that KDL makes positive


class UrdfJoint(NamedTuple):
    """What KDL computes from one URDF joint: its origin's matrix, and a revolute joint's unit axis."""

    kind: str  # "constant" (fixed, prismatic) or "rotary" (revolute, continuous)
    m: Matrix
    axis: Vec3 | None


def urdf_matrix(roll: float, pitch: float, yaw: float) -> Matrix:
    """urdfdom's quaternion of ``rpy`` (normalised) as kdl_parser's ``KDL::Rotation::Quaternion`` matrix."""
    phi, the, psi = roll / 2.0, pitch / 2.0, yaw / 2.0
    sphi, cphi, sthe, cthe, spsi, cpsi = (math.sin(phi), math.cos(phi), math.sin(the), math.cos(the),
                                          math.sin(psi), math.cos(psi))
    x = sphi * cthe * cpsi - cphi * sthe * spsi
    y = cphi * sthe * cpsi + sphi * cthe * spsi
    z = cphi * cthe * spsi - sphi * sthe * cpsi
    w = cphi * cthe * cpsi + sphi * sthe * spsi
    s = math.sqrt(x * x + y * y + z * z + w * w)
    if s == 0.0:
        x, y, z, w = 0.0, 0.0, 0.0, 1.0
    else:
        x, y, z, w = x / s, y / s, z / s, w / s
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    return (w2 + x2 - y2 - z2, 2 * x * y - 2 * w * z, 2 * x * z + 2 * w * y,
            2 * x * y + 2 * w * z, w2 - x2 + y2 - z2, 2 * y * z - 2 * w * x,
            2 * x * z - 2 * w * y, 2 * y * z + 2 * w * x, w2 - x2 - y2 + z2)


def kdl_norm(v: Vec3) -> float:
    """KDL's ``Vector::Norm`` (the largest component factored out)."""
    a, b, c = v
    t1, t2 = abs(a), abs(b)
    if t1 >= t2:
        t2 = abs(c)
        if t1 >= t2:
            if t1 == 0:
                return 0.0
            return t1 * math.sqrt(1 + (b / a) * (b / a) + (c / a) * (c / a))
        return t2 * math.sqrt(1 + (a / c) * (a / c) + (b / c) * (b / c))
    t1 = abs(c)
    if t2 > t1:
        return t2 * math.sqrt(1 + (a / b) * (a / b) + (c / b) * (c / b))
    return t1 * math.sqrt(1 + (a / c) * (a / c) + (b / c) * (b / c))


def joint_axis(m: Matrix, axis: Vec3) -> Vec3 | None:
    """kdl_parser's axis ``M * axis`` made unit by KDL's joint (None for a zero axis, which KDL cannot use)."""
    a = (m[0] * axis[0] + m[1] * axis[1] + m[2] * axis[2],
         m[3] * axis[0] + m[4] * axis[1] + m[5] * axis[2],
         m[6] * axis[0] + m[7] * axis[1] + m[8] * axis[2])
    n = kdl_norm(a)
    if not n > 0.0 or not math.isfinite(n):
        return None
    return (a[0] / n, a[1] / n, a[2] / n)


def branch_of_diagonal(d0: float, d1: float, d2: float) -> int:
    """The component ``GetQuaternion`` makes positive for a matrix with this diagonal (:data:`W`, X, Y, Z)."""
    if d0 + d1 + d2 > TRACE_EPS:
        return W
    if d0 > d1 and d0 > d2:
        return X
    return Y if d1 > d2 else Z


def constant_branch(m: Matrix) -> int:
    """The branch of a fixed or prismatic joint's frame (its origin's matrix)."""
    return branch_of_diagonal(m[0], m[4], m[8])


def rotary_branch(axis: Vec3, m: Matrix, angle: float) -> int:
    """The branch of ``Rot2(axis, angle) * m`` (KDL's ``Segment::pose`` of a revolute joint), from the
    product's diagonal computed as KDL's ``operator*`` computes it."""
    ct, st = math.cos(angle), math.sin(angle)
    vt = 1 - ct
    a0, a1, a2 = axis
    vt0, vt1, vt2 = vt * a0, vt * a1, vt * a2
    st0, st1, st2 = a0 * st, a1 * st, a2 * st
    vt01, vt02, vt12 = vt0 * a1, vt0 * a2, vt1 * a2
    r0, r1, r2 = ct + vt0 * a0, -st2 + vt01, st1 + vt02
    r3, r4, r5 = st2 + vt01, ct + vt1 * a1, -st0 + vt12
    r6, r7, r8 = -st1 + vt02, st0 + vt12, ct + vt2 * a2
    return branch_of_diagonal(r0 * m[0] + r1 * m[3] + r2 * m[6],
                              r3 * m[1] + r4 * m[4] + r5 * m[7],
                              r6 * m[2] + r7 * m[5] + r8 * m[8])


def signed(quat: Sequence[float], branch: int) -> float:
    """The factor (1 or -1) that makes component ``branch`` of ``quat`` (x y z w) positive, as KDL's is."""
    return -1.0 if quat[branch] < 0 else 1.0


def urdf_joints(text: str) -> dict[str, UrdfJoint]:
    """The fixed, prismatic, revolute and continuous joints of a URDF text as KDL sees them; {} when the text
    is not a URDF ``<robot>`` or does not read (our rule then stands). Joint elements with values that do not
    read are left out."""
    try:
        root = parse_bytes(text.encode("utf-8"))
    except (RobotStateFormatError, ValueError, etree.LxmlError):
        return {}
    if not isinstance(root.tag, str) or etree.QName(root).localname != "robot":
        return {}
    out: dict[str, UrdfJoint] = {}
    for el in root.iterchildren("joint"):
        name, kind = el.get("name"), el.get("type")
        if not name or kind not in ("fixed", "prismatic", "revolute", "continuous"):
            continue
        try:
            origin = el.find("origin")
            rpy = _three(origin.get("rpy") if origin is not None else None, (0.0, 0.0, 0.0))
            m = urdf_matrix(*rpy)
            if kind in ("fixed", "prismatic"):
                out[name] = UrdfJoint("constant", m, None)
                continue
            axis_el = el.find("axis")
            axis = _three(axis_el.get("xyz") if axis_el is not None else None, (1.0, 0.0, 0.0))
            unit = joint_axis(m, axis)
            if unit is not None:
                out[name] = UrdfJoint("rotary", m, unit)
        except (RobotStateFormatError, ValueError):
            continue
    return out


def _three(text: str | None, default: Vec3) -> Vec3:
    if text is None:
        return default
    values = parse_numbers(text, 3).values  # NumberError (a ValueError) for anything else
    return (values[0], values[1], values[2])


W2_NEAR = 0.25 + 2.5e-13  # our rule's threshold on w^2 (KDL's trace > 1e-12 for a unit quaternion)
SQ_TIE = TIE / 2  # m00 - m11 = 2 (x^2 - y^2) for a unit quaternion: diagonal elements within TIE


def near_tie(x: float, y: float, z: float, w: float) -> bool:
    """Whether our rule's decision for ``x y z w`` rests on a near tie, where KDL's rounding decides: ``w`` not
    leading (``w^2`` at most the rule's threshold) and either ``w^2`` close to it or the two largest of ``x^2,
    y^2, z^2`` close to each other."""
    w2 = w * w
    if w2 > W2_NEAR:
        return False
    _, b, c = sorted((x * x, y * y, z * z))
    return W2_NEAR - w2 < SQ_TIE or c - b < SQ_TIE


def near_ties(quats: np.ndarray) -> np.ndarray:
    """:func:`near_tie` of each row ``x y z w`` (indices of the rows that are)."""
    sq = quats * quats
    w2 = sq[:, 3]
    top = np.sort(sq[:, :3], axis=1)
    near = (w2 <= W2_NEAR) & ((W2_NEAR - w2 < SQ_TIE) | (top[:, 2] - top[:, 1] < SQ_TIE))
    return np.flatnonzero(near)


def tie_prone(z: np.ndarray, samples: int = 128) -> np.ndarray:
    """Per rotary row (``Re(z e^{ih})`` its quaternion at half-angle ``h``, rows ``x y z w`` of complex
    constants): whether its sign can rest on a near tie over a turn (:func:`near_ties` at some sampled angle). A
    tie that holds at every angle (go1's cameras, tiago's arm) shows at every sample where ``w`` does not lead;
    two elements crossing at one angle almost never fall on a sample, and then only at that angle."""
    if not len(z):
        return np.zeros(0, dtype=bool)
    h = np.linspace(-math.pi, math.pi, samples, endpoint=False)
    quat = (z[:, None, :] * np.exp(1j * h)[None, :, None]).real.reshape(-1, 4)
    near = np.zeros(len(quat), dtype=bool)
    near[near_ties(quat)] = True
    return np.asarray(near.reshape(len(z), samples).any(axis=1), dtype=bool)


class KdlRows:
    """KDL's arithmetic for the rows of a URDF tree (see the module text).

    ``constant``: tree row -> branch (fixed and prismatic joints: their sign is set once). ``rotary``: tree
    row -> (axis, matrix) of the revolute and continuous joints; a message's quaternion of one of them whose
    sign our rule decided on a near tie (:func:`near_tie`) gets KDL's instead (:meth:`sign`; the writers look
    only at the rows :func:`tie_prone` finds)."""

    def __init__(self, constant: dict[int, int], rotary: dict[int, tuple[Vec3, Matrix]]) -> None:
        self.constant = constant
        self.rotary = rotary

    @classmethod
    def of(cls, text: str, joint_names: Sequence[str]) -> KdlRows:
        """From a URDF text and the tree's joint names (row order); empty for anything else."""
        joints = urdf_joints(text) if "<robot" in text else {}
        constant: dict[int, int] = {}
        rotary: dict[int, tuple[Vec3, Matrix]] = {}
        for row, name in enumerate(joint_names):
            j = joints.get(name)
            if j is None:
                continue
            if j.kind == "constant":
                constant[row] = constant_branch(j.m)
            elif j.axis is not None:
                rotary[row] = (j.axis, j.m)
        return cls(constant, rotary)

    def __bool__(self) -> bool:
        return bool(self.constant or self.rotary)

    def sign(self, row: int, angle: float, quat: Sequence[float]) -> float:
        """The factor (1 or -1) giving ``quat`` (rotary row ``row`` at joint angle ``angle``, radians as KDL gets
        them) KDL's sign."""
        axis, m = self.rotary[row]
        return signed(quat, rotary_branch(axis, m, angle))

    def fix_rotary(self, rows: Sequence[int], quats: np.ndarray, angles: Sequence[float]) -> None:
        """Quaternion rows ``quats[i]`` of rotary tree rows ``rows[i]`` at ``angles[i]``: those on a near tie get
        KDL's sign, in place (rows that are not rotary are left)."""
        for i in near_ties(quats).tolist():
            row = rows[i]
            if row in self.rotary and self.sign(row, angles[i], quats[i].tolist()) < 0:
                quats[i] *= -1.0

    def fix_constant(self, rows: Sequence[int], quats: np.ndarray) -> None:
        """Quaternion rows ``quats[i]`` (x y z w) of tree rows ``rows[i]`` given KDL's signs, in place."""
        for i, row in enumerate(rows):
            b = self.constant.get(row)
            if b is not None and quats[i, b] < 0:
                quats[i] *= -1.0


__all__ = ["KdlRows", "UrdfJoint", "constant_branch", "kdl_norm", "near_tie", "near_ties", "rotary_branch", "signed",
           "tie_prone", "urdf_joints", "urdf_matrix"]
