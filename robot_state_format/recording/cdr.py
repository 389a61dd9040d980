"""CDR bytes of the messages playback publishes raw (no rclpy): ``std_msgs/String`` built and read,
``sensor_msgs/JointState`` and ``tf2_msgs/TFMessage`` stamps moved in place.

Every buffer starts with the 4-byte little-endian encapsulation header; CDR alignment counts from
the byte after it.
"""

from __future__ import annotations

import struct

CDR_LE_HEADER = b"\x00\x01\x00\x00"
NS = 1_000_000_000


def cdr_string(text: str) -> bytes:
    """``std_msgs/String`` CDR bytes (with the encapsulation header)."""
    raw = text.encode("utf-8")
    return CDR_LE_HEADER + struct.pack("<I", len(raw) + 1) + raw + b"\x00"


def cdr_string_text(data: bytes) -> str:
    """The text of ``std_msgs/String`` CDR bytes."""
    (n,) = struct.unpack_from("<I", data, 4)
    return data[8:8 + n - 1].decode("utf-8")


def restamp_joint_state(data: bytes, shift_ns: int) -> bytes:
    """JointState CDR with ``header.stamp`` moved by ``shift_ns`` (the stamp is the first field)."""
    if shift_ns == 0:
        return data
    sec, nsec = struct.unpack_from("<iI", data, 4)
    s, n = divmod(sec * NS + nsec + shift_ns, NS)
    return data[:4] + struct.pack("<iI", s, n) + data[12:]


def restamp_tf(data: bytes, shift_ns: int) -> bytes:
    """``tf2_msgs/TFMessage`` CDR with every ``header.stamp`` moved by ``shift_ns`` (the layout walked:
    count, then per transform stamp, frame_id, child_frame_id, seven 8-aligned doubles)."""
    if shift_ns == 0:
        return data
    buf = bytearray(data)
    (count,) = struct.unpack_from("<I", buf, 4)
    pos = 8  # absolute; CDR alignment counts from byte 4 (after the encapsulation header)
    for _ in range(count):
        pos += (-(pos - 4)) % 4
        sec, nsec = struct.unpack_from("<iI", buf, pos)
        s_, n_ = divmod(sec * NS + nsec + shift_ns, NS)
        struct.pack_into("<iI", buf, pos, s_, n_)
        pos += 8
        for _string in range(2):  # frame_id, child_frame_id
            pos += (-(pos - 4)) % 4
            (n,) = struct.unpack_from("<I", buf, pos)
            pos += 4 + n
        pos += (-(pos - 4)) % 8
        pos += 56
    return bytes(buf)
