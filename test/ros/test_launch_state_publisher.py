"""launch_testing: both launch files start their nodes and state_publisher publishes TF (real ROS installs).

Run by pytest with launch_testing's plugin (``./run test``, ``launch_test`` or ``colcon test``); skipped,
saying how to get them, where launch/launch_testing are missing (no distro and no sources for ./run setup).
"""

from __future__ import annotations

import math
import time
import unittest

import pytest
from repo_paths import REPO_ROOT
from ros_tools import require

require("launch", "launch_testing", "launch_ros")

import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
import rclpy  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from rclpy.qos import qos_profile_sensor_data  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

import launch  # noqa: E402

ROOT = REPO_ROOT
SAMPLE = str(ROOT / "robot_state_format" / "samples" / "double_pendulum.urdf")


@pytest.mark.launch_test
def generate_test_description():  # type: ignore[no-untyped-def]
    include = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(ROOT / "launch" / "state_publisher.launch.py")),
        launch_arguments={"model": SAMPLE, "namespace": "lt", "frame_prefix": "lt/",
                          "publish_frequency": "0.0"}.items())
    return launch.LaunchDescription([include, launch_testing.actions.ReadyToTest()])


class TestStatePublisherLaunch(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        rclpy.init()
        cls.node = rclpy.create_node("launch_test_listener")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.node.destroy_node()
        rclpy.shutdown()

    def test_tf_from_joint_states(self) -> None:
        got: list = []
        self.node.create_subscription(TFMessage, "/tf", lambda m: got.extend(m.transforms), 100)
        pub = self.node.create_publisher(JointState, "/lt/joint_states", qos_profile_sensor_data)
        deadline = time.monotonic() + 15.0
        q = 0.5
        while time.monotonic() < deadline and not any(t.child_frame_id == "lt/link B" for t in got):
            msg = JointState(name=["joint A", "joint B"], position=[q, 0.0])
            msg.header.stamp = self.node.get_clock().now().to_msg()
            pub.publish(msg)
            rclpy.spin_once(self.node, timeout_sec=0.1)
        link_b = [t for t in got if t.child_frame_id == "lt/link B"]
        self.assertTrue(link_b, "no /tf for lt/link B")
        r = link_b[-1].transform.rotation
        self.assertAlmostEqual(r.y, math.sin(q / 2), places=9)
        self.assertAlmostEqual(r.w, math.cos(q / 2), places=9)


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info) -> None:  # type: ignore[no-untyped-def]
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0, -2, -15])
