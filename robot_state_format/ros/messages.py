"""Message conversion for the state publisher, built for the 1 kHz hot path.

* :class:`TfEncoder` writes ``tf2_msgs/TFMessage`` CDR bytes straight from numpy arrays of 4x4
  transforms: frame ids never change per joint, so each joint's bytes are a template and only the
  stamp and the seven doubles are written per message.  ``Publisher.publish`` accepts the bytes.
  The output is checked against ``rclpy.serialization.serialize_message`` in the tests.
* :func:`matrices_to_quaternions` (:mod:`robot_state_format.spatial`'s) converts a stack of rotations.
* :func:`joint_state_arrays` turns a ``sensor_msgs/JointState`` into names and numpy arrays.
* :func:`transforms_to_msgs` builds ``TransformStamped`` objects (for /tf_static and tests).

Importing this module imports the message packages, not rclpy.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from numpy.typing import NDArray

from robot_state_format.spatial import (
    matrices_to_quaternions,
    quaternion_to_matrix,
    transforms_to_quaternions,
)

CDR_LE_HEADER = b"\x00\x01\x00\x00"  # XCDR1, little endian, no options
_CACHE_SIZE = 256
_Layout = tuple[bytes, int, "NDArray[np.intp]", "NDArray[np.intp]", "NDArray[np.intp]"]
"""Skeleton bytes, total size, stamp words, double words, rows (see :meth:`TfEncoder._layout`)."""


def _cdr_string(text: str, offset: int) -> tuple[bytes, int]:
    """CDR string (4-aligned uint32 length incl. NUL, bytes, NUL) at ``offset``; returns bytes, new offset."""
    pad = (-offset) % 4
    raw = text.encode("utf-8") + b"\x00"
    out = b"\x00" * pad + struct.pack("<I", len(raw)) + raw
    return out, offset + len(out)


class TfEncoder:
    """Serialise TFMessages for a fixed list of (parent, child) frame pairs, selected per message.

    ``frames[i] = (parent_frame_id, child_frame_id)`` of transform slot ``i`` (the frame prefix
    already applied).  :meth:`encode` takes the slot indices, the 4x4 transforms of those slots
    and one stamp, and returns the CDR bytes of the TFMessage.
    """

    def __init__(self, frames: Sequence[tuple[str, str]]) -> None:
        self.frames = list(frames)
        # Templates per phase (start offset mod 8 = 0 or 4): bytes with zeroed stamp and doubles.
        self._tmpl: dict[int, list[bytes]] = {0: [], 4: []}
        for parent, child in self.frames:
            for phase in (0, 4):
                off = phase + 8  # after sec, nanosec
                a, off = _cdr_string(parent, off)
                b, off = _cdr_string(child, off)
                pad = (-off) % 8
                self._tmpl[phase].append(b"\x00" * 8 + a + b + b"\x00" * pad + b"\x00" * 56)
        self._layouts: dict[bytes, _Layout] = {}

    def _layout(self, slots: NDArray[np.intp]) -> _Layout:
        """Skeleton bytes (padded to 4 + 8n), total size, and uint64 indices (from byte 4) of the numbers."""
        key = slots.tobytes()
        hit = self._layouts.get(key)
        if hit is not None:
            return hit
        parts = [CDR_LE_HEADER, struct.pack("<I", len(slots))]
        pos = 8  # absolute byte position (encapsulation header + count)
        stamp_pos, dbl_pos = [], []
        for n, i in enumerate(slots.tolist()):
            t = self._tmpl[4 if n == 0 else 0][i]
            parts.append(t)
            stamp_pos.append(pos)
            dbl_pos.append(pos + len(t) - 56)
            pos += len(t)
        size = pos
        parts.append(b"\x00" * ((-(size - 4)) % 8))
        skeleton = b"".join(parts)
        # Every transform but the first starts 8-aligned in CDR (absolute position 4 mod 8), and every
        # block of seven doubles is 8-aligned: both are whole uint64 words of the buffer viewed from byte 4.
        stamp_words = np.asarray([(p - 4) // 8 for p in stamp_pos[1:]], dtype=np.intp)
        dbl_words = (np.asarray([(p - 4) // 8 for p in dbl_pos], dtype=np.intp)[:, None] + np.arange(7)).ravel()
        layout: _Layout = (skeleton, size, stamp_words, dbl_words, np.arange(len(slots)))
        if len(self._layouts) >= _CACHE_SIZE:
            self._layouts.clear()
        self._layouts[key] = layout
        return layout

    def encode(self, slots: NDArray[np.intp], transforms: NDArray[np.float64], stamp_ns: int) -> bytes:
        """CDR bytes of a TFMessage: transform ``transforms[k]`` for slot ``slots[k]``, all at ``stamp_ns``.

        ``transforms`` is ``(k, 4, 4)``; the quaternions are computed here in one batch (as
        :func:`matrices_to_quaternions`, with fewer numpy calls: this is the 1 kHz path).
        """
        slots = np.asarray(slots, dtype=np.intp)
        k = len(slots)
        if not k:
            return self.encode_pose7(slots, np.empty((0, 7)), stamp_ns)
        x = np.ascontiguousarray(transforms, dtype=np.float64)
        vals = np.empty((k, 7))
        vals[:, :3] = x[:, :3, 3]
        transforms_to_quaternions(x, out=vals[:, 3:])
        kdl_quaternion_signs(vals[:, 3:])
        return self.encode_pose7(slots, vals, stamp_ns)

    def prepared(self, slots: NDArray[np.intp], rows: NDArray[np.intp] | None = None) -> PreparedTf:
        """A :class:`PreparedTf` for these slots (its buffer allocated once; see there)."""
        slots = np.asarray(slots, dtype=np.intp)
        skeleton, size, stamp_words, dbl_words, _ = self._layout(slots)
        return PreparedTf(skeleton[:size], stamp_words, dbl_words, slots if rows is None else rows)

    def encode_pose7(self, slots: NDArray[np.intp], pose7: NDArray[np.float64], stamp_ns: int) -> bytes:
        """:meth:`encode` from rows ``x y z qx qy qz qw`` (``(k, 7)``, unit quaternions) instead of matrices."""
        slots = np.asarray(slots, dtype=np.intp)
        skeleton, size, stamp_words, dbl_words, _ = self._layout(slots)
        if not len(slots):
            return skeleton[:size]
        vals = np.ascontiguousarray(pose7, dtype=np.float64)
        sec, nsec = divmod(int(stamp_ns), 1_000_000_000)
        stamp = struct.pack("<iI", sec, nsec)
        buf = bytearray(skeleton)
        buf[8:16] = stamp
        words = np.frombuffer(buf, dtype="<u8", offset=4)
        words[stamp_words] = struct.unpack("<Q", stamp)[0]
        words[dbl_words] = vals.view("<u8").ravel()
        return bytes(memoryview(buf)[:size])


class PreparedTf:
    """One TFMessage layout (a fixed list of slots) written in place: the 1 kHz path of the state_publisher.

    The buffer holds the frame ids once; :meth:`write` puts one stamp and the seven numbers of each
    transform into it (two numpy assignments and one pack) and returns the buffer itself, which
    ``Publisher.publish`` (``publish_raw``) copies: it is rewritten by the next :meth:`write`. ``rows``:
    the row of each slot in the ``(n, 7)`` array given to :meth:`write`.
    """

    __slots__ = ("_rows", "buffer", "dbl_words", "size", "stamp_words", "words")

    def __init__(self, skeleton: bytes, stamp_words: NDArray[np.intp], dbl_words: NDArray[np.intp],
                 rows: NDArray[np.intp]) -> None:
        if not len(rows):
            raise ValueError("a PreparedTf needs at least one transform")
        self.size = len(skeleton)
        # every transform ends with its 8-aligned doubles: the message from byte 4 is whole uint64 words
        self.buffer = bytearray(skeleton)
        self.words = np.frombuffer(self.buffer, dtype="<u8", offset=4)  # the buffer from byte 4
        self.stamp_words = stamp_words  # the words of every stamp but the first (in the header at byte 8)
        self.dbl_words = dbl_words  # the words of each slot's x y z qx qy qz qw
        self._rows = np.asarray(rows, dtype=np.intp)

    def write(self, pose7: NDArray[np.float64], stamp_ns: int) -> bytearray:
        """The message with ``pose7[rows]`` (rows ``x y z qx qy qz qw``, C-contiguous float64) at ``stamp_ns``."""
        sec, nsec = divmod(stamp_ns, 1_000_000_000)
        struct.pack_into("<iI", self.buffer, 8, sec, nsec)
        words = self.words
        if len(self.stamp_words):
            words[self.stamp_words] = (nsec << 32) | (sec & 0xFFFFFFFF)
        words[self.dbl_words] = pose7[self._rows].view("<u8").ravel()
        return self.buffer


def stamp_to_ns(stamp: Any) -> int:
    """``builtin_interfaces/Time`` → integer nanoseconds."""
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def ns_to_stamp(ns: int) -> Time:
    """Integer nanoseconds → ``builtin_interfaces/Time``."""
    sec, nsec = divmod(int(ns), 1_000_000_000)
    return Time(sec=sec, nanosec=nsec)


def joint_state_arrays(msg: Any) -> tuple[list[str], NDArray[np.float64], NDArray[np.float64],
                                          NDArray[np.float64], int]:
    """``sensor_msgs/JointState`` → (names, position, velocity, effort, stamp_ns) without copies where possible;
    ``ValueError`` for a stamp whose ``nanosec`` is not below 1e9."""
    def arr(values: Any) -> NDArray[np.float64]:
        try:
            return np.frombuffer(values, dtype=np.float64)
        except (TypeError, ValueError):
            return np.asarray(list(values), dtype=np.float64)

    nanosec = int(msg.header.stamp.nanosec)
    if nanosec >= 1_000_000_000:  # builtin_interfaces/Time: nanosec in [0, 1e9)
        raise ValueError(f"header.stamp.nanosec {nanosec} is not below 1e9")
    return (list(msg.name), arr(msg.position), arr(msg.velocity), arr(msg.effort),
            stamp_to_ns(msg.header.stamp))


_W_KDL = 0.5 + 2.5e-13  # KDL's trace > 1e-12 is 4 w^2 - 1 > 1e-12 for a unit quaternion


def kdl_quaternion_signs(quats: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rows ``x y z w`` (unit, ``w >= 0``) turned, in place, to the sign KDL's ``Rotation::GetQuaternion``
    gives (robot_state_publisher's TF): ``w > 0`` while the rotation's trace exceeds 1e-12 (under about
    120 degrees); beyond, the component of the largest diagonal element of the matrix positive (x when
    ``m00`` is larger than ``m11`` and ``m22``, else y when ``m11 > m22``, else z). The same rotation
    either way; the same numbers as the C++ node's."""
    w = quats[:, 3]
    if not len(w) or float(w.min()) > _W_KDL:
        return quats
    rows = np.flatnonzero(w <= _W_KDL)
    r = quats[rows]
    x2, y2, z2 = r[:, 0] * r[:, 0], r[:, 1] * r[:, 1], r[:, 2] * r[:, 2]  # m00 - m11 = 2 (x2 - y2), ...
    lead = np.where((x2 > y2) & (x2 > z2), r[:, 0], np.where(y2 > z2, r[:, 1], r[:, 2]))
    quats[rows] = r * np.copysign(1.0, lead)[:, None]
    return quats


def transforms_to_msgs(frames: Sequence[tuple[str, str]], transforms: NDArray[np.float64],
                       stamp_ns: int, signs: Callable[[NDArray[np.float64]], None] | None = None
                       ) -> list[TransformStamped]:
    """``geometry_msgs/TransformStamped`` objects for ``frames[k]`` at ``transforms[k]`` (quaternion
    signs as :func:`kdl_quaternion_signs`, then ``signs(quats)``, which may change them in place)."""
    stamp = ns_to_stamp(stamp_ns)
    quats = kdl_quaternion_signs(matrices_to_quaternions(transforms[:, :3, :3])) if len(transforms) \
        else np.empty((0, 4))
    if signs is not None and len(quats):
        signs(quats)
    out = []
    for (parent, child), t, q in zip(frames, transforms, quats):
        msg = TransformStamped()
        msg.header.stamp = stamp
        msg.header.frame_id = parent
        msg.child_frame_id = child
        tr, rot = msg.transform.translation, msg.transform.rotation
        tr.x, tr.y, tr.z = float(t[0, 3]), float(t[1, 3]), float(t[2, 3])
        rot.x, rot.y, rot.z, rot.w = (float(v) for v in q)
        out.append(msg)
    return out


def transform_msg_to_matrix(tf: Any) -> NDArray[np.float64]:
    """``geometry_msgs/Transform`` → 4x4."""
    q = tf.rotation
    x, y, z, w = float(q.x), float(q.y), float(q.z), float(q.w)
    n = (x * x + y * y + z * z + w * w) ** 0.5
    out = np.eye(4)
    if n > 0:
        out[:3, :3] = quaternion_to_matrix((x / n, y / n, z / n, w / n))
    out[:3, 3] = (tf.translation.x, tf.translation.y, tf.translation.z)
    return out
