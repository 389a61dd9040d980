"""The state_publisher's per-message kinematics (ros/publisher_pose.py) against kinematics.joint_pose7 with
KDL's quaternion signs applied afterwards (messages.kdl_quaternion_signs), over random configurations inside
and outside the joint limits: the signs folded into the constants per joint range must never show."""

from __future__ import annotations

import numpy as np
import pytest
from real_robots import romeo_urdf
from repo_paths import REPO_ROOT
from tie_models import TIES

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
    out = [("chain", CHAIN), ("mimic", CHAIN.replace('<mimic joint="jc" multiplier="0.5"/>',
                                                     '<mimic joint="jb" multiplier="0.5"/>')),
           ("arm7_gripper", (SAMPLES / "arm7_gripper.urdf").read_text())]
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


@pytest.mark.parametrize("name,text", _models(), ids=[n for n, _ in _models()])
def test_hot_path_tf_writer_gives_the_general_paths_bytes(name: str, text: str) -> None:
    _hot_path_gives_the_general_paths_bytes(name, text)


def test_hot_path_gives_the_general_paths_bytes_where_kdl_rounds_ties() -> None:
    # every path redoes KDL's arithmetic on the same rows (ros/kdl_ties.py): the same bytes again
    _hot_path_gives_the_general_paths_bytes("ties", TIES)


def _hot_path_gives_the_general_paths_bytes(name: str, text: str) -> None:
    # the 1 kHz path writes only the moving numbers of the joints a message names into its prepared buffer
    # (ros/publisher_pose.TfWriter); the general path encodes every number from joint_pose7 afresh
    rclpy_serialization = pytest.importorskip("rclpy.serialization")
    from sensor_msgs.msg import JointState

    from robot_state_format.ros.publisher_hot import MISS
    from robot_state_format.ros.publisher_wire import JointStateReader

    model = load_model(text)
    a = Runtime(LoadedDescription(text, model, name), "", 0, True)
    b = Runtime(LoadedDescription(text, model, name), "", 0, True)
    moving = list(a.tree.moving_joint_names)
    rng = np.random.default_rng(5)
    lists = [moving, moving[::-1], moving[: max(1, len(moving) // 3)], moving[len(moving) // 2:]]
    reader = JointStateReader()
    stamp = 1_700_000_000 * 10**9
    hot = limited = 0
    for k in range(240):
        names = lists[k % len(lists)]
        span = 0.6 if k % 3 == 0 else 2.6 if k % 3 == 1 else 4.0  # inside, near and past the limits
        values = rng.uniform(-span, span, len(names))
        stamp += 1_000_000
        general = a.apply(names, values, np.array([]), np.array([]), stamp, stamp)
        want = general.tf
        msg = JointState(name=names, position=values.tolist())
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
        d = reader.read(rclpy_serialization.serialize_message(msg))
        assert d is not None
        got = b.hot.apply(d, stamp)
        assert got is not MISS and got is not None
        hot += any(h is not None and h.writer is not None for h in b.hot._plans.values())
        assert bytes(got) == want, f"{name} message {k}"  # type: ignore[arg-type]
        assert b.hot.problems == general.update.problems, f"{name} message {k}"  # the same lines (limits)
        limited += any(p.key.startswith("limits") for p in general.update.problems)
    # every message went through a TfWriter, unless a mimic chain leaves Pose7 without its one affine gather
    assert hot == (240 if b._pose7._affine is not None else 0)
    assert limited > 0  # some messages past the limits (each warned, its values used)
