"""TF's numbers of every tree joint in a handful of numpy calls: the state_publisher's per-message kinematics.

:func:`robot_state_format.kinematics.joint_quaternions.joint_pose7` gives ``x y z qx qy qz qw`` per tree
joint; a revolute joint's quaternion is ``sin(q/2) P + cos(q/2) Q`` with two constant quaternions. Here the
same numbers come from one complex product: ``Re((Q - iP) e^{i q/2}) = cos(q/2) Q + sin(q/2) P``, with the
half-angles gathered straight from ``q`` (``q[src] * mult/2 + offset/2``: mimic followers included, every
operation exact but the product and the sum, as in ``joint_pose7``), written into one buffer kept between
calls. Used when every rotary joint keeps its child on its axis (every URDF); otherwise, and for the joint
types converted from matrices (planar, ball, floating, two-axis), ``joint_pose7`` itself.

Quaternion signs are robot_state_publisher's (:func:`~robot_state_format.ros.messages.kdl_quaternion_signs`).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from robot_state_format.kinematics import fk
from robot_state_format.kinematics import joint_quaternions as jq
from robot_state_format.kinematics.compiled_tree import CompiledTree
from robot_state_format.ros.messages import _W_KDL, kdl_quaternion_signs

FloatArray = NDArray[np.float64]


_W2_KDL = 0.25 + 2.5e-13  # KDL's trace > 1e-12 for a unit quaternion: 4 w^2 - 1 > 1e-12


def _signs(quats: FloatArray) -> FloatArray:
    """C-contiguous rows ``x y z w`` of any sign -> KDL's signs (:func:`kdl_quaternion_signs`), in place, in
    one pass over all rows: ``w`` positive when ``w^2`` exceeds a quarter, else the component of the largest
    diagonal element (the largest of ``x^2, y^2, z^2``: ``m00 - m11 = 2 (x^2 - y^2)``, ...). Exact ties go as
    in KDL's comparisons (z before y before x); which of two equal elements KDL's own matrix makes larger
    depends on its rounding (a joint turned a quarter about x and rotating about z: y^2 = z^2 always)."""
    rev = quats[:, ::-1]
    sq = rev * rev  # columns w z y x: argmax takes the first of equal squares, z before y before x, as KDL
    w2 = sq[:, 0]
    np.greater(w2, _W2_KDL, out=w2)  # 1.0 where KDL takes w (larger than any x^2, y^2, z^2 <= 0.75): w leads
    w2 *= 2.0
    lead = sq.argmax(axis=1)
    n = len(lead)
    np.subtract(_BASE4[:n] if n <= len(_BASE4) else np.arange(3, 4 * n, 4), lead, out=lead)  # row * 4 + (3 - column)
    quats *= np.copysign(1.0, quats.take(lead))[:, None]
    return quats


_BASE4 = np.arange(0, 4 * 4096, 4) + 3  # row * 4 + 3 (the w column of row)


_MARGIN = 0.02  # how far from a sign decision every sample of a joint's range must stay to fold its sign
_SAMPLES = 1001


def _constant_signs(z: NDArray[np.complex128], lo: FloatArray, hi: FloatArray) -> FloatArray:
    """Per row, the sign KDL's rule gives ``Re(z e^{ih})`` at every half-angle ``h`` in ``[lo, hi]`` when it is
    the same over the whole range and every sample stays ``_MARGIN`` away from each decision (``w^2`` against
    a quarter, the largest square against the next); 0 where it is not (or the range is open or over 8)."""
    out = np.zeros(len(z))
    ok = np.flatnonzero(np.isfinite(lo) & np.isfinite(hi) & (hi - lo <= 8.0))
    if not len(ok):
        return out
    # steps <= 8e-3: a unit sinusoid moves less than that between samples, its square less than twice that
    h = lo[ok, None] + (hi - lo)[ok, None] * np.linspace(0.0, 1.0, _SAMPLES)[None, :]
    quat = np.ascontiguousarray((z[ok, None, :] * np.exp(1j * h)[:, :, None]).real)  # (rows, samples, 4)
    sq = quat * quat
    xyz = np.sort(sq[..., :3], axis=-1)
    w2 = sq[..., 3]
    near = (np.abs(w2 - _W2_KDL) < _MARGIN) | ((w2 < _W2_KDL) & (xyz[..., 2] - xyz[..., 1] < _MARGIN))
    flat = quat.reshape(-1, 4)
    sign = np.copysign(1.0, (_signs(flat.copy()) * flat).sum(axis=1)).reshape(len(ok), -1)  # the rule's factor
    same = (sign == sign[:, :1]).all(axis=1) & ~near.any(axis=1)
    out[ok[same]] = sign[same, 0]
    return out


class Pose7:
    """``pose7(q)`` -> ``(njoints, 7)`` for one compiled tree; the array returned is rewritten by the next call.

    ``limits[k]``: ``(lower, upper)`` of q coordinate ``k`` when it has both (its joint's limits): over those
    ranges the KDL sign of most rows is constant, folded into the constants; the others (and every row while
    a coordinate is outside its range, as a JointState may put it) get the rule per message."""

    def __init__(self, tree: CompiledTree, limits: dict[int, tuple[float, float]] | None = None) -> None:
        self.tree = tree
        c = jq._constants(tree)
        tc = fk._tf_constants(tree)
        self.fast = not c.gen.size and all(moving is None for _, _, moving, _, _ in c.rot)
        self._out = c.template.copy()
        kdl_quaternion_signs(self._out[:, 3:])  # fixed and prismatic rows: constant quaternions
        if not self.fast:
            return
        joints = [j for j, *_ in c.rot]
        self._rows = np.concatenate(joints) if joints else np.zeros(0, dtype=np.intp)
        cols = np.concatenate([col for _, col, *_ in c.rot]) if joints else np.zeros(0, dtype=np.intp)
        p = np.concatenate([pp for *_, pp, _ in c.rot]) if joints else np.zeros((0, 4))
        q0 = np.concatenate([qq for *_, qq in c.rot]) if joints else np.zeros((0, 4))
        self._z = q0 - 1j * p  # Re(z e^{i h}) = q0 cos h + p sin h
        self._cz = np.empty_like(self._z)
        self._affine = tc.affine
        if tc.affine is not None:
            src, mult, off = tc.affine
            self._qi = src[cols]
            self._hm, self._ho = 0.5 * mult[cols], 0.5 * off[cols]  # halving is exact: q/2 * m + o/2
        self._cols = cols
        self._half = np.empty(len(cols))
        self._folded = False
        if tc.affine is not None and limits:
            src, mult, off = tc.affine
            qlo = np.array([limits.get(int(i), (-math.inf, math.inf))[0] for i in self._qi])
            qhi = np.array([limits.get(int(i), (-math.inf, math.inf))[1] for i in self._qi])
            with np.errstate(invalid="ignore"):
                a, b = qlo * self._hm + self._ho, qhi * self._hm + self._ho
            hlo, hhi = np.fmin(a, b), np.fmax(a, b)
            sign = _constant_signs(self._z, hlo, hhi)
            known = sign != 0
            if known.any():
                self._z[known] *= sign[known, None]
                self._folded = True
                self._open = np.flatnonzero(~known)  # rows that still need the rule per message
                qidx = np.unique(self._qi[known])
                self._guard = (qidx, np.array([limits[int(i)][0] for i in qidx]),
                               np.array([limits[int(i)][1] for i in qidx]))
        self._pri = c.pri
        if c.pri is not None and tc.affine is not None:
            pcol = c.pri[1]
            src, mult, off = tc.affine
            self._pri_q = (src[pcol], mult[pcol], off[pcol])

    def _in_range(self, q: FloatArray) -> bool:
        idx, lo, hi = self._guard
        v = q[idx]
        return not ((v < lo).any() or (v > hi).any())

    @staticmethod
    def _rule(quat: FloatArray) -> FloatArray:
        return _signs(quat)

    def __call__(self, q: FloatArray) -> FloatArray:
        if not self.fast:
            rows = jq.joint_pose7(self.tree, q)
            kdl_quaternion_signs(rows[:, 3:])
            return rows
        out = self._out
        h = self._half
        if self._affine is not None:
            np.take(q, self._qi, out=h)
            h *= self._hm
            h += self._ho
            qa: FloatArray | None = None
        else:
            qa = self.tree.expand_q(q)
            np.multiply(qa[self._cols], 0.5, out=h)
        if len(h):
            np.multiply(self._z, np.exp(h * 1j)[:, None], out=self._cz)
            quat = self._cz.real
            if self._folded and self._in_range(q):
                if len(self._open):
                    quat = np.ascontiguousarray(quat)
                    quat[self._open] = self._rule(quat[self._open])
            elif float(quat[:, 3].min()) <= _W_KDL:  # some w negative or past 120 degrees
                quat = self._rule(np.ascontiguousarray(quat))
            out[self._rows, 3:] = quat
        if self._pri is not None:
            pj, pcol, d, t0 = self._pri
            if qa is None:
                src, mult, off = self._pri_q
                x: FloatArray = q[src] * mult + off
            else:
                x = qa[pcol]
            out[pj, :3] = d * x[:, None] + t0
        return out


__all__ = ["Pose7"]
