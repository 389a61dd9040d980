"""launch_testing: multi_robot.launch.py starts a state_publisher per robot and one state_store whose
``~/sources`` lists every robot (real ROS installs; skipped where launch_testing is missing, as with the
PyPI wheels)."""

from __future__ import annotations

import tempfile
import time
import unittest

import pytest
from repo_paths import REPO_ROOT

pytest.importorskip("launch_testing", reason="launch_testing not installed")
pytest.importorskip("launch_ros", reason="launch_testing not installed (launch_ros missing)")

import launch_testing.actions
import launch_testing.asserts
import rclpy
from launch.launch_description_sources import PythonLaunchDescriptionSource
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

import launch

ROOT = REPO_ROOT
SAMPLES = ROOT / "robot_state_format" / "samples"
OUT = tempfile.mkdtemp(prefix="multi_robot_")


@pytest.mark.launch_test
def generate_test_description():  # type: ignore[no-untyped-def]
    robots = f"a={SAMPLES / 'double_pendulum.urdf'} b={SAMPLES / 'arm7_gripper.urdf'}"
    include = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(ROOT / "launch" / "multi_robot.launch.py")),
        launch_arguments={"robots": robots, "output_dir": OUT}.items())
    return launch.LaunchDescription([include, launch_testing.actions.ReadyToTest()])


class TestMultiRobotLaunch(unittest.TestCase):
    def test_store_sees_both_robots(self) -> None:
        rclpy.init()
        node = rclpy.create_node("launch_test_multi_robot")
        try:
            pubs = {ns: node.create_publisher(JointState, f"/{ns}/joint_states", 10) for ns in ("a", "b")}
            names = {"a": ["joint A", "joint B"], "b": ["joint1"]}
            client = node.create_client(Trigger, "/state_store/sources")
            deadline = time.monotonic() + 30.0
            message = ""
            while time.monotonic() < deadline:
                for ns, pub in pubs.items():
                    pub.publish(JointState(name=names[ns], position=[0.1] * len(names[ns])))
                if client.service_is_ready():
                    future = client.call_async(Trigger.Request())
                    rclpy.spin_until_future_complete(node, future, timeout_sec=2.0)
                    if future.result() is not None:
                        message = future.result().message
                        if "a (/a): live" in message and "b (/b): live" in message:
                            break
                rclpy.spin_once(node, timeout_sec=0.2)
            self.assertIn("a (/a): live", message)
            self.assertIn("b (/b): live", message)
        finally:
            node.destroy_node()
            rclpy.shutdown()


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info) -> None:  # type: ignore[no-untyped-def]
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0, -2, -15])
