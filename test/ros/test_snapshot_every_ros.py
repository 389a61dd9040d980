"""state_publisher with ``snapshot_frequency: -1``: a world_state per JointState, over real DDS."""

from __future__ import annotations

import time

import pytest
from repo_paths import REPO_ROOT

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from builtin_interfaces.msg import Time  # noqa: E402
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from robot_state_format.usdf.reader import read_world_state  # noqa: E402

SAMPLES = REPO_ROOT / "robot_state_format" / "samples"
S = 1_000_000_000
RELIABLE = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)


def test_a_snapshot_follows_every_joint_state(ros) -> None:  # type: ignore[no-untyped-def]
    proc = ros.start_node("state_publisher", {"model_file": str(SAMPLES / "double_pendulum.urdf"),
                                              "snapshot_frequency": -1, "joint_states_qos": "reliable"},
                          ros_args=["-r", "__ns:=/every"])
    inbox = ros.subscribe("/every/world_state", String, RELIABLE)
    pub = ros.node.create_publisher(JointState, "/every/joint_states", RELIABLE)
    ros.wait_for_matched(pub, timeout=30.0)
    ros.wait_for_matched(inbox.subscription, timeout=30.0)
    base = (int(time.time()) - 500) * S
    sent: dict[tuple[int, int], tuple[float, float]] = {}

    def send(k: int) -> None:
        t = base + k * 20_000_000
        msg = JointState()
        msg.header.stamp = Time(sec=t // S, nanosec=t % S)
        msg.name = ["joint A", "joint B"]
        msg.position = [0.01 * k, -0.02 * k]
        sent[(t // S, t % S)] = (0.01 * k, -0.02 * k)
        pub.publish(msg)

    # warm up until a first snapshot made it here (discovery of the world_state writer)
    k = [0]

    def again() -> None:
        k[0] += 1
        send(k[0])

    ros.spin_until(lambda: len(inbox.messages) > 0, 30.0, "a first world_state", every=again, every_period=0.2)
    first = k[0] + 1
    for i in range(first, first + 20):  # 20 messages 20 ms apart: a 10 Hz timer would give about 4
        send(i)
        ros.spin_for(0.02)
    want = {key for key in sent if key >= divmod(base + first * 20_000_000, S)}
    seen: dict[tuple[int, int], tuple[float, float]] = {}

    def collected() -> bool:
        for m in inbox.messages:
            ws = read_world_state(m.data).state
            assert ws.stamp is not None  # every snapshot carries the JointState's stamp
            ms = ws.model_states[0]
            a, b = ms.joint("joint A"), ms.joint("joint B")
            assert a is not None and b is not None and a.positions and b.positions
            seen[(ws.stamp.sec, ws.stamp.nanosec)] = (a.positions[0], b.positions[0])
        inbox.messages.clear()
        return want <= seen.keys()

    ros.spin_until(collected, 20.0, "a world_state for each of the 20 JointStates")
    for key in want:  # the snapshot holds the values of the JointState whose stamp it carries
        assert seen[key] == sent[key]
    assert proc.stop() == 0
