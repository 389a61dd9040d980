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

Vec3 = tuple[float, float, float]


class ScalarTfWriter:
    """:class:`TfWriter`'s message, one float at a time (see the module text). ``write`` takes the joint
    positions as a memoryview (the cache's ``views.q``)."""

    def __init__(self, writer: TfWriter) -> None:
        tf = writer.tf
        self.buffer = tf.buffer
        words = (len(tf.buffer) - 4) // 8  # the message from byte 4 is whole 8-byte words (PreparedTf)
        self._f = memoryview(tf.buffer)[4:4 + 8 * words].cast("d")
        self._u = memoryview(tf.buffer)[4:4 + 8 * words].cast("Q")
        self._stamp_words = [int(i) for i in tf.stamp_words]
        # per revolute row, flat: q index, m/2, o/2, Q (x y z w), P (x y z w), the 4 doubles it is written to
        self._rev: list[tuple[int, float, float, float, float, float, float, float, float, float, float,
                              int, int, int, int]] = []
        if writer._nrev:
            for k in range(writer._nrev):
                a, b, dst = writer._q0[k].tolist(), writer._p[k].tolist(), writer._qdst[k].tolist()
                self._rev.append((int(writer._qi[k]), float(writer._ihm[k].imag), float(writer._iho[k].imag),
                                  a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], dst[0], dst[1], dst[2], dst[3]))
            self._folded = bool(writer._folded)
            if self._folded:
                self._open = [int(i) for i in writer._open]
                idx, lo, hi = writer._guard
                self._guard = list(zip(idx.tolist(), lo.tolist(), hi.tolist(), strict=True))
                self._by_caller = writer._by_caller
        self._pri: list[tuple[int, float, float, Vec3, Vec3, tuple[int, int, int]]] = []
        if writer._npri:
            src, mult, off, d, t0 = writer._pq
            for k in range(writer._npri):
                dk, tk, dst = d[k].tolist(), t0[k].tolist(), writer._tdst[k].tolist()
                self._pri.append((int(src[k]), float(mult[k]), float(off[k]), (dk[0], dk[1], dk[2]),
                                  (tk[0], tk[1], tk[2]), (dst[0], dst[1], dst[2])))

    @staticmethod
    def fits(writer: TfWriter) -> bool:
        """Whether ``writer``'s rows are few enough for this class (and the machine stores doubles little end
        first, as the message does)."""
        return writer._nrev + writer._npri <= SCALAR_MAX and sys.byteorder == "little"

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
        f = self._f
        if self._rev:
            cos, sin = math.cos, math.sin
            low = False
            for qi, hm, ho, a0, a1, a2, a3, b0, b1, b2, b3, i0, i1, i2, i3 in self._rev:
                h = q[qi] * hm + ho
                c, s = cos(h), sin(h)
                w = a3 * c + b3 * s
                f[i0], f[i1], f[i2], f[i3] = a0 * c + b0 * s, a1 * c + b1 * s, a2 * c + b2 * s, w
                if w <= _W_KDL:
                    low = True
            if low:  # as TfWriter: the folded rows keep their signs while their joints are within range
                if self._folded and ((in_limits and self._by_caller) or self._in_range(q)):
                    rows: Sequence[int] = self._open
                else:
                    rows = range(len(self._rev))
                for k in rows:
                    i0, i1, i2, i3 = self._rev[k][11:]
                    x, y, z, w = f[i0], f[i1], f[i2], f[i3]
                    if w <= _W_KDL and kdl_flips(x, y, z, w):  # w above: it leads and is positive
                        f[i0], f[i1], f[i2], f[i3] = -x, -y, -z, -w
        for si, m, o, d, t0, (i0, i1, i2) in self._pri:
            x = q[si] * m + o
            f[i0], f[i1], f[i2] = d[0] * x + t0[0], d[1] * x + t0[1], d[2] * x + t0[2]
        return self.buffer


__all__ = ["SCALAR_MAX", "ScalarTfWriter"]
