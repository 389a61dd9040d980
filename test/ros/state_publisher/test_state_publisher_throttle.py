"""robot_state_publisher's ``publish_frequency`` rule, by hand-derived sequences, through both JointState paths.

The rule (ros/robot_state_publisher 3.x, ``callbackJointState``): the period is ``1000 / publish_frequency``
milliseconds truncated to whole milliseconds; a JointState is published when its stamp is at least one
period after the last published stamp of the least recently published joint it names (never published:
due at once), and then every joint it names gets its stamp; ``ignore_timestamp`` publishes every message.
Ours adds one rule of its own: a stamp is never sent twice for a joint (tf2 would warn TF_REPEATED_DATA).

Each sequence runs through the general path (``Runtime.apply``) and through the 1 kHz path (the message
serialised by rclpy, read by ``JointStateReader``, merged by ``HotPath``) and must give the same
transforms. test_rsp_anchor.py runs the same sequence through the C++ node when it is built.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from robot_state_format.model.loader import load_model
from robot_state_format.ros.description import LoadedDescription
from robot_state_format.ros.messages import kdl_quaternion_signs
from robot_state_format.ros.publisher_hot import MISS
from robot_state_format.ros.publisher_params import period_ns
from robot_state_format.ros.publisher_runtime import Runtime
from robot_state_format.ros.publisher_wire import JointStateReader

MS = 1_000_000
T0 = 1_700_000_000 * 1_000_000_000
LIM = '<limit lower="-3" upper="3" effort="1" velocity="1"/>'
URDF = f"""<robot name="thr">
 <link name="base"/><link name="a"/><link name="b"/><link name="c"/><link name="cam"/>
 <joint name="ja" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>{LIM}</joint>
 <joint name="jb" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 1"/><axis xyz="0 1 0"/>
   {LIM}</joint>
 <joint name="jc" type="revolute"><parent link="b"/><child link="c"/><origin xyz="0 0 1"/><axis xyz="0 1 0"/>
   <mimic joint="jb" multiplier="-1"/>{LIM}</joint>
 <joint name="mount" type="fixed"><parent link="a"/><child link="cam"/><origin xyz="0.1 0 0"/></joint>
</robot>"""

# (ms after T0, names) -> the child frames whose transform goes out, derived by hand for a 50 ms period
SEQUENCE_20HZ = [
    (0, ["ja", "jb"], ["a", "b", "c"]),  # nothing published yet: due
    (30, ["ja", "jb"], []),  # 30 < 0 + 50
    (50, ["ja"], ["a"]),  # ja last at 0: 50 >= 0 + 50
    (70, ["ja", "jb"], ["a", "b", "c"]),  # least recent of ja (50) and jb (0) is 0: due, ja goes too
    (100, ["jb"], []),  # jb last at 70: 100 < 120
    (119, ["ja", "jb"], []),  # both last at 70: 119 < 120
    (120, ["ja", "jb", "mount"], ["a", "b", "c"]),  # 120 >= 120; a fixed joint named is never on /tf
    (120, ["ja", "jb"], []),  # the same stamp again
    (175, ["jb", "ja"], ["a", "b", "c"]),  # another order of the same names
]


def test_period_is_whole_milliseconds_as_robot_state_publisher() -> None:
    # 1000 / f truncated: 20 Hz 50 ms, 30 Hz 33 ms (not 33.3), 7 Hz 142 ms, 1000 Hz 1 ms; 0: no period
    assert [period_ns(f) for f in (20.0, 30.0, 7.0, 1000.0, 0.0, 0.5)] == [
        50 * MS, 33 * MS, 142 * MS, 1 * MS, 0, 2000 * MS]


def _runtime(period: int, ignore: bool = False) -> Runtime:
    return Runtime(LoadedDescription(URDF, load_model(URDF), "test"), "", period, ignore)


def _children(rt: Runtime, tf: bytes | bytearray | None) -> list[str]:
    if tf is None:
        return []
    return sorted(t.child_frame_id for t in deserialize_message(bytes(tf), TFMessage).transforms)


def _general(rt: Runtime, names: list[str], values: list[float], stamp: int, now: int) -> bytes | None:
    return rt.apply(names, np.array(values), np.array([]), np.array([]), stamp, now).tf


def _hot(rt: Runtime, reader: JointStateReader, names: list[str], values: list[float], stamp: int,
         now: int) -> tuple[bytes | None, bool]:
    msg = JointState(name=names, position=values)
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
    d = reader.read(serialize_message(msg))
    assert d is not None and list(d.names) == names
    out = rt.hot.apply(d, now)
    if out is MISS:  # the general path takes it (a repeated stamp): as the node does
        return _general(rt, names, values, stamp, now), False
    assert not isinstance(out, type(MISS))
    return (None if out is None else bytes(out)), True


@pytest.mark.parametrize("path", ["general", "hot"])
def test_publish_frequency_rule_by_hand(path: str) -> None:
    rt = _runtime(period_ns(20.0))
    reader = JointStateReader()
    hot_taken = 0
    for k, (ms, names, want) in enumerate(SEQUENCE_20HZ):
        values = [0.1 * (k + 1)] * len(names)
        if path == "general":
            tf = _general(rt, names, values, T0 + ms * MS, T0 + k)
        else:
            tf, hot = _hot(rt, reader, names, values, T0 + ms * MS, T0 + k)
            hot_taken += hot
        assert _children(rt, tf) == want, (ms, names)
    if path == "hot":
        assert hot_taken == len(SEQUENCE_20HZ) - 1  # all but the repeated stamp


@pytest.mark.parametrize("path", ["general", "hot"])
def test_ignore_timestamp_publishes_every_new_stamp(path: str) -> None:
    rt = _runtime(period_ns(20.0), ignore=True)
    reader = JointStateReader()
    got = []
    for k, ms in enumerate((0, 1, 2, 2, 3)):
        names, values = ["ja", "jb"], [0.1 * k, 0.2]
        if path == "general":
            tf = _general(rt, names, values, T0 + ms * MS, T0 + k)
        else:
            tf, _ = _hot(rt, reader, names, values, T0 + ms * MS, T0 + k)
        got.append(_children(rt, tf))
    assert got == [["a", "b", "c"]] * 3 + [[]] + [["a", "b", "c"]]  # a repeated stamp (2 ms) is not re-sent


def test_hot_and_general_paths_give_the_same_bytes() -> None:
    rng = np.random.default_rng(7)
    a, b = _runtime(period_ns(100.0)), _runtime(period_ns(100.0))
    reader = JointStateReader()
    stamp = T0
    lists = [["ja", "jb"], ["jb"], ["ja"], ["jb", "ja", "nope"]]
    for k in range(300):
        stamp += int(rng.integers(1, 15)) * MS
        names = lists[int(rng.integers(0, len(lists)))]
        values = rng.uniform(-3.5, 3.5, len(names)).tolist()  # some outside the limits (warned, used)
        tf_general = _general(a, names, values, stamp, T0 + k)
        tf_hot, _ = _hot(b, reader, names, values, stamp, T0 + k)
        assert tf_hot == tf_general, k
    np.testing.assert_array_equal(a.cache.q, b.cache.q)
    np.testing.assert_array_equal(a.cache.last_sent, b.cache.last_sent)


def _quat_matrix(q: np.ndarray) -> np.ndarray:
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def test_quaternion_signs_follow_kdl() -> None:
    # KDL's Rotation::GetQuaternion: trace > 1e-12 -> w > 0; else the largest diagonal element's component > 0
    def rot(axis: tuple[float, float, float], angle: float) -> np.ndarray:
        u = np.array(axis) / np.linalg.norm(axis)
        return np.array([*(u * math.sin(angle / 2)), math.cos(angle / 2)])

    cases = [(rot((0, 0, 1), 0.3), 3), (rot((1, 0, 0), math.pi), 0), (rot((0, 1, 0), -math.pi), 1),
             (rot((0, 0, 1), 3.0), 2), (rot((1, 2, 0.5), 2.5), 1), (rot((-3, 1, 1), -2.4), 0)]
    q = np.array([c if c[3] >= 0 else -c for c, _ in cases])  # w >= 0 in
    before = q.copy()
    kdl_quaternion_signs(q)
    for (_, lead), row, old in zip(cases, q, before):
        np.testing.assert_allclose(_quat_matrix(row), _quat_matrix(old), rtol=0, atol=1e-15)  # the same rotation
        m = _quat_matrix(row)
        if np.trace(m) > 1e-12:
            assert row[3] > 0
        else:
            assert lead == int(np.argmax(np.diag(m))) and row[lead] > 0
