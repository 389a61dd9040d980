"""The /tf of a short name list in plain float arithmetic: the state_publisher's per-message kinematics without a
numpy call.

In the node process a JointState arrives every millisecond or ten, between DDS wake-ups, and each numpy call
then costs several microseconds of dispatch on cold caches: the same :class:`~robot_state_format.ros.
publisher_pose.TfWriter` that takes 11 us in a warm loop took about 60 us per message there, the merge about
45 us (docs/performance.md, "against robot_state_publisher"). For a list of at most :data:`SCALAR_MAX`
moving rows, :class:`ScalarTfWriter` computes the same numbers one float at a time and stores them through a
memoryview of the prepared buffer; above that, numpy's batches win and the :class:`TfWriter` stays.

The numbers are the :class:`TfWriter`'s bit for bit: the half-angle ``q * m/2 + o/2``, its cosine and sine
(libm's, as numpy's complex exponential takes them), ``cos(h) Q + sin(h) P`` as two products and one sum,
KDL's quaternion signs by the same rule on the same rows, a prismatic joint's ``d x + t0``
(test_state_publisher_scalar.py compares the bytes of both writers and of the general path).
"""

from __future__ import annotations

import math
import struct
import sys
from collections.abc import Sequence

from robot_state_format.ros.messages import _W_KDL
from robot_state_format.ros.publisher_pose import TfWriter, kdl_flips

SCALAR_MAX = 64  # moving rows (revolute and prismatic) of a list taken one float at a time
_HEAD = struct.Struct("<iI")
_QUAT = struct.Struct("<4d")  # a rotation's x y z w (consecutive in the message)
_VEC = struct.Struct("<3d")  # a translation's x y z

Vec3 = tuple[float, float, float]


def _at(doubles: list[int]) -> int:
    """The byte offset in the message buffer of consecutive doubles whose first is word ``doubles[0]``."""
    return 4 + 8 * doubles[0]


class ScalarTfWriter:
    """:class:`TfWriter`'s message, one float at a time (see the module text). ``write`` takes the joint
    positions as a memoryview (the cache's ``views.q``)."""

    def __init__(self, writer: TfWriter) -> None:
        tf = writer.tf
        self.buffer = tf.buffer
        words = (len(tf.buffer) - 4) // 8  # the message from byte 4 is whole 8-byte words (PreparedTf)
        self._u = memoryview(tf.buffer)[4:4 + 8 * words].cast("Q")
        self._stamp_words = [int(i) for i in tf.stamp_words]
        # per revolute row, flat: q index, m/2, o/2, Q (x y z w), P (x y z w), the byte offset of its x y z w
        # (one pack_into, not four stores through the memoryview: fewer calls per message)
        self._rev: list[tuple[int, float, float, float, float, float, float, float, float, float, float,
                              int]] = []
        if writer._nrev:
            for k in range(writer._nrev):
                a, b, dst = writer._q0[k].tolist(), writer._p[k].tolist(), writer._qdst[k].tolist()
                self._rev.append((int(writer._qi[k]), float(writer._ihm[k].imag), float(writer._iho[k].imag),
                                  a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], _at(dst)))
            self._folded = bool(writer._folded)
            if self._folded:
                self._open = [int(i) for i in writer._open]
                idx, lo, hi = writer._guard
                self._guard = list(zip(idx.tolist(), lo.tolist(), hi.tolist(), strict=True))
                self._by_caller = writer._by_caller
        self._ties = writer.ties  # revolute rows whose sign KDL's arithmetic decides on a near tie
        self._tie_at: dict[int, int] = {k: i for i, k in enumerate(writer.ties.k)} if writer.ties is not None else {}
        self._pri: list[tuple[int, float, float, Vec3, Vec3, int]] = []
        if writer._npri:
            src, mult, off, d, t0 = writer._pq
            for k in range(writer._npri):
                dk, tk, dst = d[k].tolist(), t0[k].tolist(), writer._tdst[k].tolist()
                self._pri.append((int(src[k]), float(mult[k]), float(off[k]), (dk[0], dk[1], dk[2]),
                                  (tk[0], tk[1], tk[2]), _at(dst)))

    @staticmethod
    def fits(writer: TfWriter) -> bool:
        """Whether ``writer``'s rows are few enough for this class (and the machine stores doubles little end
        first, as the message does)."""
        rows = writer._qdst.tolist() if writer._nrev else []
        if writer._npri:
            rows += writer._tdst.tolist()
        consecutive = all(row == list(range(row[0], row[0] + len(row))) for row in rows)  # as the message has them
        return writer._nrev + writer._npri <= SCALAR_MAX and sys.byteorder == "little" and consecutive

    def _in_range(self, q: Sequence[float]) -> bool:
        for i, lo, hi in self._guard:
            v = q[i]
            if v < lo or v > hi:
                return False
        return True

    def write(self, q: Sequence[float], stamp_ns: int, in_limits: bool) -> bytearray:
        """The message at positions ``q`` and ``stamp_ns`` (the buffer itself, rewritten by the next call);
        ``in_limits`` as for :meth:`TfWriter.write`."""
        sec, nsec = divmod(stamp_ns, 1_000_000_000)
        _HEAD.pack_into(self.buffer, 8, sec, nsec)
        if self._stamp_words:
            u = self._u
            word = (nsec << 32) | (sec & 0xFFFFFFFF)
            for i in self._stamp_words:
                u[i] = word
        buf = self.buffer
        if self._rev:
            cos, sin, pack = math.cos, math.sin, _QUAT.pack_into
            low = False
            for qi, hm, ho, a0, a1, a2, a3, b0, b1, b2, b3, at in self._rev:
                h = q[qi] * hm + ho
                c, s = cos(h), sin(h)
                w = a3 * c + b3 * s
                pack(buf, at, a0 * c + b0 * s, a1 * c + b1 * s, a2 * c + b2 * s, w)
                if w <= _W_KDL:
                    low = True
            if low:  # as TfWriter: the folded rows keep their signs while their joints are within range
                if self._folded and ((in_limits and self._by_caller) or self._in_range(q)):
                    rows: Sequence[int] = self._open
                else:
                    rows = range(len(self._rev))
                ties, tie_at = self._ties, self._tie_at
                for k in rows:
                    at = self._rev[k][11]
                    x, y, z, w = _QUAT.unpack_from(buf, at)
                    if w <= _W_KDL:  # w above: it leads and is positive
                        flip = kdl_flips(x, y, z, w)
                        ti = tie_at.get(k) if tie_at else None
                        if ti is not None and ties is not None:  # as TfWriter: on a near tie, KDL's own sign
                            f = -1.0 if flip else 1.0
                            if ties.fix_one(ti, f * x, f * y, f * z, f * w, q):
                                flip = not flip
                        if flip:
                            _QUAT.pack_into(buf, at, -x, -y, -z, -w)
        for si, m, o, d, t0, at in self._pri:
            x = q[si] * m + o
            _VEC.pack_into(buf, at, d[0] * x + t0[0], d[1] * x + t0[1], d[2] * x + t0[2])
        return buf


__all__ = ["SCALAR_MAX", "ScalarTfWriter"]
