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
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

CDR_LE = b"\x00\x01\x00\x00"  # XCDR1 little endian, no options
MAX_LISTS = 8  # name lists remembered (one per JointState publisher, usually)
_U32 = struct.Struct("<I")
_STAMP = struct.Struct("<iII")  # sec, nanosec, frame_id length


@dataclass(slots=True)
class Decoded:
    """One JointState: names (shared between messages of one list), arrays viewing the message bytes."""

    names: tuple[str, ...]
    position: NDArray[np.float64]
    velocity: NDArray[np.float64]
    effort: NDArray[np.float64]
    stamp_ns: int
    key: int  # which cached name list (an index, stable while the list stays cached)


class _NameList:
    """One name list: its bytes under a mask of the alignment bytes, as 32-bit words."""

    __slots__ = ("blob", "key", "mask", "names", "ref", "size", "tmp")

    def __init__(self, blob: bytes, mask: bytes, names: tuple[str, ...], size: int, key: int) -> None:
        self.blob = blob  # the bytes as first seen, alignment bytes included (most writers repeat them)
        self.mask = np.frombuffer(mask, dtype="<u4")
        self.tmp = np.empty_like(self.mask)
        self.ref = (np.frombuffer(blob, dtype="<u4") & self.mask).tobytes()
        self.names = names
        self.size = size  # bytes of the list (count and strings, without the padding after the last one)
        self.key = key


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
        count = len(names)
        arrays = []
        for field in range(3):
            off += (-off) % 4
            if off + 4 > n:
                return None
            k = _U32.unpack_from(data, off)[0]
            off += 4
            if not k and not field:  # positions are required: the general path says they are missing
                return None
            if k:
                off += (-(off - 4)) % 8
                end = off + 8 * k
                if k != count or end > n:  # a length that differs from the names: the slow path says so
                    return None
                arrays.append(np.frombuffer(data, dtype="<f8", count=k, offset=off))
                off = end
            else:
                arrays.append(_EMPTY)
        if not count:  # no names: the slow path says so
            return None
        return Decoded(names, arrays[0], arrays[1], arrays[2], sec * 1_000_000_000 + nsec, hit.key)

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
