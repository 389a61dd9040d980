"""Compile a :class:`~robot_state_format.model.types.Model` into flat arrays for the kinematics.

:func:`compile_model` does all the dictionary and graph work once: link order, parent indices,
constant per-joint matrices grouped by joint type, the position/velocity layout and the mimic
resolution order.  Evaluating a configuration (see :mod:`robot_state_format.kinematics.fk`) then
only runs vectorised numpy code on these arrays.

Layouts
-------
* ``link_names``: root links first (declaration order), then every other link breadth-first
  by depth; within a depth level, links are grouped by how the pose kernel treats their joint
  (fixed, revolute about X/Y/Z, screw, prismatic, other) and then by parent (see
  :mod:`robot_state_format.kinematics.plan`).  Parents always precede children.
* ``joint_names``: tree joints in the order of their child links, so joint ``j`` moves link
  ``nroot + j``.
* ``q`` (size ``nq``): the positions of every *independent* moving joint, in joint order, each
  in the layout of :mod:`robot_state_format.model.types` (floating ``x y z qx qy qz qw``, ball
  ``qx qy qz qw``, planar ``x y yaw``).  Joints all of whose coordinates mimic another joint are
  not in ``q``; a 2-DOF joint with only one mimicked coordinate keeps its full slice and the
  mimicked entry is ignored.  ``v`` (size ``nv``) is the same for velocities (ball: angular
  velocity of the child-side joint frame, expressed in that frame; floating: linear velocity of
  its origin then angular velocity, both expressed in the child-side joint frame, as Pinocchio's
  free-flyer).
* ``qa``/``va`` ("all" coordinates, sizes ``nqa``/``nva``): the same for every moving tree joint,
  mimic followers included.

Joint motion ``motion(q)`` in the joint frame J (axes unit vectors in J):

* revolute, continuous: rotation by ``q`` about ``axis``; prismatic: translation ``q * axis``;
* screw: rotation by ``q`` about ``axis`` and translation ``screw_pitch * q / (2 pi)`` along it;
* universal, revolute2: ``Rot(axis, q0) @ Rot(axis2, q1)`` -- ``axis`` is fixed in the parent
  side, ``axis2`` (given at the zero configuration) is carried by the first rotation, i.e. fixed
  in the child side: two revolute joints in series, as libsdformat/Gazebo describe them;
* planar: ``Trans(x * e1 + y * e2) @ Rot(axis, yaw)`` with ``axis`` the plane normal n and the
  in-plane basis ``e1`` = the unit projection onto the plane of the first of X, Y, Z with the
  smallest ``|n_i|``, ``e2 = n x e1`` (n = Z gives e1 = X, e2 = Y);
* ball: rotation by the unit quaternion; floating: translation then rotation.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from robot_state_format.errors import KinematicsError
from robot_state_format.kinematics.plan import LevelPlan, PosePlan, aligned_columns, transposed
from robot_state_format.model.types import SCOPE, WORLD, Joint, JointType, Model

QUATERNION_TOLERANCE = 1e-6
"""A quaternion is accepted when ``abs(norm - 1) <= QUATERNION_TOLERANCE``; it is then normalised."""

ROOT = -1
"""Parent index of links posed directly in the root frame (root links, children of WORLD joints)."""

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]


class KinematicsWarning(UserWarning):
    """Emitted when input is accepted but partly ignored (values given for mimic followers)."""


# --------------------------------------------------------------------------------------------
# constant per-type data


@dataclass
class RotaryGroup:
    """revolute / continuous / screw joints: ``X = M0 + sin(q) M1 + (1 - cos(q)) M2 + q M3``.

    Evaluated as ``(M0 + M2) + sin(q) M1 - cos(q) M2 + q M3`` (one operation fewer).
    """

    joints: IntArray
    col: IntArray  # column in qa
    m0: FloatArray  # (3, 4, g, 1)
    m1: FloatArray
    m2: FloatArray
    m3: FloatArray | None  # screw translation term, None when all zero
    m02: FloatArray = field(default_factory=lambda: np.zeros(0))  # M0 + M2: X = M02 + sin(q) M1 - cos(q) M2 (+ q M3)


@dataclass
class PrismaticGroup:
    """``X = [R, t0 + q d]`` with constant R."""

    joints: IntArray
    col: IntArray
    rot: FloatArray  # (3, 3, g, 1)
    t0: FloatArray  # (3, g, 1)
    d: FloatArray  # (3, g, 1)


@dataclass
class TwoAxisGroup:
    """universal / revolute2: ``X = (P0 + s1 P1 + c1' P2) o (Q0 + s2 Q1 + c2' Q2)``."""

    joints: IntArray
    col: IntArray  # first of two columns
    p: tuple[FloatArray, FloatArray, FloatArray]
    r: tuple[FloatArray, FloatArray, FloatArray]


@dataclass
class PlanarGroup:
    """``X = M0 + sin(yaw) M1 + (1 - cos(yaw)) M2 + x M3 + y M4``."""

    joints: IntArray
    col: IntArray  # first of three columns
    m: tuple[FloatArray, FloatArray, FloatArray]
    e1: FloatArray  # (3, g, 1): A_R e1 (translation direction of x)
    e2: FloatArray


@dataclass
class QuaternionGroup:
    """ball (``X = A o R(quat) o B``) or floating (``X = A o [R(quat), p] o B``)."""

    joints: IntArray
    col: IntArray  # first position column (x for floating, qx for ball)
    a: FloatArray  # (3, 4, g, 1)
    b: FloatArray
    floating: bool


@dataclass
class MimicLevel:
    """One batch of mimic assignments whose leaders are already known."""

    dst: IntArray
    src: IntArray
    mult: FloatArray
    off: FloatArray


@dataclass
class TwistConstants:
    """Joint axes in the joint frame and child offsets, used by the twist computation."""

    rot_axes: list[FloatArray]  # per rotary group: (g, 3, 1)
    rot_pitch: list[FloatArray]  # per rotary group: (g, 1, 1) metres per radian
    pri_axes: FloatArray  # (g, 3, 1)
    two: tuple[FloatArray, FloatArray, FloatArray, FloatArray]  # a1, K2 a1, K2^2 a1, a2
    planar: tuple[FloatArray, FloatArray, FloatArray]  # e1, e2, n
    offset_t: FloatArray  # (njoints, 3, 1): translation of X_JC
    offset_r: FloatArray  # (njoints, 3, 3, 1): rotation of X_JC


@dataclass
class CompiledTree:
    """Array form of a Model's kinematic tree (see the module docstring for the layouts)."""

    model_name: str
    pose: FloatArray  # X_world_root
    link_names: list[str]
    joint_names: list[str]
    joint_types: list[JointType]
    joint_parent: IntArray  # link index of each joint's parent, ROOT for WORLD
    link_parent: IntArray  # parent link index of each link, ROOT for root links / WORLD children
    nroot: int
    root_poses: FloatArray  # (nroot, 4, 4)
    root_x: FloatArray  # (3, 4, nroot, 1): the same, in the kernels' layout
    level0: int  # links [0, level0) are posed directly in the root frame
    levels: list[tuple[int, int, IntArray]]  # (start, stop, parent indices) for deeper links
    moving_joint_names: list[str]
    nq: int
    nv: int
    nqa: int
    nva: int
    joint_qa: IntArray  # start of each joint in qa (-1 when nq == 0)
    joint_va: IntArray
    q_to_qa: IntArray  # qa index of each q entry
    v_to_va: IntArray
    mimic_q: list[MimicLevel]
    mimic_v: list[MimicLevel]
    mimic_followers: list[str]  # joints all of whose coordinates are mimicked
    mimicked_qa: IntArray  # qa indices computed from a leader
    fixed_joints: IntArray
    fixed_x: FloatArray  # (3, 4, g, 1)
    rotary: list[RotaryGroup]
    prismatic: PrismaticGroup | None
    two_axis: TwoAxisGroup | None
    planar: PlanarGroup | None
    quaternion: list[QuaternionGroup]
    quat_q_cols: list[tuple[str, int]]  # (joint, first quaternion column in q) for validation
    child_offset: FloatArray  # (njoints, 4, 4) X_JC, for twists
    twist: TwistConstants | None = None
    plan: PosePlan | None = None
    constraint_names: list[str] = field(default_factory=list)
    _q_index: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False)
    _v_index: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False)
    _qa_index: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False)
    _va_index: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False)
    _names: dict[str, dict[str, list[str]]] = field(default_factory=dict, repr=False)
    _partial_mimic: dict[str, list[int]] = field(default_factory=dict, repr=False)
    _cache: dict[str, object] = field(default_factory=dict, repr=False)

    def __getstate__(self) -> dict[str, object]:
        """Pickling and deep copies leave out the caches (they hold per-thread scratch arrays)."""
        state = dict(self.__dict__)
        state["_cache"] = {}
        return state

    # ---- sizes and names ------------------------------------------------------------------

    @property
    def nlinks(self) -> int:
        return len(self.link_names)

    @property
    def njoints(self) -> int:
        return len(self.joint_names)

    @property
    def joint_child(self) -> IntArray:
        """Link index moved by each joint (``nroot + j``)."""
        return np.arange(self.nroot, self.nroot + self.njoints, dtype=np.intp)

    def link_index(self, name: str) -> int:
        """Index of a link (model-relative or scoped name)."""
        return self.link_names.index(self._resolve(name, self.link_names, "link"))

    def joint_index(self, name: str) -> int:
        """Index of a tree joint (model-relative, scoped, or unique unscoped name)."""
        return self.joint_names.index(self.resolve_joint(name))

    def resolve_joint(self, name: str) -> str:
        """Model-relative name of a tree joint from a model-relative, scoped or unique unscoped name."""
        return self._resolve(name, self.joint_names, "joint")

    def _resolve(self, name: str, names: list[str], what: str) -> str:
        table = self._names.get(what)
        if table is None:
            table = {}
            for n in names:
                keys = {n, f"{self.model_name}{SCOPE}{n}" if self.model_name else n}
                parts = n.split(SCOPE)
                keys.update(SCOPE.join(parts[i:]) for i in range(1, len(parts)))
                for k in keys:
                    table.setdefault(k, []).append(n)
            for n in names:  # exact model-relative names always win
                table[n] = [n]
            self._names[what] = table
        found = table.get(name)
        if not found:
            raise KinematicsError(f"unknown {what} {name!r} in model {self.model_name!r}")
        if len(found) > 1:
            raise KinematicsError(f"ambiguous {what} name {name!r}: matches {', '.join(sorted(found))}")
        return str(found[0])

    def q_slice(self, name: str) -> slice:
        """Slice of an independent moving joint's positions in ``q``."""
        j = self.resolve_joint(name)
        if j not in self._q_index:
            raise KinematicsError(f"joint {j!r} has no independent positions (fixed or mimic follower)")
        a, b = self._q_index[j]
        return slice(a, b)

    def v_slice(self, name: str) -> slice:
        """Slice of an independent moving joint's velocities in ``v``."""
        j = self.resolve_joint(name)
        if j not in self._v_index:
            raise KinematicsError(f"joint {j!r} has no independent velocities (fixed or mimic follower)")
        a, b = self._v_index[j]
        return slice(a, b)

    def neutral(self) -> FloatArray:
        """Zero configuration: zeros, and identity quaternions (w = 1) for ball/floating joints."""
        q = np.zeros(self.nq)
        for _, c in self.quat_q_cols:
            q[c + 3] = 1.0
        return q

    # ---- mappings ---------------------------------------------------------------------------

    def resolve_mapping(
        self,
        positions: Mapping[str, float | Sequence[float]],
        base: FloatArray | None = None,
        *,
        velocities: bool = False,
        strict: bool = True,
    ) -> tuple[FloatArray, list[str]]:
        """``q`` (or ``v`` with ``velocities=True``) from ``{joint: value or list}``, plus warnings.

        Names are model-relative, scoped (``robot::joint``) or unscoped where unique.  Joints left
        out keep ``base`` (default :meth:`neutral`, or zeros for velocities).  Values for mimic
        followers and fixed joints are ignored with a warning; with ``strict=False`` unknown names
        are ignored with a warning too.  Wrong sizes and non-numbers raise :class:`KinematicsError`.
        """
        size = self.nv if velocities else self.nq
        index = self._v_index if velocities else self._q_index
        if base is None:
            out = np.zeros(size) if velocities else self.neutral()
        else:
            out = np.array(base, dtype=np.float64, copy=True)
            if out.shape != (size,):
                raise KinematicsError(f"base must have shape ({size},), got {out.shape}")
        warns: list[str] = []
        what = "velocity" if velocities else "position"
        for name, value in positions.items():
            try:
                joint = self.resolve_joint(str(name))
            except KinematicsError as exc:
                if strict:
                    raise
                warns.append(f"{exc}; ignored")
                continue
            if joint not in index:
                kind = "a mimic follower" if joint in self.mimic_followers else "not a moving joint"
                warns.append(f"joint {joint!r} is {kind}: its {what} is ignored")
                continue
            a, b = index[joint]
            arr = _as_values(value, joint, b - a, what)
            out[a:b] = arr
            for dof in self._partial_mimic.get(joint, []):
                warns.append(f"coordinate {dof} of joint {joint!r} mimics another joint: its {what} is ignored")
        return out, warns

    def q_from_mapping(
        self, positions: Mapping[str, float | Sequence[float]], base: FloatArray | None = None
    ) -> FloatArray:
        """``q`` from ``{joint: value or list}``; warnings go to :mod:`warnings` (KinematicsWarning).

        See :meth:`resolve_mapping` (which returns the warnings instead).
        """
        q, warns = self.resolve_mapping(positions, base)
        for w in warns:
            warnings.warn(w, KinematicsWarning, stacklevel=2)
        return q

    def v_from_mapping(
        self, velocities: Mapping[str, float | Sequence[float]], base: FloatArray | None = None
    ) -> FloatArray:
        """``v`` from ``{joint: value or list}``, like :meth:`q_from_mapping`."""
        v, warns = self.resolve_mapping(velocities, base, velocities=True)
        for w in warns:
            warnings.warn(w, KinematicsWarning, stacklevel=2)
        return v

    # ---- expansion to every joint -------------------------------------------------------

    def expand_q(self, q: FloatArray) -> FloatArray:
        """``qa`` (every moving tree joint, mimic followers resolved) from ``q``; shape ``(..., nqa)``.

        ``q`` is not validated here (see :func:`robot_state_format.kinematics.fk.check_q`).
        """
        q = np.asarray(q, dtype=np.float64)
        qa = np.empty(q.shape[:-1] + (self.nqa,))
        qa[..., self.q_to_qa] = q
        for lv in self.mimic_q:
            qa[..., lv.dst] = qa[..., lv.src] * lv.mult + lv.off
        return qa

    def expand_v(self, v: FloatArray) -> FloatArray:
        """``va`` from ``v`` (mimic follower rates = multiplier * leader rate)."""
        v = np.asarray(v, dtype=np.float64)
        va = np.empty(v.shape[:-1] + (self.nva,))
        va[..., self.v_to_va] = v
        for lv in self.mimic_v:
            va[..., lv.dst] = va[..., lv.src] * lv.mult
        return va

    def all_joint_positions(self, q: FloatArray) -> dict[str, FloatArray]:
        """Positions of every tree joint (mimic followers resolved; fixed joints: empty arrays)."""
        qa = self.expand_q(np.asarray(q, dtype=np.float64).reshape(self.nq))
        return {n: qa[slice(*self._qa_index[n])].copy() if n in self._qa_index else np.zeros(0)
                for n in self.joint_names}

    def all_joint_velocities(self, v: FloatArray) -> dict[str, FloatArray]:
        """Velocities of every tree joint (mimic followers resolved; fixed joints: empty arrays)."""
        va = self.expand_v(np.asarray(v, dtype=np.float64).reshape(self.nv))
        return {n: va[slice(*self._va_index[n])].copy() if n in self._va_index else np.zeros(0)
                for n in self.joint_names}

    def _twist_constants(self) -> TwistConstants:
        assert self.twist is not None
        return self.twist

    def scoped(self, name: str) -> str:
        """Fully scoped name of a model-relative link/joint name (``robot::link``)."""
        return f"{self.model_name}{SCOPE}{name}" if self.model_name else name


def _is_number(x: object) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, (bool, np.bool_))


def _as_values(value: object, joint: str, n: int, what: str) -> FloatArray:
    """One joint's values: a number or a flat list of numbers (not booleans or strings)."""
    if isinstance(value, np.ndarray):
        ok = value.dtype.kind in "iuf"
    elif isinstance(value, (list, tuple)):
        ok = all(_is_number(x) for x in value)
    else:
        ok = _is_number(value)
    if not ok:
        raise KinematicsError(f"joint {joint!r}: {what} must be a number or a list of numbers, got {value!r}")
    arr = np.atleast_1d(np.asarray(value, dtype=np.float64))
    if arr.ndim != 1 or arr.shape[0] != n:
        got = f"shape {list(arr.shape)}" if arr.ndim != 1 else str(arr.shape[0])
        raise KinematicsError(f"joint {joint!r}: expected {n} {what} value(s), got {got}")
    if not np.all(np.isfinite(arr)):
        raise KinematicsError(f"joint {joint!r}: {what} must be finite, got {arr.tolist()}")
    return arr


# --------------------------------------------------------------------------------------------
# compilation


def _unit3(v: Sequence[float] | None, default: tuple[float, float, float], joint: Joint,
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


def _unit(v: Sequence[float] | None, default: tuple[float, float, float], joint: Joint, what: str) -> FloatArray:
    return np.array(_unit3(v, default, joint, what))


def _skew(a: FloatArray) -> FloatArray:
    k = np.zeros((4, 4))
    k[:3, :3] = [[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]]
    return k


def _skews(axes: FloatArray) -> FloatArray:
    """``(g, 4, 4)`` cross-product matrices of unit axes ``(g, 3)``."""
    k = np.zeros((len(axes), 4, 4))
    x, y, z = axes[:, 0], axes[:, 1], axes[:, 2]
    k[:, 0, 1], k[:, 0, 2], k[:, 1, 2] = -z, y, -x
    k[:, 1, 0], k[:, 2, 0], k[:, 2, 1] = z, -y, x
    return k


def _translation(a: FloatArray) -> FloatArray:
    t = np.zeros((4, 4))
    t[:3, 3] = a
    return t


def _planar_basis3(n: Sequence[float] | FloatArray) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
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
    e1, e2 = _planar_basis3(normal)
    return np.array(e1), np.array(e2)


def _transform(t: object, joint: Joint, what: str) -> FloatArray:
    a = np.asarray(t, dtype=np.float64)
    if a.shape != (4, 4) or not np.all(np.isfinite(a)):
        raise KinematicsError(f"joint {joint.name!r}: {what} must be a finite 4x4 transform")
    return a


def _top(m: FloatArray) -> FloatArray:
    """3x4 top block of a 4x4 transform."""
    return np.array(m[:3, :], dtype=np.float64)


def _stack(items: list[FloatArray]) -> FloatArray:
    """Stack per-joint constants on a joint axis placed before a trailing configuration axis of 1.

    ``(3, 4)`` items give ``(3, 4, g, 1)``; ``(3,)`` items give ``(3, g, 1)``.
    """
    return np.ascontiguousarray(np.stack(items, axis=-1)[..., None])


def compile_model(model: Model) -> CompiledTree:
    """Compile ``model``'s tree joints into a :class:`CompiledTree`.

    Raises :class:`KinematicsError` for a joint with an unknown parent/child link, a link that is
    the child of two joints, a cycle among tree joints, a zero axis, a mimic joint whose leader is
    unknown (or not a moving tree joint), mimic on a quaternion joint, or a mimic cycle.
    """
    links = list(model.links)
    link_set = set(links)
    joints = list(model.joints.values())
    child_of: dict[str, Joint] = {}
    for j in joints:
        if j.type is JointType.GEARBOX:
            raise KinematicsError(f"joint {j.name!r}: gearbox joints are constraints, not tree joints")
        if j.child not in link_set:
            raise KinematicsError(f"joint {j.name!r}: unknown child link {j.child!r}")
        if j.parent not in link_set and j.parent != WORLD:
            raise KinematicsError(f"joint {j.name!r}: unknown parent link {j.parent!r}")
        if j.child in child_of:
            raise KinematicsError(
                f"link {j.child!r} is the child of two joints ({child_of[j.child].name!r}, {j.name!r})"
            )
        child_of[j.child] = j
    roots = [n for n in links if n not in child_of]
    children: dict[str, list[Joint]] = {}
    for j in joints:
        children.setdefault(j.parent, []).append(j)

    # breadth-first from the roots and from WORLD (a link actually named "world" is an ordinary link)
    world = "\0root-frame" if WORLD in link_set else WORLD
    order: list[str] = list(roots)
    joint_order: list[Joint] = []
    link_depth: dict[str, int] = {n: 0 for n in roots}
    frontier = [j for j in children.get(world, [])]
    for j in frontier:
        link_depth[j.child] = 0
    default_axis = (1.0, 0.0, 0.0) if model.format == "urdf" else (0.0, 0.0, 1.0)
    all_origins = _transforms([j.origin for j in joints], joints, "origin")
    all_offsets = _transforms([j.child_offset for j in joints], joints, "child_offset")
    offset_is_eye = (all_offsets == _EYE4).all(axis=(1, 2)).tolist() if joints else []
    infos: dict[str, _JointInfo] = {}
    shared: dict[tuple[object, ...], _JointInfo] = {}  # joints with identity offsets and the same type and axis
    for i, j in enumerate(joints):
        key = (j.type, j.axis) if offset_is_eye[i] and isinstance(j.axis, (tuple, type(None))) else None
        info = shared.get(key) if key is not None else None
        if info is None:
            info = _joint_info(j, default_axis, all_offsets[i], offset_is_eye[i])
            if key is not None:
                shared[key] = info
        infos[j.name] = info

    def kind(j: Joint) -> int:
        return infos[j.name].kind

    def held(j: Joint) -> bool:
        return infos[j.name].held

    level0_joints = sorted(frontier, key=lambda j: (kind(j), held(j)))
    order.extend(j.child for j in level0_joints)
    joint_order.extend(level0_joints)
    current = list(order)
    pos = {n: i for i, n in enumerate(order)}
    while current:
        nxt: list[Joint] = []
        for name in current:
            nxt.extend(children.get(name, []))
        # within a level, group joints by how the pose kernel treats them, then by parent
        nxt.sort(key=lambda j: (kind(j), held(j), pos[j.parent]))
        for j in nxt:
            link_depth[j.child] = link_depth[j.parent] + 1
            pos[j.child] = len(pos)
        order.extend(j.child for j in nxt)
        joint_order.extend(nxt)
        current = [j.child for j in nxt]
    if len(order) != len(links):
        missing = sorted(set(links) - set(order))
        raise KinematicsError(f"the joints form a cycle: links {', '.join(missing)} are not reachable from a root")
    index = {n: i for i, n in enumerate(order)}
    nroot = len(roots)
    level0 = nroot + len(level0_joints)
    link_parent = np.full(len(order), ROOT, dtype=np.intp)
    joint_parent = np.full(len(joint_order), ROOT, dtype=np.intp)
    for k, j in enumerate(joint_order):
        if j.parent != world:
            joint_parent[k] = index[j.parent]
            link_parent[nroot + k] = index[j.parent]
    levels: list[tuple[int, int, IntArray]] = []
    start = level0
    while start < len(order):
        d = link_depth[order[start]]
        stop = start
        while stop < len(order) and link_depth[order[stop]] == d:
            stop += 1
        levels.append((start, stop, np.ascontiguousarray(link_parent[start:stop])))
        start = stop

    root_poses = np.stack([np.asarray(model.links[n].pose, dtype=np.float64) for n in roots]) if roots else (
        np.zeros((0, 4, 4)))
    if not np.all(np.isfinite(root_poses)):
        raise KinematicsError("a root link pose is not finite")

    # coordinate layout over every moving tree joint
    names = [j.name for j in joint_order]
    jidx = {n: k for k, n in enumerate(names)}
    joint_qa = np.full(len(names), -1, dtype=np.intp)
    joint_va = np.full(len(names), -1, dtype=np.intp)
    nqa = nva = 0
    qa_index: dict[str, tuple[int, int]] = {}
    va_index: dict[str, tuple[int, int]] = {}
    nqs = [j.type.nq for j in joint_order]
    nvs = [j.type.nv for j in joint_order]
    qa_start = [-1] * len(names)
    va_start = [-1] * len(names)
    for k, j in enumerate(joint_order):
        nq, nv = nqs[k], nvs[k]
        if nq > 0:
            qa_start[k], va_start[k] = nqa, nva
            qa_index[j.name] = (nqa, nqa + nq)
            va_index[j.name] = (nva, nva + nv)
            nqa += nq
            nva += nv
    joint_qa[:] = qa_start
    joint_va[:] = va_start

    mimic_q, mimic_v, followers, mimicked = _compile_mimic(model, joint_order, jidx, joint_qa, joint_va)

    q_index: dict[str, tuple[int, int]] = {}
    v_index: dict[str, tuple[int, int]] = {}
    q_to_qa: list[int] = []
    v_to_va: list[int] = []
    moving: list[str] = []
    quat_q_cols: list[tuple[str, int]] = []
    for k, j in enumerate(joint_order):
        nq, nv = nqs[k], nvs[k]
        if nq == 0 or j.name in followers:
            continue
        moving.append(j.name)
        q0, v0 = len(q_to_qa), len(v_to_va)
        q_index[j.name] = (q0, q0 + nq)
        v_index[j.name] = (v0, v0 + nv)
        q_to_qa.extend(range(qa_start[k], qa_start[k] + nq))
        v_to_va.extend(range(va_start[k], va_start[k] + nv))
        if j.type is JointType.BALL:
            quat_q_cols.append((j.name, q0))
        elif j.type is JointType.FLOATING:
            quat_q_cols.append((j.name, q0 + 3))
    partial = {
        j.name: sorted(m.dof for m in j.mimic) for j in joint_order if j.mimic and j.name not in followers
    }

    model_index = {j.name: i for i, j in enumerate(joints)}
    order_idx = np.array([model_index[j.name] for j in joint_order], dtype=np.intp)
    origins, offsets = all_origins[order_idx], all_offsets[order_idx]
    tree = CompiledTree(
        model_name=model.name if not model.is_world else "",
        pose=np.array(model.pose, dtype=np.float64),
        link_names=order,
        joint_names=names,
        joint_types=[j.type for j in joint_order],
        joint_parent=joint_parent,
        link_parent=link_parent,
        nroot=nroot,
        root_poses=root_poses,
        root_x=np.ascontiguousarray(root_poses[:, :3, :].transpose(1, 2, 0)[..., None]),
        level0=level0,
        levels=levels,
        moving_joint_names=moving,
        nq=len(q_to_qa),
        nv=len(v_to_va),
        nqa=nqa,
        nva=nva,
        joint_qa=joint_qa,
        joint_va=joint_va,
        q_to_qa=np.array(q_to_qa, dtype=np.intp),
        v_to_va=np.array(v_to_va, dtype=np.intp),
        mimic_q=mimic_q,
        mimic_v=mimic_v,
        mimic_followers=sorted(followers, key=jidx.__getitem__),
        mimicked_qa=mimicked,
        fixed_joints=np.zeros(0, dtype=np.intp),
        fixed_x=np.zeros((3, 4, 0, 1)),
        rotary=[],
        prismatic=None,
        two_axis=None,
        planar=None,
        quaternion=[],
        quat_q_cols=quat_q_cols,
        child_offset=offsets,
        constraint_names=list(model.constraints),
        _q_index=q_index,
        _v_index=v_index,
        _qa_index=qa_index,
        _va_index=va_index,
        _partial_mimic=partial,
    )
    ji = [infos[j.name] for j in joint_order]
    _compile_groups(tree, joint_order, ji, origins, offsets)
    tree.plan = _compile_plan(tree, joint_order, ji, origins, offsets)
    return tree


def _transforms(ts: list[object], joints: list[Joint], what: str) -> FloatArray:
    """``(n, 4, 4)`` finite transforms (``KinematicsError`` naming the first bad joint)."""
    if not ts:
        return np.zeros((0, 4, 4))
    try:
        a = np.array(ts, dtype=np.float64)
    except (TypeError, ValueError):
        a = np.zeros(0)
    if a.shape == (len(ts), 4, 4) and math.isfinite(float(a.sum())):
        return a
    for t, j in zip(ts, joints):
        _transform(t, j, what)
    raise KinematicsError(f"{what}: every joint's must be a finite 4x4 transform")  # pragma: no cover


@dataclass
class _JointInfo:
    """What the compilation needs of one joint, computed once."""

    kind: int
    axis: tuple[float, float, float] | None  # unit axis (None: fixed, ball, floating)
    q: FloatArray | None  # revolute/continuous: the change of basis Q (None: I, an axis along +-X/Y/Z)
    sign: float  # revolute/continuous: sign of the coordinate axis
    held: bool  # the pose kernel holds the child as X D^-1 (D = Q^T child_offset != I)


_AXIS_TYPES = (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.SCREW, JointType.PRISMATIC,
               JointType.UNIVERSAL, JointType.REVOLUTE2)


def _joint_info(j: Joint, default_axis: tuple[float, float, float], b: FloatArray, b_is_eye: bool) -> _JointInfo:
    """``b``: the joint's child offset (validated), ``b_is_eye``: whether it is the identity."""
    t = j.type
    if t is JointType.FIXED:
        return _JointInfo(KIND_FIXED, None, None, 1.0, False)
    if t is JointType.PLANAR:
        return _JointInfo(KIND_GENERIC, _unit3(j.axis, (0.0, 0.0, 1.0), j, "axis"), None, 1.0, False)
    if t not in _AXIS_TYPES:
        return _JointInfo(KIND_GENERIC, None, None, 1.0, False)
    ax = _unit3(j.axis, default_axis, j, "axis")
    if t is JointType.SCREW:
        return _JointInfo(KIND_GENERAL, ax, None, 1.0, False)
    if t is JointType.PRISMATIC:
        return _JointInfo(KIND_PRISMATIC, ax, None, 1.0, False)
    if t not in (JointType.REVOLUTE, JointType.CONTINUOUS):
        return _JointInfo(KIND_GENERIC, ax, None, 1.0, False)
    cols = aligned_columns(ax)
    if cols is None:  # turned onto Z by Q = [e1 e2 axis] (the planar basis)
        e1, e2 = _planar_basis3(ax)
        q = np.array([[e1[0], e2[0], ax[0], 0.0], [e1[1], e2[1], ax[1], 0.0], [e1[2], e2[2], ax[2], 0.0],
                      [0.0, 0.0, 0.0, 1.0]])
        # Q^T b == I only if b == Q, never the identity here (the axis is not a coordinate axis)
        return _JointInfo(KIND_ALIGNED_Z, ax, q, 1.0, b_is_eye or not np.array_equal(q.T @ b, _EYE4))
    kind = (KIND_ALIGNED_X, KIND_ALIGNED_Y, KIND_ALIGNED_Z)[(1, 2, 0).index(cols[0])]
    return _JointInfo(kind, ax, None, cols[2], not b_is_eye)


_EYE4 = np.eye(4)


def _compile_mimic(
    model: Model, joint_order: list[Joint], jidx: dict[str, int], joint_qa: IntArray, joint_va: IntArray
) -> tuple[list[MimicLevel], list[MimicLevel], set[str], IntArray]:
    """Mimic assignments grouped in dependency order; followers whose every coordinate mimics."""
    scalar = {JointType.BALL, JointType.FLOATING}
    entries: dict[int, tuple[int, int, float, float, str]] = {}  # dst qa -> (src qa, src va, m, o, joint)
    dst_va: dict[int, int] = {}
    counted: dict[str, set[int]] = {}
    for k, j in enumerate(joint_order):
        for mim in j.mimic:
            if j.type in scalar or j.nq == 0:
                raise KinematicsError(f"joint {j.name!r}: a {j.type.value} joint cannot mimic another joint")
            leader_name = mim.joint
            if leader_name not in jidx:
                raise KinematicsError(f"joint {j.name!r} mimics unknown joint {leader_name!r} (not a tree joint)")
            lk = jidx[leader_name]
            leader = joint_order[lk]
            if leader.type in scalar or leader.nq == 0:
                raise KinematicsError(
                    f"joint {j.name!r} mimics {leader_name!r}, a {leader.type.value} joint without scalar positions"
                )
            if not (0 <= mim.dof < j.nq) or not (0 <= mim.leader_dof < leader.nq):
                raise KinematicsError(f"joint {j.name!r}: mimic coordinate index out of range")
            if not (math.isfinite(mim.multiplier) and math.isfinite(mim.offset)):
                raise KinematicsError(f"joint {j.name!r}: mimic multiplier and offset must be finite")
            dst = int(joint_qa[k]) + mim.dof
            src = int(joint_qa[lk]) + mim.leader_dof
            if dst in entries:
                raise KinematicsError(f"joint {j.name!r}: coordinate {mim.dof} mimics two joints")
            entries[dst] = (src, int(joint_va[lk]) + mim.leader_dof, float(mim.multiplier), float(mim.offset), j.name)
            dst_va[dst] = int(joint_va[k]) + mim.dof
            counted.setdefault(j.name, set()).add(mim.dof)
    for j in model.constraints.values():
        if j.mimic:
            pass  # constraints are not evaluated; their mimic data stays in the Model
    # dependency levels (Kahn): an entry is ready when its source is not a pending destination
    depth: dict[int, int] = {}

    def level_of(dst: int, stack: list[int]) -> int:
        if dst in depth:
            return depth[dst]
        if dst in stack:
            cyc = [entries[d][4] for d in stack[stack.index(dst):]] + [entries[dst][4]]
            raise KinematicsError(f"mimic cycle: {' -> '.join(cyc)}")
        src = entries[dst][0]
        lv = 0 if src not in entries else level_of(src, stack + [dst]) + 1
        depth[dst] = lv
        return lv

    for dst in entries:
        level_of(dst, [])
    levels_q: list[MimicLevel] = []
    levels_v: list[MimicLevel] = []
    for lv in range(max(depth.values(), default=-1) + 1):
        ds = sorted(d for d in entries if depth[d] == lv)
        levels_q.append(MimicLevel(
            dst=np.array(ds, dtype=np.intp),
            src=np.array([entries[d][0] for d in ds], dtype=np.intp),
            mult=np.array([entries[d][2] for d in ds]),
            off=np.array([entries[d][3] for d in ds]),
        ))
        levels_v.append(MimicLevel(
            dst=np.array([dst_va[d] for d in ds], dtype=np.intp),
            src=np.array([entries[d][1] for d in ds], dtype=np.intp),
            mult=np.array([entries[d][2] for d in ds]),
            off=np.zeros(len(ds)),
        ))
    followers = {name for name, dofs in counted.items() if len(dofs) == joint_order[jidx[name]].nq}
    return levels_q, levels_v, followers, np.array(sorted(entries), dtype=np.intp)


def _tops(m: FloatArray) -> FloatArray:
    """``(g, 4, 4)`` transforms to the kernels' ``(3, 4, g, 1)`` layout (see :func:`_stack`)."""
    return np.ascontiguousarray(m[:, :3, :].transpose(1, 2, 0)[..., None])


def _compile_groups(tree: CompiledTree, joint_order: list[Joint], infos: list[_JointInfo], origins: FloatArray,
                    offsets: FloatArray) -> None:
    """Per-type constants (fixed, rotary and prismatic ones computed for the whole group at once)."""
    by_type: dict[JointType, list[int]] = {}
    for k, j in enumerate(joint_order):
        by_type.setdefault(j.type, []).append(k)

    def idx(*types: JointType) -> IntArray:
        return np.array(sorted(k for t in types for k in by_type.get(t, [])), dtype=np.intp)

    fixed = idx(JointType.FIXED)
    tree.fixed_joints = fixed
    tree.fixed_x = _tops(origins[fixed] @ offsets[fixed]) if fixed.size else np.zeros((3, 4, 0, 1))
    rot_axes: list[FloatArray] = []
    rot_pitch: list[FloatArray] = []
    for types in ((JointType.REVOLUTE, JointType.CONTINUOUS), (JointType.SCREW,)):
        ks = idx(*types)
        if not ks.size:
            continue
        a, b = origins[ks], offsets[ks]
        axes = np.array([infos[k].axis for k in ks], dtype=np.float64)
        kk = _skews(axes)
        ak = a @ kk
        m0, m1, m2 = _tops(a @ b), _tops(ak @ b), _tops(ak @ kk @ b)
        pitch = np.zeros(len(ks))
        m3 = None
        if types[0] is JointType.SCREW:
            pitch = np.array([float(joint_order[k].screw_pitch) for k in ks]) / (2.0 * math.pi)
            if not np.all(np.isfinite(pitch)):
                bad = joint_order[int(ks[np.nonzero(~np.isfinite(pitch))[0][0]])]
                raise KinematicsError(f"joint {bad.name!r}: screw pitch must be finite")
            tr = np.zeros((len(ks), 4, 4))
            tr[:, :3, 3] = axes * pitch[:, None]
            m3 = _tops(a @ tr @ b)
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
            a2 = _unit(j.axis2, (0.0, 0.0, 1.0), j, "axis2")
            k1, k2 = _skew(a1), _skew(a2)
            two[0].append(k)
            two[1].append(col)
            two[2].append([_top(a), _top(a @ k1), _top(a @ k1 @ k1)])
            two[3].append([_top(b), _top(k2 @ b), _top(k2 @ k2 @ b)])
            two_axes.append((a1, a2))
        elif t is JointType.PLANAR:
            n = np.array(infos[k].axis)
            e1, e2 = planar_basis(n)
            kk = _skew(n)
            pla[0].append(k)
            pla[1].append(col)
            pla[2].append([_top(a @ b), _top(a @ kk @ b), _top(a @ kk @ kk @ b)])
            pla[3].append(a[:3, :3] @ e1)
            pla[4].append(a[:3, :3] @ e2)
            pla_axes.append((e1, e2, n))
        else:
            g2 = quat.setdefault(t is JointType.FLOATING, ([], [], [], []))
            g2[0].append(k)
            g2[1].append(col)
            g2[2].append(_top(a))
            g2[3].append(_top(b))
    if two[0]:
        tree.two_axis = TwoAxisGroup(
            np.array(two[0], dtype=np.intp), np.array(two[1], dtype=np.intp),
            (_stack([p[0] for p in two[2]]), _stack([p[1] for p in two[2]]), _stack([p[2] for p in two[2]])),
            (_stack([r[0] for r in two[3]]), _stack([r[1] for r in two[3]]), _stack([r[2] for r in two[3]])),
        )
    if pla[0]:
        tree.planar = PlanarGroup(
            np.array(pla[0], dtype=np.intp), np.array(pla[1], dtype=np.intp),
            (_stack([m[0] for m in pla[2]]), _stack([m[1] for m in pla[2]]), _stack([m[2] for m in pla[2]])),
            _stack(pla[3]), _stack(pla[4]),
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
                                                   _stack(g2[2]), _stack(g2[3]), floating))


KIND_FIXED, KIND_ALIGNED_X, KIND_ALIGNED_Y, KIND_ALIGNED_Z, KIND_GENERAL, KIND_PRISMATIC, KIND_GENERIC = range(7)
_ROTARY = (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.SCREW)


def _compile_plan(tree: CompiledTree, joint_order: list[Joint], infos: list[_JointInfo], origins: FloatArray,
                  offsets: FloatArray) -> PosePlan:
    """The per-level constants used by the pose kernels (see :mod:`.plan`)."""
    nl, nr, nj = tree.nlinks, tree.nroot, tree.njoints
    rotary = (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.SCREW)
    rot_index: dict[int, int] = {}
    for k, j in enumerate(joint_order):
        if j.type in rotary:
            rot_index[k] = len(rot_index)
    # sin/cos sharing: a follower q = +-leader (offset 0) reuses the leader's values
    mimic = {}
    for mlv in tree.mimic_q:
        for d, sidx, m, o in zip(mlv.dst.tolist(), mlv.src.tolist(), mlv.mult.tolist(), mlv.off.tolist()):
            mimic[d] = (sidx, m, o)
    trig_cols: list[int] = []
    trig_row: dict[int, int] = {}
    trig_src: list[int] = []
    trig_sign: list[float] = []
    joint_qa = tree.joint_qa.tolist()
    for k in rot_index:
        col, sign = joint_qa[k], 1.0
        while col in mimic and mimic[col][1] in (1.0, -1.0) and mimic[col][2] == 0.0:
            sign *= mimic[col][1]
            col = mimic[col][0]
        if col not in trig_row:
            trig_row[col] = len(trig_cols)
            trig_cols.append(col)
        trig_src.append(trig_row[col])
        trig_sign.append(sign)

    # X_link = F_link @ D: what each held link's frame F still lacks (D = Q^T child_offset)
    kinds = [info.kind for info in infos]
    qmats = np.repeat(_EYE4[None], nj, axis=0)
    for k, info in enumerate(infos):
        if info.q is not None:
            qmats[k] = info.q
    aligned_kinds = (KIND_ALIGNED_X, KIND_ALIGNED_Y, KIND_ALIGNED_Z)
    is_al = np.array([kd in aligned_kinds for kd in kinds], dtype=bool)
    held = np.array([info.held for info in infos], dtype=bool)
    link_d = np.repeat(_EYE4[None], nl + 1, axis=0)
    if held.any():
        hk = np.nonzero(held)[0]
        link_d[nr + hk] = qmats[hk].transpose(0, 2, 1) @ offsets[hk]
    jpar = np.where(tree.joint_parent < 0, nl, tree.joint_parent)
    parent_held = np.zeros(nj, dtype=bool)
    if held.any():
        held_link = np.zeros(nl + 1, dtype=bool)
        held_link[nr:nl] = held
        parent_held = held_link[jpar]
    # a = D_parent @ origin (the parent is held as X D^-1); constant K = a @ Q (aligned) or a @ child_offset
    amat = origins.copy()
    if parent_held.any():
        ph = np.nonzero(parent_held)[0]
        amat[ph] = link_d[jpar[ph]] @ origins[ph]
    right = np.where(is_al[:, None, None], qmats, offsets)
    kmat = amat @ right if nj else np.zeros((0, 4, 4))
    kt = kmat.transpose(0, 2, 1)  # transposed constants (the layout of LevelPlan)
    is_generic = np.array([kd == KIND_GENERIC for kd in kinds], dtype=bool)

    spans: list[tuple[int, int, IntArray]] = []
    if tree.level0 > nr:
        spans.append((nr, tree.level0, np.full(tree.level0 - nr, nl, dtype=np.intp)))
    spans.extend(tree.levels)
    levels: list[LevelPlan] = []
    par_all = np.where(tree.link_parent < 0, nl, tree.link_parent).astype(np.intp)
    for start, stop, _ in spans:
        par = par_all[start:stop]
        lk = kinds[start - nr:stop - nr]
        parl = par.tolist()

        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for i, x in enumerate(lk):
            first.setdefault(x, i)
            last[x] = i

        def span(kd: int, start: int = start, first: dict[int, int] = first,
                 last: dict[int, int] = last) -> tuple[int, int]:
            return (start + first[kd], start + last[kd] + 1) if kd in first else (start, start)

        aligned: list[tuple[int, int, int, int, int, int]] = []
        for kd, (ca, cb) in zip(aligned_kinds, ((1, 2), (2, 0), (0, 1))):
            r0, r1 = span(kd)
            if r1 > r0:
                # rotary rows follow link order, so the group's sin/cos rows are contiguous
                aligned.append((r0, r1, ca, cb, rot_index[r0 - nr], rot_index[r1 - 1 - nr] + 1))
                for link in range(r0, r1):
                    trig_sign[rot_index[link - nr]] *= infos[link - nr].sign
        g_stack = np.array(kt[start - nr:stop - nr])
        gen_rows = is_generic[start - nr:stop - nr]
        if gen_rows.any():
            g_stack[gen_rows] = _EYE4
        ge_dp: list[FloatArray] = []
        runs: list[tuple[int, int, int, FloatArray]] = []
        gr_runs: list[tuple[int, int, int, FloatArray, IntArray, IntArray, bool]] = []
        pr_runs: list[tuple[int, int, int, FloatArray, IntArray]] = []
        link = start
        while link < stop:
            kd, p = lk[link - start], parl[link - start]
            end = link
            while end < stop and lk[end - start] == kd and parl[end - start] == p:
                end += 1
            ks = range(link - nr, end - nr)
            cols = tree.joint_qa[link - nr:end - nr]
            if kd != KIND_GENERIC:
                runs.append((link, end, p, g_stack[link - start:end - start].reshape(-1, 4)))  # contiguous
            else:
                ge_dp.extend(link_d[p] for _ in ks)
            if kd == KIND_GENERAL:
                extra = []
                screw = False
                for k in ks:
                    j, a, b = joint_order[k], amat[k], offsets[k]
                    ax = np.array(infos[k].axis)
                    kk = _skew(ax)
                    e = np.zeros((9, 4))
                    e[0:4] = transposed(a @ kk @ b)
                    e[4:8] = transposed(a @ kk @ kk @ b)
                    if j.type is JointType.SCREW:
                        pitch = float(j.screw_pitch) / (2.0 * math.pi)
                        e[8, :3] = a[:3, :3] @ ax * pitch
                        screw = screw or pitch != 0.0
                    extra.append(e)
                gr_runs.append((link, end, p, np.ascontiguousarray(np.concatenate(extra)),
                                np.array([rot_index[k] for k in ks], dtype=np.intp), cols, screw))
            elif kd == KIND_PRISMATIC:
                e1 = np.zeros((end - link + 1, 4))  # a zero last row keeps the product a gemm (see fk_numpy._poses_t)
                for i, k in enumerate(ks):
                    e1[i, :3] = amat[k][:3, :3] @ np.array(infos[k].axis)
                pr_runs.append((link, end, p, e1, cols))
            link = end
        ge0, ge1 = span(KIND_GENERIC)
        ge_const = None
        if ge_dp and not all(np.array_equal(x, _EYE4) for x in ge_dp):
            ge_const = np.ascontiguousarray(np.stack([x[:3, :] for x in ge_dp], axis=-1)[..., None])
        levels.append(LevelPlan(
            start=start, stop=stop, par=par, runs=runs, aligned=aligned, general=gr_runs, prismatic=pr_runs,
            generic=(ge0, ge1), g_stack=g_stack, ge_dp=ge_const,
        ))
    for lv in levels:
        lv.rest = bool(lv.general or lv.prismatic or lv.generic[1] > lv.generic[0])
    sign_arr = np.array(trig_sign)
    src_arr = np.array(trig_src, dtype=np.intp)
    identity_src = trig_src == list(range(len(trig_src)))
    corr_ranges: list[tuple[int, int, FloatArray]] = []
    if held.any():
        hl = (nr + np.nonzero(held)[0]).tolist()
        r0 = hl[0]
        for i, nxt in zip(hl, hl[1:] + [-1]):
            if nxt != i + 1:
                corr_ranges.append((r0, i + 1, np.ascontiguousarray(link_d[r0:i + 1].transpose(0, 2, 1))))
                r0 = nxt
    return PosePlan(
        nlinks=nl,
        nroot=nr,
        root_t=np.ascontiguousarray(tree.root_poses.transpose(0, 2, 1)[:, :, :3, None]),
        levels=levels,
        trig_cols=np.array(trig_cols, dtype=np.intp),
        trig_src=None if identity_src else src_arr,
        trig_sign=None if all(x == 1.0 for x in trig_sign) else sign_arr.reshape(-1, 1),
        has_generic=any(lv.generic[1] > lv.generic[0] for lv in levels),
        corr_ranges=corr_ranges,
        has_general=any(lv.general for lv in levels),
    )
