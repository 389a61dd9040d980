"""JointStateReader (ros/publisher_wire.py) against rclpy's own serialiser and deserialiser."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState

from robot_state_format.ros.publisher_wire import JointStateReader


def _random_message(rng: np.random.Generator) -> JointState:
    m = JointState()
    m.header.stamp.sec = int(rng.integers(0, 2**31 - 1))
    m.header.stamp.nanosec = int(rng.integers(0, 10**9))
    m.header.frame_id = "f" * int(rng.integers(0, 9))  # every alignment of what follows
    n = int(rng.integers(1, 7))
    m.name = ["j" * int(rng.integers(1, 8)) + str(i) for i in range(n)]
    m.position = rng.normal(size=n).tolist()
    if rng.random() < 0.5:
        m.velocity = rng.normal(size=n).tolist()
    if rng.random() < 0.5:
        m.effort = rng.normal(size=n).tolist()
    return m


def test_reader_gives_rclpy_values_and_caches_name_lists() -> None:
    rng = np.random.default_rng(1)
    reader = JointStateReader()
    for _ in range(400):
        m = _random_message(rng)
        data = serialize_message(m)  # its alignment bytes are whatever rclpy's buffer held
        for _ in range(2):  # the second read hits the cached name list
            d = reader.read(data)
            assert d is not None
            assert list(d.names) == list(m.name)
            assert d.position.tolist() == list(m.position)
            assert d.velocity.tolist() == list(m.velocity) and d.effort.tolist() == list(m.effort)
            assert d.stamp_ns == m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec


def test_same_names_same_key_other_names_other_key() -> None:
    reader = JointStateReader()
    a = reader.read(serialize_message(JointState(name=["a", "b"], position=[1.0, 2.0])))
    b = reader.read(serialize_message(JointState(name=["a", "b"], position=[3.0, 4.0])))
    c = reader.read(serialize_message(JointState(name=["a", "bb"], position=[3.0, 4.0])))
    assert a is not None and b is not None and c is not None
    assert a.key == b.key != c.key and b.position.tolist() == [3.0, 4.0] and c.names == ("a", "bb")


def test_what_the_reader_does_not_take_goes_back_to_rclpy() -> None:
    # lengths that differ from the names, no names, no positions: None (the general path warns)
    reader = JointStateReader()
    for m in (JointState(name=["a", "b"], position=[1.0]), JointState(name=[], position=[]),
              JointState(name=["a"], position=[1.0], velocity=[1.0, 2.0]), JointState(name=["a"])):
        assert reader.read(serialize_message(m)) is None
    # cut or damaged bytes: None, or exactly what rclpy reads from them
    rng = np.random.default_rng(2)
    for _ in range(300):
        data = bytearray(serialize_message(_random_message(rng)))
        if rng.random() < 0.5:
            data = data[: int(rng.integers(0, len(data)))]
        else:
            for _ in range(3):
                data[int(rng.integers(0, len(data)))] = int(rng.integers(0, 256))
        raw = bytes(data)
        d = reader.read(raw)
        if d is None:
            continue
        m = deserialize_message(raw, JointState)
        assert list(d.names) == list(m.name) and d.position.tolist() == list(m.position)
        assert d.velocity.tolist() == list(m.velocity) and d.effort.tolist() == list(m.effort)


def test_one_list_whose_other_fields_change_between_messages() -> None:
    # the layout after the names is remembered per list: every change of frame_id length (the offset),
    # of which arrays are present (same length, other counts) and of a count that no longer matches the
    # names must be read again, as rclpy reads it
    rng = np.random.default_rng(7)
    reader = JointStateReader()
    names = ["shoulder", "elbow"]
    shapes = [(2, 0, 2), (2, 2, 0), (2, 2, 2), (2, 0, 0), (2, 1, 1), (2, 0, 1)]
    seen_bad = 0
    for _ in range(300):
        frame = "f" * int(rng.integers(0, 3))
        npos, nvel, neff = shapes[int(rng.integers(0, len(shapes)))]
        m = JointState(name=names, position=rng.normal(size=npos).tolist(), velocity=rng.normal(size=nvel).tolist(),
                       effort=rng.normal(size=neff).tolist())
        m.header.frame_id = frame
        m.header.stamp.sec = int(rng.integers(0, 1000))
        d = reader.read(serialize_message(m))
        if nvel not in (0, 2) or neff not in (0, 2):
            assert d is None  # a length that differs from the names
            seen_bad += 1
            continue
        assert d is not None
        assert d.names == tuple(names) and d.stamp_ns == m.header.stamp.sec * 1_000_000_000
        assert d.position.tolist() == list(m.position) and list(d.values(0)) == list(m.position)
        assert d.velocity.tolist() == list(m.velocity) and list(d.values(1)) == list(m.velocity)
        assert d.effort.tolist() == list(m.effort) and list(d.values(2)) == list(m.effort)
    assert seen_bad > 50
