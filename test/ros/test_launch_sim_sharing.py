"""launch_testing: sim_sharing.launch.py starts sim_bridge, state_publisher and state_store (real ROS installs).

Skipped where launch_testing is missing (the PyPI wheels have no launch, launch_ros nor launch_testing).
"""

from __future__ import annotations

import tempfile
import time
import unittest

import pytest
from repo_paths import REPO_ROOT

pytest.importorskip("launch_testing", reason="launch_testing not installed")
pytest.importorskip("launch_ros", reason="launch_testing not installed (launch_ros missing)")
pytest.importorskip("mujoco", reason="the mujoco package is not installed")

import launch_testing.actions
import launch_testing.asserts
import rclpy
from launch.launch_description_sources import PythonLaunchDescriptionSource
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

import launch

ROOT = REPO_ROOT
SAMPLE = str(ROOT / "robot_state_format" / "samples" / "double_pendulum.urdf")
OUT = tempfile.mkdtemp(prefix="sim_sharing_")


@pytest.mark.launch_test
def generate_test_description():  # type: ignore[no-untyped-def]
    include = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(ROOT / "launch" / "sim_sharing.launch.py")),
        launch_arguments={"model": SAMPLE, "namespace": "sim", "output_dir": OUT}.items())
    return launch.LaunchDescription([include, launch_testing.actions.ReadyToTest()])


class TestSimSharingLaunch(unittest.TestCase):
    def test_three_nodes_up_and_the_simulator_world_state(self) -> None:
        rclpy.init()
        node = rclpy.create_node("launch_test_sim_sharing")
        try:
            got: list = []
            qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
            node.create_subscription(String, "/sim/world_state", got.append, qos)
            deadline = time.monotonic() + 20.0
            names: set = set()
            want = {"sim_bridge", "state_publisher", "state_store"}
            while time.monotonic() < deadline and (not got or not want <= names):
                rclpy.spin_once(node, timeout_sec=0.1)
                names = set(node.get_node_names())
            self.assertLessEqual(want, names)
            self.assertTrue(got and "simulator_state" in got[0].data)
        finally:
            node.destroy_node()
            rclpy.shutdown()


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info) -> None:  # type: ignore[no-untyped-def]
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0, -2, -15])
