"""``sensor_msgs/JointState`` read straight from its CDR bytes (a raw subscription), names cached per list.

A JointState publisher sends the same joint names in every message, so the bytes of the name list repeat:
:class:`JointStateReader` keeps the last few name lists as bytes with their decoded tuple, compares a
message's list with one ``bytes.startswith`` and views the position, velocity and effort arrays in the
message buffer with ``numpy.frombuffer`` (no copy, no Python message object). Anything it does not
recognise exactly (big-endian data, a count past the end, lengths that differ from the names) gives None, and the caller
falls back to rclpy's own ``deserialize_message``: the reader never guesses.

Layout (XCDR1, little endian, ``00 01 00 00`` encapsulation; offsets counted from byte 4, where
alignment starts): ``int32 sec, uint32 nanosec, string frame_id, sequence<string> name,
sequence<double> position, velocity, effort`` (a string: uint32 length with the NUL, the bytes, NUL; a
sequence: uint32 count, then the elements, 8-aligned for doubles when there are any).
"""

from __future__ import annotations

import struct

import numpy as np
from numpy.typing import NDArray

CDR_LE = b"\x00\x01\x00\x00"  # XCDR1 little endian, no options
MAX_LISTS = 8  # name lists remembered (one per JointState publisher, usually)
_U32 = struct.Struct("<I")
_STAMP = struct.Struct("<iII")  # sec, nanosec, frame_id length


class Decoded:
    """One JointState: names (shared between messages of one list) and its position, velocity and effort,
    read from the message bytes when asked: as arrays viewing the bytes (:attr:`position`...), or as tuples
    of floats (:meth:`values`, one ``struct`` call: what the plain-float path of short lists takes)."""

    __slots__ = ("_arrays", "_spans", "data", "key", "names", "stamp_ns")

    def __init__(self, names: tuple[str, ...], data: bytes, spans: tuple[tuple[int, int], ...], stamp_ns: int,
                 key: int) -> None:
        self.names = names
        self.data = data
        self._spans = spans  # (byte offset, count) of position, velocity, effort (count 0: absent)
        self.stamp_ns = stamp_ns
        self.key = key  # which cached name list (an index, stable while the list stays cached)
        self._arrays: list[NDArray[np.float64]] | None = None

    def _array(self, field: int) -> NDArray[np.float64]:
        if self._arrays is None:
            self._arrays = [np.frombuffer(self.data, dtype="<f8", count=k, offset=off) if k else _EMPTY
                            for off, k in self._spans]
        return self._arrays[field]

    @property
    def position(self) -> NDArray[np.float64]:
        return self._array(0)

    @property
    def velocity(self) -> NDArray[np.float64]:
        return self._array(1)

    @property
    def effort(self) -> NDArray[np.float64]:
        return self._array(2)

    def values(self, field: int) -> tuple[float, ...]:
        """Position (0), velocity (1) or effort (2) as floats (empty when absent)."""
        off, k = self._spans[field]
        return _doubles(k).unpack_from(self.data, off) if k else ()


_DOUBLES: dict[int, struct.Struct] = {}


def _doubles(k: int) -> struct.Struct:
    s = _DOUBLES.get(k)
    if s is None:
        if len(_DOUBLES) >= 64:
            _DOUBLES.clear()
        s = _DOUBLES[k] = struct.Struct(f"<{k}d")
    return s


class _NameList:
    """One name list: its bytes under a mask of the alignment bytes, as 32-bit words."""

    __slots__ = ("blob", "key", "mask", "names", "ref", "size", "tail", "tmp")

    def __init__(self, blob: bytes, mask: bytes, names: tuple[str, ...], size: int, key: int) -> None:
        self.blob = blob  # the bytes as first seen, alignment bytes included (most writers repeat them)
        self.mask = np.frombuffer(mask, dtype="<u4")
        self.tmp = np.empty_like(self.mask)
        self.ref = (np.frombuffer(blob, dtype="<u4") & self.mask).tobytes()
        self.names = names
        self.size = size  # bytes of the list (count and strings, without the padding after the last one)
        self.key = key
        # the layout after the names in the last message read with this list: (its offset, the message's
        # length, a Struct of the three counts, the counts, the spans); the next message of the same length
        # and counts at the same offset has the same spans
        self.tail: tuple[int, int, struct.Struct, tuple[int, int, int], tuple[tuple[int, int], ...]] | None = None


class JointStateReader:
    """Decode JointState CDR bytes; :meth:`read` returns None for anything but the plain layout."""

    def __init__(self) -> None:
        self._lists: list[_NameList] = []  # newest first
        self._next_key = 0

    def read(self, data: bytes) -> Decoded | None:
        n = len(data)
        if n < 24 or not data.startswith(CDR_LE):
            return None
        sec, nsec, flen = _STAMP.unpack_from(data, 4)
        off = 16 + flen
        off += (-off) % 4
        if flen < 1 or off + 4 > n or nsec >= 1_000_000_000:
            return None
        hit = None
        for entry in self._lists:
            if data.startswith(entry.blob, off):  # the very bytes again: no copy, no numpy
                hit = entry
                break
            nw = len(entry.ref)
            if off + nw <= n:
                words = np.frombuffer(data, dtype="<u4", count=nw >> 2, offset=off)
                np.bitwise_and(words, entry.mask, out=entry.tmp)
                if entry.tmp.tobytes() == entry.ref:
                    hit = entry
                    break
        if hit is None:
            hit = self._names(data, off)
            if hit is None:
                return None
        off += hit.size
        names = hit.names
        tail = hit.tail
        if tail is not None and tail[0] == off and tail[1] == n and tail[2].unpack_from(data, off) == tail[3]:
            # the counts of the last message of this list, at the same places in as many bytes: its spans
            return Decoded(names, data, tail[4], sec * 1_000_000_000 + nsec, hit.key)
        start = off
        count = len(names)
        spans = []
        places = []
        for field in range(3):
            off += (-off) % 4
            if off + 4 > n:
                return None
            k = _U32.unpack_from(data, off)[0]
            places.append(off)
            off += 4
            if not k and not field:  # positions are required: the general path says they are missing
                return None
            if k:
                off += (-(off - 4)) % 8
                end = off + 8 * k
                if k != count or end > n:  # a length that differs from the names: the slow path says so
                    return None
                spans.append((off, k))
                off = end
            else:
                spans.append((off, 0))
        if not count:  # no names: the slow path says so
            return None
        counts = struct.Struct(f"<{places[0] - start}xI{places[1] - places[0] - 4}xI{places[2] - places[1] - 4}xI")
        hit.tail = (start, n, counts, (spans[0][1], spans[1][1], spans[2][1]), tuple(spans))
        return Decoded(names, data, hit.tail[4], sec * 1_000_000_000 + nsec, hit.key)

    def _names(self, data: bytes, start: int) -> _NameList | None:
        n = len(data)
        count = _U32.unpack_from(data, start)[0]
        off = start + 4
        if count > (n - off) // 5:  # each name takes at least 5 bytes
            return None
        names = []
        mask = bytearray(b"\xff" * 4)
        for _ in range(count):
            pad = (-off) % 4
            mask += bytes(pad)  # alignment bytes: whatever the writer's buffer held, never compared
            off += pad
            if off + 4 > n:
                return None
            k = _U32.unpack_from(data, off)[0]
            off += 4
            if k < 1 or off + k > n or data[off + k - 1] != 0:
                return None
            try:
                names.append(data[off:off + k - 1].decode("utf-8"))
            except UnicodeDecodeError:
                return None
            mask += b"\xff" * (4 + k)
            off += k
        size = off - start
        mask += bytes((-size) % 4)
        if start + len(mask) > n:
            return None
        entry = _NameList(data[start:start + len(mask)], bytes(mask), tuple(names), size, self._next_key)
        self._next_key += 1
        self._lists.insert(0, entry)
        del self._lists[MAX_LISTS:]
        return entry


_EMPTY: NDArray[np.float64] = np.empty(0, dtype=np.float64)

__all__ = ["Decoded", "JointStateReader"]
