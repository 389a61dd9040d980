"""The compiled kinematic tree: :class:`CompiledTree` (the array form of a Model's tree joints, see
:mod:`robot_state_format.kinematics.tree` for its layouts and :func:`~robot_state_format.kinematics.tree.compile_model`
for how it is built), its per-joint-type constant groups, and joint-name / mapping resolution.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from robot_state_format.errors import KinematicsError
from robot_state_format.kinematics.plan import PosePlan
from robot_state_format.model.types import SCOPE, JointType

__all__ = [
    "QUATERNION_TOLERANCE", "ROOT", "CompiledTree", "KinematicsWarning", "MimicLevel", "PlanarGroup",
    "PrismaticGroup", "QuaternionGroup", "RotaryGroup", "TwistConstants", "TwoAxisGroup",
]

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
