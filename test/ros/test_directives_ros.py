"""``state_publisher model_file:=scene.dmd.yaml`` over DDS: TF and world_state of a Drake Model
Directives scene (an arm welded onto a frame, a free pendulum), compared with forward kinematics."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from repo_paths import REPO_ROOT

pytest.importorskip("rclpy", reason="rclpy (the ROS 2 Python client) is not installed")

from builtin_interfaces.msg import Time
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from ros_harness import RosHarness
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage

from robot_state_format.kinematics import fk
from robot_state_format.kinematics.tree import compile_model
from robot_state_format.model.frames import frame_poses_in_root
from robot_state_format.model.loader import load_model_file
from robot_state_format.spatial import quaternion_to_matrix
from robot_state_format.usdf.reader import read_world_state

SAMPLES = REPO_ROOT / "robot_state_format" / "samples"
S = 1_000_000_000
TF_QOS = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)


@pytest.fixture(scope="module")
def rig(ros_context: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RosHarness, list[Any], Any, Path]]:
    tmp = tmp_path_factory.mktemp("dmd_ros")
    scene = tmp / "scene.dmd.yaml"
    scene.write_text(f"""directives:
- add_frame:
    name: mount
    X_PF: {{base_frame: world, translation: [0.2, 0, 0.7], rotation: !Rpy {{deg: [0, 0, 90]}}}}
- add_model: {{name: arm, file: "file://{SAMPLES / 'arm7_gripper.urdf'}"}}
- add_weld: {{parent: mount, child: arm::base_link}}
""", encoding="utf-8")
    ros = RosHarness(ros_context, tmp)
    tf: list[Any] = []
    ros.node.create_subscription(TFMessage, "/tf", lambda m: tf.extend(m.transforms), TF_QOS)
    try:
        ros.start_node("state_publisher", {"model_file": str(scene), "publish_frequency": 0.0, "frame_prefix": "s/"},
                       ros_args=["-r", "__ns:=/s"], name="s")
        pub = ros.node.create_publisher(JointState, "/s/joint_states", qos_profile_sensor_data)
        ros.wait_for_matched(pub, timeout=60.0)
        ros.wait_for_publisher("/s/world_state", timeout=60.0)
        yield ros, tf, pub, scene
    finally:
        ros.close()


def test_scene_tf_and_world_state_match_the_kinematics(rig: tuple[RosHarness, list[Any], Any, Path]) -> None:
    ros, tf, pub, scene = rig
    model = load_model_file(scene)
    names = [j.name for j in model.moving_joints() if not j.mimic]
    q = {n: 0.1 * (i + 1) for i, n in enumerate(names) if "finger" not in n}
    q["arm::finger_left_joint"] = 0.01
    base = (int(time.time()) - 500) * S

    def sent(t_ns: int) -> list[Any]:
        return [x for x in tf if x.child_frame_id == "s/arm::link4" and x.header.stamp.sec * S + x.header.stamp.nanosec == t_ns]

    k = 0

    def resend() -> None:
        nonlocal k
        k += 1
        msg = JointState()
        msg.header.stamp = Time(sec=(base + k) // S, nanosec=(base + k) % S)
        msg.name = list(q)
        msg.position = [float(v) for v in q.values()]
        pub.publish(msg)

    ros.spin_until(lambda: bool(sent(base + k)), 60.0, "/tf of the scene", every=resend, every_period=0.5)
    x = sent(base + k)[0]
    assert x.header.frame_id == "s/arm::link3"
    # the expected link3 -> link4 transform, from the Model's forward kinematics (pydrake agrees with it:
    # test_directives_drake.py)
    tree = compile_model(model)
    vec, _ = tree.resolve_mapping(q)
    poses = fk.forward(tree, vec)
    link = {n: poses[i] for i, n in enumerate(tree.link_names)}
    rel = np.linalg.inv(link["arm::link3"]) @ link["arm::link4"]
    tr, ro = x.transform.translation, x.transform.rotation
    np.testing.assert_allclose([tr.x, tr.y, tr.z], rel[:3, 3], atol=1e-9, rtol=0)
    np.testing.assert_allclose(quaternion_to_matrix((ro.x, ro.y, ro.z, ro.w)), rel[:3, :3], atol=1e-9, rtol=0)
    ws_msgs = ros.collect("/s/world_state", String, LATCHED, count=1)
    ws = read_world_state(ws_msgs[0].data).state
    arm = ws.model("arm")
    assert arm is not None
    world = frame_poses_in_root(model, link)
    np.testing.assert_allclose(arm.pose[:3], world["\0model:arm"][:3, 3], atol=1e-9, rtol=0)
