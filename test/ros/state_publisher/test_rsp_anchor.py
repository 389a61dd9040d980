"""The state_publisher against the real C++ robot_state_publisher, when it is built (never built here).

``.ci/run`` (``python bench/rsp_anchor.py build``) and bench/bench_vs_rsp.py build it with the shared script
into ``../rsp_cpp`` beside the clone (or ``RSF_RSP_CPP``); without it these tests skip and say so. Both nodes
run at once, each in its own namespace with its own ``frame_prefix``; the same JointStates go to both.

* TF: every /tf transform of several configurations (inside the limits, past 120 degrees, outside the
  limits) and every /tf_static transform of ours equals the C++ node's to 1e-9, component by component
  (quaternion signs included), on arm7_gripper, romeo, a model with mimic chains and turned origins, and one
  whose signs KDL decides by rounding (tie_models.py: go1's and tiago_dual's joints);
* ``publish_frequency``: the hand-derived sequence of test_state_publisher_throttle.py gives the same
  transforms from both nodes (default 20 Hz);
* axes that are not unit vectors give the same transforms; planar and floating joints differ as
  docs/state_publisher.md says (the C++ node sends a planar joint's child at the joint origin on /tf_static
  and nothing for a floating joint; ours sends both on /tf once JointStates name their sub-joints).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from repo_paths import REPO_ROOT

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

ROOT = REPO_ROOT
sys.path.insert(0, str(ROOT / "bench"))

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data  # noqa: E402
from ros_harness import RosHarness  # noqa: E402
from rsp_anchor import find_anchor, our_command, start  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from test_state_publisher_pose import CHAIN  # noqa: E402
from test_state_publisher_throttle import SEQUENCE_20HZ  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402
from tie_models import TIES  # noqa: E402

ANCHOR, WHY = find_anchor()
pytestmark = pytest.mark.skipif(ANCHOR is None, reason=f"the C++ robot_state_publisher anchor: {WHY}")

S = 1_000_000_000
MS = 1_000_000
SAMPLES = ROOT / "robot_state_format" / "samples"
TF_QOS = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
STATIC_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)


def _models() -> list[tuple[str, str]]:
    out = [("arm7", (SAMPLES / "arm7_gripper.urdf").read_text()), ("chain", CHAIN), ("ties", TIES)]
    from real_robots import romeo_urdf

    p = romeo_urdf()
    if p is not None:
        out.append(("romeo", p.read_text()))
    return out


class Pair:
    """Both nodes on one model, a JointState publisher each, and everything received on /tf and /tf_static."""

    def __init__(self, ros: RosHarness, name: str, text: str, params: dict[str, Any]) -> None:
        from robot_state_format.kinematics.tree import compile_model
        from robot_state_format.model.loader import load_model

        assert ANCHOR is not None
        self.ros = ros
        self.names = list(compile_model(load_model(text)).moving_joint_names)
        self.tf: list[Any] = []
        self.static: dict[str, Any] = {}
        ros.node.create_subscription(TFMessage, "/tf", lambda m: self.tf.extend(m.transforms), TF_QOS)
        ros.node.create_subscription(TFMessage, "/tf_static", self._on_static, STATIC_QOS)
        self.pubs = {}
        for side, cmd, env in (("cpp", ANCHOR.command(), ANCHOR.env), ("ours", our_command(), None)):
            p = {"robot_description": text, "frame_prefix": f"{name}_{side}/", **params}
            if side == "ours":
                p["snapshot_frequency"] = 0.0
            start(ros, cmd, p, ["-r", f"__ns:=/{name}_{side}"], f"{name}-{side}", env)
            self.pubs[side] = ros.node.create_publisher(JointState, f"/{name}_{side}/joint_states",
                                                        qos_profile_sensor_data)
        self.prefix = {side: f"{name}_{side}/" for side in self.pubs}
        for pub in self.pubs.values():
            ros.wait_for_matched(pub, timeout=60.0)

    def _on_static(self, msg: Any) -> None:
        for t in msg.transforms:
            self.static[t.child_frame_id] = t

    def send(self, names: list[str], values: list[float], stamp: int) -> None:
        msg = JointState(name=names, position=[float(v) for v in values])
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, S)
        for pub in self.pubs.values():
            pub.publish(msg)

    def at(self, side: str, stamp: int) -> dict[str, Any]:
        pre = self.prefix[side]
        return {t.child_frame_id[len(pre):]: t for t in self.tf
                if t.child_frame_id.startswith(pre) and t.header.stamp.sec * S + t.header.stamp.nanosec == stamp}

    def wait(self, stamp: int, count: int) -> None:
        self.ros.spin_until(lambda: all(len(self.at(s, stamp)) >= count for s in self.pubs), 30.0,
                            f"/tf at {stamp} from both nodes")


def _numbers(t: Any) -> np.ndarray:
    tr, ro = t.transform.translation, t.transform.rotation
    return np.array([tr.x, tr.y, tr.z, ro.x, ro.y, ro.z, ro.w])


@pytest.fixture
def harness(ros_context: Any, tmp_path: Path) -> Iterator[RosHarness]:
    ros = RosHarness(ros_context, tmp_path)
    try:
        yield ros
    finally:
        ros.close()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name,text", _models(), ids=[n for n, _ in _models()])
def test_tf_equals_the_cpp_node(harness: RosHarness, name: str, text: str) -> None:
    pair = Pair(harness, name, text, {"ignore_timestamp": True})
    rng = np.random.default_rng(5)
    base = (int(time.time()) - 100) * S
    n = len(pair.names)
    configs = [np.full(n, 0.2), rng.uniform(-1, 1, n), rng.uniform(-2.8, 2.8, n), rng.uniform(-4, 4, n)]
    # the first message until both answer (the subscriptions may still be matching), then one per configuration
    first = base
    harness.spin_until(lambda: all(pair.at(s, first) for s in pair.pubs), 60.0, "a first /tf from both",
                       every=lambda: pair.send(pair.names, configs[0], first), every_period=0.5)
    for k, q in enumerate(configs[1:], 1):
        pair.send(pair.names, q, base + k * MS)
        harness.spin_for(0.05)
    worst = 0.0
    for k in range(len(configs)):
        stamp = base + k * MS
        pair.wait(stamp, 1)
        harness.spin_for(0.1)
        cpp, ours = pair.at("cpp", stamp), pair.at("ours", stamp)
        assert set(ours) == set(cpp), (k, sorted(set(ours) ^ set(cpp)))
        for child in cpp:
            assert ours[child].header.frame_id[len(pair.prefix["ours"]):] == \
                cpp[child].header.frame_id[len(pair.prefix["cpp"]):]
            np.testing.assert_allclose(_numbers(ours[child]), _numbers(cpp[child]), rtol=0, atol=1e-9,
                                       err_msg=f"{name} configuration {k}: {child}")
            worst = max(worst, float(np.abs(_numbers(ours[child]) - _numbers(cpp[child])).max()))
    statics = {side: {c[len(pair.prefix[side]):]: t for c, t in pair.static.items() if c.startswith(pair.prefix[side])}
               for side in pair.pubs}
    assert set(statics["ours"]) == set(statics["cpp"])
    for child, t in statics["cpp"].items():
        np.testing.assert_allclose(_numbers(statics["ours"][child]), _numbers(t), rtol=0, atol=1e-9,
                                   err_msg=f"{name} /tf_static {child}")
    print(f"{name}: {len(configs)} configurations, max |difference| {worst:.2g}")


@pytest.mark.timeout(300)
def test_publish_frequency_rule_as_the_cpp_node(harness: RosHarness) -> None:
    from test_state_publisher_throttle import URDF

    pair = Pair(harness, "thr", URDF, {})  # default publish_frequency: 20 Hz
    base = (int(time.time()) - 200) * S
    # a warm-up stamp far from the sequence (both nodes publish it: nothing sent yet), until both answer
    harness.spin_until(lambda: all(pair.at(s, base) for s in pair.pubs), 60.0, "a first /tf from both",
                       every=lambda: pair.send(["ja", "jb"], [0.0, 0.0], base), every_period=0.5)
    t0 = base + 10 * S
    for k, (ms, names, _) in enumerate(SEQUENCE_20HZ):
        pair.send(names, [0.1 * (k + 1)] * len(names), t0 + ms * MS)
        harness.spin_for(0.05)  # the joint_states queues are SensorDataQoS (keep last 5): no bursts
    harness.spin_for(0.5)
    for side in pair.pubs:
        got = [sorted(pair.at(side, t0 + ms * MS)) for ms in sorted({ms for ms, _, _ in SEQUENCE_20HZ})]
        want = []
        for ms in sorted({ms for ms, _, _ in SEQUENCE_20HZ}):
            want.append(sorted({c for m, _, children in SEQUENCE_20HZ if m == ms for c in children}))
        assert got == want, side


MULTI_DOF = """<robot name="multi_dof">
  <link name="world"/><link name="body"/><link name="cart"/><link name="arm"/><link name="tip"/><link name="slide"/>
  <joint name="float_j" type="floating"><parent link="world"/><child link="body"/>
    <origin xyz="1 2 3" rpy="0.1 0.2 0.3"/></joint>
  <joint name="planar_j" type="planar"><parent link="body"/><child link="cart"/>
    <origin xyz="0 0 0.5"/><axis xyz="0 0 1"/></joint>
  <joint name="rev" type="revolute"><parent link="cart"/><child link="arm"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 0 2"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="cont" type="continuous"><parent link="arm"/><child link="tip"/><origin xyz="0.1 0 0"/>
    <axis xyz="1 1 0"/></joint>
  <joint name="pri" type="prismatic"><parent link="arm"/><child link="slide"/><origin xyz="0.1 0 0"/>
    <axis xyz="0 3 4"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""


@pytest.mark.timeout(300)
def test_axes_and_multi_dof_joints_against_the_cpp_node(harness: RosHarness) -> None:
    pair = Pair(harness, "mdof", MULTI_DOF, {"ignore_timestamp": True})
    base = (int(time.time()) - 300) * S
    names = ["rev", "cont", "pri"]
    harness.spin_until(lambda: all(pair.at(s, base) for s in pair.pubs), 60.0, "a first /tf from both",
                       every=lambda: pair.send(names, [0.5, 0.7, 0.3], base), every_period=0.5)
    harness.spin_for(0.3)
    cpp, ours = pair.at("cpp", base), pair.at("ours", base)
    assert set(cpp) == set(ours) == {"arm", "tip", "slide"}
    # by hand: a half-angle h about the unit axis; a prismatic joint moves 0.3 along (0, 0.6, 0.8)
    h = 0.25
    want = {"arm": [0, 0, 0.1, 0, 0, np.sin(h), np.cos(h)],
            "tip": [0.1, 0, 0, np.sin(0.35) / np.sqrt(2), np.sin(0.35) / np.sqrt(2), 0, np.cos(0.35)],
            "slide": [0.1, 0.18, 0.24, 0, 0, 0, 1]}
    for child, numbers in want.items():
        np.testing.assert_allclose(_numbers(cpp[child]), numbers, rtol=0, atol=1e-12, err_msg=child)
        np.testing.assert_allclose(_numbers(ours[child]), _numbers(cpp[child]), rtol=0, atol=1e-12, err_msg=child)
    statics = {side: {c[len(pair.prefix[side]):]: t for c, t in pair.static.items() if c.startswith(pair.prefix[side])}
               for side in pair.pubs}
    # the C++ node (kdl_parser) turns the planar joint into a fixed one at its origin, skips the floating one
    assert set(statics["cpp"]) == {"cart"}
    np.testing.assert_allclose(_numbers(statics["cpp"]["cart"]), [0, 0, 0.5, 0, 0, 0, 1], rtol=0, atol=1e-12)
    assert statics["ours"] == {}  # ours: moving joints without a value yet, so nothing is sent for them
    # ours moves them from their sub-joints (MoveIt's names); the C++ node ignores those names
    sub = ["planar_j/x", "planar_j/y", "planar_j/theta", "float_j/trans_x", "float_j/trans_y", "float_j/trans_z",
           "float_j/rot_x", "float_j/rot_y", "float_j/rot_z", "float_j/rot_w"]
    c, s_ = np.cos(0.3), np.sin(0.3)
    quat = [0.0, s_, 0.0, c]  # 0.6 rad about y
    stamp = base + MS
    pair.send(sub, [0.4, -0.2, 0.6, 0.5, 0.6, 0.7, *quat], stamp)
    harness.spin_until(lambda: len(pair.at("ours", stamp)) >= 2, 30.0, "the multi-DOF joints' /tf from ours")
    harness.spin_for(0.3)
    got = pair.at("ours", stamp)
    assert set(got) == {"body", "cart"}
    # the planar joint: x, y in the plane normal to its axis (z), theta about it, after its origin
    np.testing.assert_allclose(_numbers(got["cart"]), [0.4, -0.2, 0.5, 0, 0, np.sin(0.3), np.cos(0.3)], rtol=0,
                               atol=1e-12)
    # the floating joint: its origin, then its translation, then its rotation (4x4 matrices, by hand)
    def rot(axis: int, a: float) -> np.ndarray:
        m = np.eye(3)
        i, j = [(1, 2), (2, 0), (0, 1)][axis]
        m[i, i], m[i, j], m[j, i], m[j, j] = np.cos(a), -np.sin(a), np.sin(a), np.cos(a)
        return m

    def pose(r: np.ndarray, t: Any) -> np.ndarray:
        m = np.eye(4)
        m[:3, :3], m[:3, 3] = r, t
        return m

    def of_quaternion(x: float, y: float, z: float, w: float) -> np.ndarray:
        return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                         [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                         [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])

    expect = (pose(rot(2, 0.3) @ rot(1, 0.2) @ rot(0, 0.1), (1, 2, 3)) @ pose(np.eye(3), (0.5, 0.6, 0.7))
              @ pose(rot(1, 0.6), (0, 0, 0)))
    v = _numbers(got["body"])
    np.testing.assert_allclose(pose(of_quaternion(*v[3:]), v[:3]), expect, rtol=0, atol=1e-12)
    assert not pair.at("cpp", stamp)  # none of the names is a joint of the C++ node's model


@pytest.mark.timeout(300)
def test_mimic_followers_named_in_a_message_as_documented(harness: RosHarness) -> None:
    pair = Pair(harness, "mim", CHAIN, {"ignore_timestamp": True})  # jc = -2 jb + 0.4, jd = 0.5 jc
    base = (int(time.time()) - 400) * S
    harness.spin_until(lambda: all(pair.at(s, base) for s in pair.pubs), 60.0, "a first /tf from both",
                       every=lambda: pair.send(pair.names, [0.3] * len(pair.names), base), every_period=0.5)

    def angle_about_y(t: Any) -> float:  # jd turns about y from an origin without rotation
        r = t.transform.rotation
        return 2.0 * math.atan2(r.y, r.w)

    # followers named at the values their leaders imply (joint_state_publisher's): the same transforms
    consistent = base + MS
    pair.send(["jb", "jc", "jd"], [0.1, -2 * 0.1 + 0.4, 0.5 * (-2 * 0.1 + 0.4)], consistent)
    pair.wait(consistent, 3)
    harness.spin_for(0.2)
    cpp, ours = pair.at("cpp", consistent), pair.at("ours", consistent)
    assert set(cpp) == set(ours) == {"b", "c", "d"}
    for child in cpp:
        np.testing.assert_allclose(_numbers(ours[child]), _numbers(cpp[child]), rtol=0, atol=1e-12, err_msg=child)
    # a follower named with a value of its own: the C++ node sends it (and its follower) from that value, ours
    # from the leader (0.1 above): jd at 0.5 * 0.7 there, at 0.5 * (-2 * 0.1 + 0.4) here
    own = base + 2 * MS
    pair.send(["jc"], [0.7], own)
    pair.wait(own, 2)
    harness.spin_for(0.2)
    cpp, ours = pair.at("cpp", own), pair.at("ours", own)
    assert set(cpp) == set(ours) == {"c", "d"}
    assert abs(angle_about_y(cpp["d"]) - 0.35) < 1e-12
    assert abs(angle_about_y(ours["d"]) - 0.1) < 1e-12
