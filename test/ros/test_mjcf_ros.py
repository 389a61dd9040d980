"""state_publisher on an MJCF model over real DDS: its TF is MuJoCo's kinematics.

The sample arm with a second joint in one body (so a virtual link ``upper/shoulder`` sits in the TF
tree): a JointState of MuJoCo's ``qpos`` goes in; composing ``/tf`` and ``/tf_static`` from ``world``
gives every body where ``mj_kinematics`` puts it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from repo_paths import REPO_ROOT

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")
mujoco = pytest.importorskip("mujoco", reason="mujoco (requirements/test.txt) is the reference of MJCF poses")

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from ros_harness import RosHarness  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from robot_state_format.spatial import quaternion_to_matrix  # noqa: E402

SAMPLE = REPO_ROOT / "robot_state_format" / "samples" / "arm2_site.xml"
RELIABLE = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
STATIC = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                    durability=DurabilityPolicy.TRANSIENT_LOCAL)


def _matrix(t: Any) -> np.ndarray:
    x = np.eye(4)
    r, p = t.transform.rotation, t.transform.translation
    x[:3, :3] = quaternion_to_matrix((r.x, r.y, r.z, r.w))
    x[:3, 3] = (p.x, p.y, p.z)
    return x


def test_tf_of_an_mjcf_model_is_mujocos(ros: RosHarness, tmp_path: Path) -> None:
    model = tmp_path / "arm2_lift.xml"
    model.write_text(SAMPLE.read_text().replace(
        '<joint name="shoulder" range="-120 120"/>',
        '<joint name="shoulder" range="-120 120"/><joint name="lift" axis="0 1 0" pos="0.1 0 0" ref="10"/>'))
    edges: dict[str, tuple[str, np.ndarray]] = {}

    def keep(msg: TFMessage) -> None:
        for t in msg.transforms:
            edges[t.child_frame_id] = (t.header.frame_id, _matrix(t))

    ros.node.create_subscription(TFMessage, "/tf", keep, RELIABLE)
    ros.node.create_subscription(TFMessage, "/tf_static", keep, STATIC)
    pub = ros.node.create_publisher(JointState, "/joint_states", RELIABLE)
    ros.start_node("state_publisher", {"model_file": str(model), "joint_states_qos": "reliable"}, name="publisher")
    ros.wait_for_matched(pub, timeout=60.0)

    m = mujoco.MjModel.from_xml_path(str(model))
    d = mujoco.MjData(m)
    qpos = {"shoulder": 0.7, "lift": -0.4, "elbow": 1.1}
    for name, value in qpos.items():
        d.qpos[m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)]] = value
    mujoco.mj_kinematics(m, d)
    msg = JointState(name=list(qpos), position=list(qpos.values()))
    msg.header.stamp.sec = int(time.time())

    def world(frame: str) -> np.ndarray | None:
        x = np.eye(4)
        while frame != "world":
            if frame not in edges:
                return None
            frame, step = edges[frame][0], edges[frame][1] @ x
            x = step
        return x

    bodies = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(1, m.nbody)]
    ros.spin_until(lambda: all(world(b) is not None for b in bodies) and "upper/shoulder" in edges,
                   timeout=60.0, what="TF of every body", every=lambda: pub.publish(msg), every_period=0.5)
    for b, name in enumerate(bodies, start=1):
        x = world(name)
        assert x is not None
        np.testing.assert_allclose(x[:3, 3], d.xpos[b], atol=1e-9, rtol=0)
        np.testing.assert_allclose(x[:3, :3], d.xmat[b].reshape(3, 3), atol=1e-9, rtol=0)
