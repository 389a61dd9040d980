"""launch_testing: state_sharing.launch.py starts state_publisher and state_store; a restart file saved
through the store's service holds the joint states sent to the publisher.

Skipped where launch_testing is missing (no ROS 2 distro and no tool sources for ./run setup).
"""

from __future__ import annotations

import tempfile
import time
import unittest
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT
from ros_tools import require

require("launch", "launch_testing", "launch_ros")

import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
import rclpy  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from std_srvs.srv import Trigger  # noqa: E402

import launch  # noqa: E402
from robot_state_format.usdf.reader import read_world_state, read_world_state_file  # noqa: E402

ROOT = REPO_ROOT
SAMPLE = str(ROOT / "robot_state_format" / "samples" / "double_pendulum.urdf")
OUT = tempfile.mkdtemp(prefix="state_sharing_")


@pytest.mark.launch_test
def generate_test_description():  # type: ignore[no-untyped-def]
    include = launch.actions.IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(ROOT / "launch" / "state_sharing.launch.py")),
        launch_arguments={"model": SAMPLE, "namespace": "share", "output_dir": OUT}.items())
    return launch.LaunchDescription([include, launch_testing.actions.ReadyToTest()])


class TestStateSharingLaunch(unittest.TestCase):
    def test_both_nodes_up_and_save_writes_the_published_state(self) -> None:
        rclpy.init()
        node = rclpy.create_node("launch_test_sharing")
        try:
            got: list = []
            qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
            node.create_subscription(String, "/share/world_state", got.append, qos)
            deadline = time.monotonic() + 15.0
            names: set = set()
            while time.monotonic() < deadline and not {"state_publisher", "state_store"} <= names:
                rclpy.spin_once(node, timeout_sec=0.1)
                names = set(node.get_node_names())
            self.assertLessEqual({"state_publisher", "state_store"}, names)
            # only measured state is shared: no world_state before a JointState reported every joint
            for _ in range(10):
                rclpy.spin_once(node, timeout_sec=0.1)
            self.assertEqual(got, [], "a world_state before any JointState")

            # joint states in -> the publisher's world_state -> the store's latest -> save through the service
            q = (0.375, -1.25)
            pub = node.create_publisher(JointState, "/share/joint_states", qos_profile_sensor_data)
            client = node.create_client(Trigger, "/share/state_store/save")
            self.assertTrue(client.wait_for_service(timeout_sec=15.0), "no /share/state_store/save service")

            def has_q(text: str) -> bool:
                joints = {j.name: j.positions for j in read_world_state(text).state.model_states[0].joint_states}
                return joints.get("joint A") == (q[0],) and joints.get("joint B") == (q[1],)

            deadline = time.monotonic() + 15.0
            while time.monotonic() < deadline and not (got and has_q(got[-1].data)):
                msg = JointState(name=["joint A", "joint B"], position=list(q))
                msg.header.stamp = node.get_clock().now().to_msg()
                pub.publish(msg)
                rclpy.spin_once(node, timeout_sec=0.1)
            self.assertTrue(got and has_q(got[-1].data), "world_state never showed the joint states sent")
            response = None
            for _ in range(50):  # the store may not have the newest snapshot yet: retry until it has
                future = client.call_async(Trigger.Request())
                rclpy.spin_until_future_complete(node, future, timeout_sec=10.0)
                response = future.result()
                self.assertIsNotNone(response, "save: no answer")
                if response.success and has_q(Path(response.message).read_text()):
                    break
                rclpy.spin_once(node, timeout_sec=0.1)
            assert response is not None
            self.assertTrue(response.success, response.message)
            saved = Path(response.message)
            self.assertEqual(saved.parent, Path(OUT).resolve())
            state = read_world_state_file(saved).state
            self.assertEqual(state.model_states[0].name, "linkage")
            joints = {j.name: j.positions for j in state.model_states[0].joint_states}
            self.assertEqual(joints, {"joint A": (q[0],), "joint B": (q[1],)})
        finally:
            node.destroy_node()
            rclpy.shutdown()


@launch_testing.post_shutdown_test()
class TestShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info) -> None:  # type: ignore[no-untyped-def]
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0, -2, -15])
