"""NodeNow against rclpy's own clock: system time while ROS time is off, the simulated time once it is on
(``use_sim_time`` set on the node, now or later), a steady clock always read through rclpy."""

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
from rclpy.time import Time
from ros_harness import init_context, shutdown_context

from robot_state_format.ros.node_now import NodeNow


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
