"""The state_publisher's per-message kinematics (ros/publisher_pose.py) against kinematics.joint_pose7 with
KDL's quaternion signs applied afterwards (messages.kdl_quaternion_signs), over random configurations inside
and outside the joint limits: the signs folded into the constants per joint range must never show."""

from __future__ import annotations

import numpy as np
import pytest
from real_robots import romeo_urdf
from repo_paths import REPO_ROOT

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from robot_state_format.kinematics.joint_quaternions import joint_pose7
from robot_state_format.model.loader import load_model
from robot_state_format.ros.description import LoadedDescription
from robot_state_format.ros.messages import kdl_quaternion_signs
from robot_state_format.ros.publisher_runtime import Runtime

SAMPLES = REPO_ROOT / "robot_state_format" / "samples"
LIM = '<limit lower="-2.5" upper="2.8" effort="1" velocity="1"/>'
CHAIN = f"""<robot name="chain">
 <link name="base"/><link name="a"/><link name="b"/><link name="c"/><link name="d"/><link name="e"/>
 <joint name="ja" type="revolute"><parent link="base"/><child link="a"/><origin rpy="3.14159265 0 0.3"/>
   <axis xyz="0 0 1"/>{LIM}</joint>
 <joint name="jb" type="continuous"><parent link="a"/><child link="b"/><origin xyz="0 0 1" rpy="1.5707963 0 0"/>
   <axis xyz="0 1 1"/></joint>
 <joint name="jc" type="revolute"><parent link="b"/><child link="c"/><origin rpy="0 2.5 0"/><axis xyz="1 0 0"/>
   <mimic joint="jb" multiplier="-2" offset="0.4"/>{LIM}</joint>
 <joint name="jd" type="revolute"><parent link="c"/><child link="d"/><axis xyz="0 1 0"/>
   <mimic joint="jc" multiplier="0.5"/>{LIM}</joint>
 <joint name="je" type="prismatic"><parent link="d"/><child link="e"/><origin rpy="3.14159265 0 0"/>
   <axis xyz="1 0 0"/>{LIM}</joint>
</robot>"""


def _models() -> list[tuple[str, str]]:
    out = [("chain", CHAIN), ("arm7_gripper", (SAMPLES / "arm7_gripper.urdf").read_text())]
    p = romeo_urdf()  # None without example-robot-data (then romeo is not among the cases)
    if p is not None:
        out.append(("romeo", p.read_text()))
    return out


@pytest.mark.parametrize("name,text", _models(), ids=[n for n, _ in _models()])
def test_pose7_equals_joint_pose7_with_kdl_signs(name: str, text: str) -> None:
    model = load_model(text)
    rt = Runtime(LoadedDescription(text, model, name), "", 0, True)
    tree = rt.tree
    rng = np.random.default_rng(11)
    for k in range(300):
        span = 0.6 if k % 3 == 0 else 2.6 if k % 3 == 1 else 4.0  # inside, near and past the limits
        q = rng.uniform(-span, span, tree.nq)
        rt.cache.q[:] = q
        got = rt.joint_pose7().copy()
        want = joint_pose7(tree, q)
        kdl_quaternion_signs(want[:, 3:])
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-14, err_msg=f"{name} configuration {k}")
