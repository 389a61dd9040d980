"""NodeNow against rclpy's own clock: system time while ROS time is off, the simulated time once it is on
(``use_sim_time`` set on the node, now or later), a steady clock always read through rclpy; and the
state_publisher seeing a simulation reset through it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from rclpy.clock import Clock
from rclpy.clock_type import ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.serialization import deserialize_message, serialize_message
from rclpy.time import Time
from ros_harness import init_context, shutdown_context
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from robot_state_format.ros.node_now import NodeNow
from robot_state_format.ros.state_publisher import StatePublisher


@pytest.fixture(scope="module")
def context() -> Iterator[Any]:
    ctx = init_context()
    yield ctx
    shutdown_context(ctx)


def _node(context: Any, name: str, **kwargs: Any) -> Node:
    return Node(name, context=context, start_parameter_services=False, enable_rosout=False, **kwargs)


def test_system_time_is_the_clocks_time(context: Any) -> None:
    node = _node(context, "now_system")
    try:
        now = NodeNow(node.get_clock())
        before = node.get_clock().now().nanoseconds
        ours = now.now_ns()
        after = node.get_clock().now().nanoseconds
        assert before <= ours <= after  # the same clock (CLOCK_REALTIME), read between two reads of rclpy's
        assert now.now_ns is time.time_ns
        now.destroy()
    finally:
        node.destroy_node()


def test_simulated_time_is_followed_when_switched_on_and_off(context: Any) -> None:
    node = _node(context, "now_sim")
    try:
        now = NodeNow(node.get_clock())
        node.set_parameters([Parameter("use_sim_time", value=True)])
        assert now.now_ns() == 0  # ROS time active, no /clock yet: rcl's zero, as rclpy's own now()
        node.get_clock().set_ros_time_override(Time(nanoseconds=123_456_789))
        assert now.now_ns() == 123_456_789 == node.get_clock().now().nanoseconds
        node.set_parameters([Parameter("use_sim_time", value=False)])
        assert abs(now.now_ns() - time.time_ns()) < 1e9 and now.now_ns is time.time_ns
        now.destroy()
    finally:
        node.destroy_node()


def test_simulated_time_set_at_start(context: Any) -> None:
    node = _node(context, "now_sim_start", parameter_overrides=[Parameter("use_sim_time", value=True)])
    try:
        now = NodeNow(node.get_clock())
        node.get_clock().set_ros_time_override(Time(nanoseconds=42))
        assert now.now_ns() == 42
        now.destroy()
        now.destroy()  # twice: nothing left to unregister
    finally:
        node.destroy_node()


def test_a_steady_clock_is_read_through_rclpy() -> None:
    now = NodeNow(Clock(clock_type=ClockType.STEADY_TIME))
    before = time.monotonic_ns()
    ours = now.now_ns()
    assert now.now_ns is not time.time_ns
    assert before <= ours <= time.monotonic_ns()  # CLOCK_MONOTONIC, far from the epoch's 1.7e18


URDF = """<robot name="one">
 <link name="base"/><link name="a"/>
 <joint name="ja" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
   <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""


@pytest.mark.parametrize("sim", [True, False])
def test_state_publisher_sees_the_simulation_clock_go_back(context: Any, sim: bool) -> None:
    """A simulation reset: /clock goes back 0.5 s and the JointStates with it. On simulated time the node
    sees its clock go backwards, resets and publishes the new state; on wall time the same message is just
    older than the last (within the 1 s jump tolerance) and is refused."""
    node = StatePublisher(f"now_reset_{int(sim)}", context=context, parameter_overrides=[
        Parameter("robot_description", value=URDF), Parameter("use_sim_time", value=sim),
        Parameter("snapshot_frequency", value=0.0)])
    sent: list[int] = []  # the stamp of each /tf the node sends, by either of its paths (1 kHz, general)

    def capture(buf: bytes | bytearray) -> None:
        stamps = {t.header.stamp.sec * 10**9 + t.header.stamp.nanosec
                  for t in deserialize_message(bytes(buf), TFMessage).transforms}
        assert len(stamps) == 1
        sent.append(stamps.pop())

    node._send_tf_raw = node._send_tf = capture  # type: ignore[method-assign]
    try:
        def joint_state(at_ns: int, q: float) -> bytes:
            m = JointState(name=["ja"], position=[q])
            m.header.stamp.sec, m.header.stamp.nanosec = divmod(at_ns, 10**9)
            return serialize_message(m)

        t0 = time.time_ns() if not sim else 100 * 10**9
        if sim:
            node.get_clock().set_ros_time_override(Time(nanoseconds=t0))
        node.on_joint_state_bytes(joint_state(t0, 0.1))
        assert sent == [t0]
        back = t0 - 500_000_000
        if sim:
            node.get_clock().set_ros_time_override(Time(nanoseconds=back))
        node.on_joint_state_bytes(joint_state(back, 0.2))
        assert sent == ([t0, back] if sim else [t0])
    finally:
        node.destroy_node()
