"""A node clock's "now" in nanoseconds, as cheap as the clock allows.

The state_publisher reads its clock once per JointState (to see the clock go backwards: a simulation reset).
Through rclpy that is two pybind11 calls (``get_now``, then ``nanoseconds``), about 7 us a message in the node
process at 1 kHz, where the caches are cold (docs/performance.md, "against robot_state_publisher"). While a
ROS-time clock runs on system time (``use_sim_time`` false: ROS time not active), rcl reads
``CLOCK_REALTIME``, the clock :func:`time.time_ns` reads, so :class:`NodeNow` takes that builtin; when ROS time
becomes active (``use_sim_time`` set, now or later) the clock's jump callback switches it to the clock's own
time, and back when it is deactivated. Any other clock (steady, system) is always read through rclpy.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rclpy.clock import Clock, JumpHandle, JumpThreshold, ROSClock, TimeJump


class NodeNow:
    """``now_ns()``: the time of ``clock`` in nanoseconds (see the module text)."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._handle = clock.handle
        self.now_ns: Callable[[], int] = self._through_rclpy
        self._jumps: JumpHandle | None = None
        if isinstance(clock, ROSClock):  # a node's clock of type ROS_TIME (the default)
            self._jumps = clock.create_jump_callback(
                JumpThreshold(min_forward=None, min_backward=None, on_clock_change=True), post_callback=self._on_jump)
            self._choose()

    def _through_rclpy(self) -> int:
        return int(self._handle.get_now().nanoseconds)

    def _choose(self) -> None:
        clock = self._clock
        assert isinstance(clock, ROSClock)
        self.now_ns = self._through_rclpy if clock.ros_time_is_active else time.time_ns

    def _on_jump(self, _jump: TimeJump) -> None:
        self._choose()

    def destroy(self) -> None:
        """Stop following the clock's changes (the node is destroyed)."""
        if self._jumps is not None:
            self._jumps.unregister()
            self._jumps = None


__all__ = ["NodeNow"]
