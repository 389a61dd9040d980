"""TF's numbers of every tree joint in a handful of numpy calls: the state_publisher's per-message kinematics.

:func:`robot_state_format.kinematics.joint_quaternions.joint_pose7` gives ``x y z qx qy qz qw`` per tree
joint; a revolute joint's quaternion is ``sin(q/2) P + cos(q/2) Q`` with two constant quaternions. Here the
half-angles are gathered straight from ``q`` (``q[src] * mult/2 + offset/2``: mimic followers included, every
operation exact but the product and the sum, as in ``joint_pose7``), their cosine and sine taken as one
complex exponential, and ``cos(h) Q + sin(h) P`` formed with real products and one real sum, written into
one buffer kept between calls. Real operations only after the exponential: the same numbers, bit for bit,
as the plain float arithmetic of :mod:`~robot_state_format.ros.publisher_scalar` (a complex product may be
fused differently). Used when every rotary joint keeps its child on its axis (every URDF); otherwise, and
for the joint types converted from matrices (planar, ball, floating, two-axis), ``joint_pose7`` itself.

Quaternion signs are robot_state_publisher's (:func:`~robot_state_format.ros.messages.kdl_quaternion_signs`).
"""

from __future__ import annotations

import math
import struct

import numpy as np
from numpy.typing import NDArray

from robot_state_format.kinematics import fk
from robot_state_format.kinematics import joint_quaternions as jq
from robot_state_format.kinematics.compiled_tree import CompiledTree
from robot_state_format.ros.kdl_ties import KdlRows, near_tie, near_ties, tie_prone
from robot_state_format.ros.messages import _W_KDL, PreparedTf, kdl_quaternion_signs

FloatArray = NDArray[np.float64]


_W2_KDL = 0.25 + 2.5e-13  # KDL's trace > 1e-12 for a unit quaternion: 4 w^2 - 1 > 1e-12


def _signs(quats: FloatArray) -> FloatArray:
    """C-contiguous rows ``x y z w`` of any sign -> KDL's signs (:func:`kdl_quaternion_signs`), in place, in
    one pass over all rows: ``w`` positive when ``w^2`` exceeds a quarter, else the component of the largest
    diagonal element (the largest of ``x^2, y^2, z^2``: ``m00 - m11 = 2 (x^2 - y^2)``, ...). Exact ties go as
    in KDL's comparisons (z before y before x); which of two equal elements KDL's own matrix makes larger
    depends on its rounding (a joint turned a quarter about x and rotating about z: y^2 = z^2 always), which
    :class:`Ties` redoes for a URDF's rows (:mod:`~robot_state_format.ros.kdl_ties`)."""
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


def kdl_flips(x: float, y: float, z: float, w: float) -> bool:
    """Whether KDL's sign rule negates the quaternion ``x y z w`` (one row of :func:`_signs`): ``w`` leads when
    ``w^2`` exceeds :data:`_W2_KDL`, else the first largest square of z, y, x; negated when the lead is negative."""
    if w * w > _W2_KDL:
        lead = w
    else:
        lead, best = z, z * z
        if y * y > best:
            lead, best = y, y * y
        if x * x > best:
            lead = x
    return math.copysign(1.0, lead) < 0


def _signs_few(quats: FloatArray, rows: NDArray[np.intp]) -> None:
    """:func:`_signs` on a few ``rows`` of ``quats`` (any strides), in place, decided per row in Python: for a
    handful of rows cheaper than the batched rule's dozen numpy calls. The same decisions: ``w`` leads when
    ``w^2`` exceeds :data:`_W2_KDL`, else the first largest square of z, y, x; its ``copysign`` is the factor."""
    sub = quats[rows]
    flip = [i for i, (x, y, z, w) in enumerate(sub.tolist()) if kdl_flips(x, y, z, w)]
    if flip:
        sub[flip] *= -1.0
        quats[rows] = sub


_MARGIN = 0.02  # how far from a sign decision every sample of a joint's range must stay to fold its sign
_STEP = 8e-3  # the largest step between two samples of a half-angle range (ranges over 8 are never folded)


def _constant_signs(z: NDArray[np.complex128], lo: FloatArray, hi: FloatArray) -> FloatArray:
    """Per row, the sign KDL's rule gives ``Re(z e^{ih})`` at every half-angle ``h`` in ``[lo, hi]`` when it is
    the same over the whole range and every sample stays ``_MARGIN`` away from each decision (``w^2`` against
    a quarter, the largest square against the next); 0 where it is not (or the range is open or over 8)."""
    out = np.zeros(len(z))
    ok = np.flatnonzero(np.isfinite(lo) & np.isfinite(hi) & (hi - lo <= 8.0))
    if not len(ok):
        return out
    # steps <= 8e-3: a unit sinusoid moves less than that between samples, its square less than twice that;
    # as many samples as the widest range needs (at most 1001), not 1001 always: 4-8 times less work at start-up
    samples = max(2, math.ceil(float((hi - lo)[ok].max()) / _STEP) + 1)
    h = lo[ok, None] + (hi - lo)[ok, None] * np.linspace(0.0, 1.0, samples)[None, :]
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


class Ties:
    """The revolute rows of a :class:`Pose7` (or a writer's subset of them) that KDL's arithmetic can decide:
    position ``k`` in the rows' quaternion array, tree row, and the angle KDL gets, ``q[qi] * mult + off``
    (robot_state_publisher's mimic formula; 1 and 0 for a joint of its own)."""

    def __init__(self, kdl: KdlRows, k: list[int], rows: list[int], qi: list[int], mult: list[float],
                 off: list[float]) -> None:
        self.kdl = kdl
        self.k = k
        self.rows = rows
        self.qi = qi
        self.mult = mult
        self.off = off
        self._k = np.array(k, dtype=np.intp)

    @classmethod
    def of(cls, kdl: KdlRows, rows: list[int], qi: NDArray[np.intp], mult: FloatArray, off: FloatArray) -> Ties | None:
        """The rows of ``rows`` (tree rows, in the quaternion array's order) that are KDL's rotary rows."""
        ks = [k for k, row in enumerate(rows) if row in kdl.rotary]
        if not ks:
            return None
        return cls(kdl, ks, [rows[k] for k in ks], [int(qi[k]) for k in ks], [float(mult[k]) for k in ks],
                   [float(off[k]) for k in ks])

    def subset(self, ks: list[int]) -> Ties | None:
        """The ties among Pose7 rows ``ks`` (a writer's rows, in its order), positions renumbered."""
        at = {k: i for i, k in enumerate(self.k)}
        mine = [(j, at[k]) for j, k in enumerate(ks) if k in at]
        if not mine:
            return None
        return Ties(self.kdl, [j for j, _ in mine], [self.rows[i] for _, i in mine], [self.qi[i] for _, i in mine],
                    [self.mult[i] for _, i in mine], [self.off[i] for _, i in mine])

    def fix(self, quat: FloatArray, q: FloatArray) -> None:
        """KDL's sign on the rows of ``quat`` (signed by the rule) whose decision was a near tie, in place."""
        sub = quat[self._k]
        for i in near_ties(sub).tolist():
            angle = float(q[self.qi[i]]) * self.mult[i] + self.off[i]
            if self.kdl.sign(self.rows[i], angle, sub[i].tolist()) < 0:
                quat[self.k[i]] *= -1.0

    def fix_one(self, i: int, x: float, y: float, z: float, w: float, q: object) -> bool:
        """Whether tie ``i`` (quaternion ``x y z w``, signed by the rule) flips to KDL's sign (plain floats)."""
        if not near_tie(x, y, z, w):
            return False
        angle = float(q[self.qi[i]]) * self.mult[i] + self.off[i]  # type: ignore[index]
        return self.kdl.sign(self.rows[i], angle, (x, y, z, w)) < 0


class Pose7:
    """``pose7(q)`` -> ``(njoints, 7)`` for one compiled tree; the array returned is rewritten by the next call.

    ``limits[k]``: ``(lower, upper)`` of q coordinate ``k`` when it has both (its joint's limits): over those
    ranges the KDL sign of most rows is constant, folded into the constants; the others (and every row while
    a coordinate is outside its range, as a JointState may put it) get the rule per message.

    ``kdl``: KDL's own arithmetic for a URDF's rows (:class:`~robot_state_format.ros.kdl_ties.KdlRows`): the
    constant rows' signs, and a revolute row's where the rule decided on a near tie."""

    def __init__(self, tree: CompiledTree, limits: dict[int, tuple[float, float]] | None = None,
                 kdl: KdlRows | None = None) -> None:
        self.tree = tree
        c = jq._constants(tree)
        tc = fk._tf_constants(tree)
        self.fast = not c.gen.size and all(moving is None for _, _, moving, _, _ in c.rot)
        self._out = c.template.copy()
        kdl_quaternion_signs(self._out[:, 3:])  # fixed and prismatic rows: constant quaternions
        self.kdl = kdl if kdl else None
        self._constant_rows = sorted(kdl.constant) if kdl else []
        self._fix_constant(self._out)
        self.ties: Ties | None = None
        if not self.fast:
            return
        joints = [j for j, *_ in c.rot]
        self._rows = np.concatenate(joints) if joints else np.zeros(0, dtype=np.intp)
        cols = np.concatenate([col for _, col, *_ in c.rot]) if joints else np.zeros(0, dtype=np.intp)
        p = np.concatenate([pp for *_, pp, _ in c.rot]) if joints else np.zeros((0, 4))
        q0 = np.concatenate([qq for *_, qq in c.rot]) if joints else np.zeros((0, 4))
        self._z = q0 - 1j * p  # Re(z e^{i h}) = q0 cos h + p sin h (the sign folding below works on z)
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
                # sorted unique coordinates (np.unique would import numpy.ma: ~60 ms of the node's start)
                qidx = np.array(sorted(set(self._qi[known].tolist())), dtype=np.intp)
                self._guard = (qidx, np.array([limits[int(i)][0] for i in qidx]),
                               np.array([limits[int(i)][1] for i in qidx]))
        if self.kdl is not None and self.kdl.rotary and tc.affine is not None:
            prone = tie_prone(self._z).tolist()
            rows = [row if prone[k] else -1 for k, row in enumerate(self._rows.tolist())]  # -1: never a tie
            self.ties = Ties.of(self.kdl, rows, self._qi, 2.0 * self._hm, 2.0 * self._ho)
        self._q0 = np.ascontiguousarray(self._z.real)  # Q and P, signs folded
        self._p = np.ascontiguousarray(-self._z.imag)
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

    def _fix_constant(self, rows7: FloatArray) -> None:
        """KDL's signs on the constant rows of ``rows7`` (every tree row, ``x y z qx qy qz qw``)."""
        if self.kdl is not None and self._constant_rows:
            sub = rows7[self._constant_rows, 3:]
            self.kdl.fix_constant(self._constant_rows, sub)
            rows7[self._constant_rows, 3:] = sub

    def __call__(self, q: FloatArray) -> FloatArray:
        if not self.fast:
            rows = jq.joint_pose7(self.tree, q)
            kdl_quaternion_signs(rows[:, 3:])
            self._fix_constant(rows)
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
            e = np.exp(h * 1j)[:, None]  # cos h + i sin h
            quat = self._q0 * e.real
            quat += self._p * e.imag
            if self._folded and self._in_range(q):
                if len(self._open):
                    quat = np.ascontiguousarray(quat)
                    quat[self._open] = self._rule(quat[self._open])
            elif float(quat[:, 3].min()) <= _W_KDL:  # some w negative or past 120 degrees
                quat = self._rule(np.ascontiguousarray(quat))
            if self.ties is not None and float(quat[:, 3].min()) <= _W_KDL:
                self.ties.fix(quat, q)
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

    def writer(self, tf: PreparedTf, send: NDArray[np.intp],
               checked: dict[int, tuple[float, float]]) -> TfWriter | None:
        """A :class:`TfWriter` for the tree joints ``send`` (the slots of ``tf``, in order), or None when these
        rows need more than this class's batched formulas (see there). ``checked``: the q coordinates whose
        limits the caller tests on every message, with those limits."""
        if not self.fast or self._affine is None:
            return None
        rev = {int(j): k for k, j in enumerate(self._rows.tolist())}
        pri: dict[int, int] = {}
        if self._pri is not None:
            pri = {int(j): k for k, j in enumerate(self._pri[0].tolist())}
        slots = send.tolist()
        if any(j not in rev and j not in pri for j in slots):
            return None
        return TfWriter(self, tf, [(s, rev[j]) for s, j in enumerate(slots) if j in rev],
                        [(s, pri[j]) for s, j in enumerate(slots) if j in pri], checked)


class TfWriter:
    """The /tf of one fixed list of tree joints written straight into its :class:`PreparedTf` buffer.

    Only the numbers a joint's motion changes are computed, for the listed joints only: a revolute joint's
    quaternion (:class:`Pose7`'s complex product, on the rows of these joints) and a prismatic joint's
    translation; the constant numbers (a revolute joint's translation, a prismatic joint's rotation) are
    written once, with the frame ids. Each kind lands in the buffer in one fancy assignment through a float64
    view with precomputed offsets. The numbers are those of :class:`Pose7`, operation for operation.
    """

    def __init__(self, pose7: Pose7, tf: PreparedTf, rev: list[tuple[int, int]], pri: list[tuple[int, int]],
                 checked: dict[int, tuple[float, float]]) -> None:
        self.tf = tf
        self.ties: Ties | None = None  # the rows KDL's arithmetic may decide (Pose7.ties)
        self._f = np.frombuffer(tf.buffer, dtype="<f8", offset=4)
        dbl = tf.dbl_words.reshape(-1, 7)
        ks = np.array([k for _, k in rev], dtype=np.intp)
        self._nrev = len(ks)
        if self._nrev:
            self._qdst = dbl[[s for s, _ in rev], 3:]
            self._q0, self._p = pose7._q0[ks], pose7._p[ks]
            self._quat = np.empty((len(ks), 4))
            self._sp = np.empty((len(ks), 4))  # sin h P
            self._w = self._quat[:, 3]
            self._qi = pose7._qi[ks]
            # i h = q[qi] * (i hm) + i ho: the half-angle built straight as a pure imaginary number (its
            # imaginary part is Pose7's real one, operation for operation), exponentiated in place
            self._ihm, self._iho = pose7._hm[ks] * 1j, pose7._ho[ks] * 1j
            self._h = np.empty(len(ks))
            self._ih = np.empty(len(ks), dtype=np.complex128)
            self._cos, self._sin = self._ih[:, None].real, self._ih[:, None].imag  # views: exp(ih) in place
            self.ties = pose7.ties.subset(ks.tolist()) if pose7.ties is not None else None
            self._folded = pose7._folded
            if pose7._folded:
                open_rows = set(pose7._open.tolist())
                self._open = np.array([i for i, k in enumerate(ks.tolist()) if k in open_rows], dtype=np.intp)
                known = np.array([k not in open_rows for k in ks.tolist()], dtype=bool)
                qidx, lo, hi = pose7._guard
                mine = np.isin(qidx, self._qi[known])
                self._guard = (qidx[mine], lo[mine], hi[mine])
                # every guarded coordinate's limits tested by the caller (the same bounds): its answer suffices
                self._by_caller = all(checked.get(int(i)) == (float(a), float(b))
                                      for i, a, b in zip(*self._guard, strict=True))
        self._npri = len(pri)
        if self._npri:
            assert pose7._pri is not None
            _, _, d, t0 = pose7._pri
            src, mult, off = pose7._pri_q
            ks2 = np.array([k for _, k in pri], dtype=np.intp)
            self._tdst = dbl[[s for s, _ in pri], :3]
            self._pq = (src[ks2], mult[ks2], off[ks2], d[ks2], t0[ks2])

    def write(self, q: FloatArray, stamp_ns: int, in_limits: bool) -> bytearray:
        """The message at joint positions ``q`` and ``stamp_ns`` (the buffer itself, rewritten by the next call).
        ``in_limits``: the caller found every coordinate it checks within its limits."""
        tf = self.tf
        sec, nsec = divmod(stamp_ns, 1_000_000_000)
        struct.pack_into("<iI", tf.buffer, 8, sec, nsec)
        if len(tf.stamp_words):
            tf.words[tf.stamp_words] = (nsec << 32) | (sec & 0xFFFFFFFF)
        if self._nrev:
            ih = self._ih
            np.multiply(q.take(self._qi, out=self._h), self._ihm, out=ih)
            ih += self._iho
            np.exp(ih, out=ih)  # cos h + i sin h
            quat = self._quat
            np.multiply(self._q0, self._cos, out=quat)
            np.multiply(self._p, self._sin, out=self._sp)
            quat += self._sp
            if np.minimum.reduce(self._w) <= _W_KDL:  # else every w leads and is positive: KDL's signs already
                if self._folded and ((in_limits and self._by_caller) or self._in_range(q)):
                    if len(self._open):
                        _signs_few(quat, self._open)
                else:
                    quat = _signs(np.ascontiguousarray(quat))
                if self.ties is not None:
                    self.ties.fix(quat, q)
            self._f[self._qdst] = quat
        if self._npri:
            src, mult, off, d, t0 = self._pq
            x: FloatArray = q[src] * mult + off
            self._f[self._tdst] = d * x[:, None] + t0
        return tf.buffer

    def _in_range(self, q: FloatArray) -> bool:
        idx, lo, hi = self._guard
        v = q[idx]
        return not ((v < lo).any() or (v > hi).any())


__all__ = ["Pose7", "TfWriter", "Ties", "kdl_flips"]
