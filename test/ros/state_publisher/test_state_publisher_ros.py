"""state_publisher over real DDS: node processes started by the harness, checked by an in-process listener.

All node processes start once for the module, each in its own namespace with its own frame_prefix so
their frames never mix on the shared /tf and /tf_static.  Expected transforms are derived by hand
from the sample files (rotation about y by q: quaternion (0, sin q/2, 0, cos q/2)).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from repo_paths import REPO_ROOT

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from builtin_interfaces.msg import Time  # noqa: E402
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data  # noqa: E402
from ros_harness import RosHarness  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

SAMPLES = REPO_ROOT / "robot_state_format" / "samples"
S = 1_000_000_000
MS = 1_000_000
START_TIMEOUT = 60.0  # s, for the node processes of the module's rig to come up (see Rig.ready)
LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
TF_QOS = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
STATIC_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)

LIM = '<limit lower="-3" upper="3" effort="1" velocity="1"/>'
MIMIC_URDF = f"""<robot name="mimicry">
 <link name="base"/><link name="a"/><link name="b"/><link name="c"/>
 <joint name="ja" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 1 0"/>{LIM}</joint>
 <joint name="jb" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 1"/><axis xyz="0 1 0"/>
   <mimic joint="ja" multiplier="2" offset="0.1"/>{LIM}</joint>
 <joint name="jc" type="prismatic"><parent link="b"/><child link="c"/><axis xyz="1 0 0"/>
   <mimic joint="jb" multiplier="-0.5"/>{LIM}</joint>
</robot>"""


def pendulum(extra: str = "") -> str:
    """The double pendulum sample, optionally with extra fixed links (for the runtime change test)."""
    text = (SAMPLES / "double_pendulum.urdf").read_text()
    return text.replace("</robot>", extra + "</robot>")


CAMERA = ('<link name="camera"/><joint name="cam_mount" type="fixed"><parent link="link A"/>'
          '<child link="camera"/><origin xyz="0.1 0 0.2"/></joint>')
TOOL = ('<link name="tool"/><joint name="tool_mount" type="fixed"><parent link="link C"/>'
        '<child link="tool"/><origin xyz="0 0 -1"/></joint>')


def ry_quat(q: float) -> tuple[float, float, float, float]:
    return (0.0, math.sin(q / 2), 0.0, math.cos(q / 2))


def stamp(ns: int) -> Time:
    return Time(sec=ns // S, nanosec=ns % S)


def ns_of(t: Any) -> int:
    return t.sec * S + t.nanosec


class Rig:
    """The module's harness, node processes, joint-state publishers and a /tf recorder."""

    def __init__(self, ros: RosHarness) -> None:
        self.ros = ros
        self.tf: list[Any] = []  # every TransformStamped received on /tf
        ros.node.create_subscription(TFMessage, "/tf", lambda m: self.tf.extend(m.transforms), TF_QOS)
        self.pubs: dict[str, Any] = {}
        self.procs: dict[str, Any] = {}
        self.base = (int(time.time()) - 1000) * S  # stamps well in the past, distinct per test

    def start(self, ns: str, params: dict[str, Any]) -> None:
        params = {"frame_prefix": f"{ns}/", **params}
        self.procs[ns] = self.ros.start_node("state_publisher", params, ros_args=["-r", f"__ns:=/{ns}"],
                                             name=ns)
        self.pubs[ns] = self.ros.node.create_publisher(JointState, f"/{ns}/joint_states", qos_profile_sensor_data)

    def ready(self, warm: dict[str, tuple[str | None, str | None]]) -> None:
        """Wait until every node is up and, for ``warm[ns] = (joint, child)``, a joint state has made a
        round trip to /tf (all nodes at once: re-sent every 0.5 s until each answered)."""
        for ns in self.procs:
            # eleven node processes start at once on two cores, beside another test worker: allow a minute
            self.ros.wait_for_matched(self.pubs[ns], timeout=START_TIMEOUT)
            self.ros.wait_for_publisher(f"/{ns}/world_state", timeout=START_TIMEOUT)
        pending = {ns: (j, c) for ns, (j, c) in warm.items() if j is not None}

        def done() -> bool:
            for ns, (_, child) in list(pending.items()):
                if self.find(f"{ns}/{child}"):
                    del pending[ns]
            return not pending

        def resend() -> None:
            # a new stamp each time: the node never re-sends a stamp it already sent, and its first
            # answer may have gone out before its /tf publisher had matched this process's subscription
            self.base += MS
            t = self.base
            for ns, (joint, _) in pending.items():
                self.send(ns, [str(joint)], [0.0], t)

        try:
            self.ros.spin_until(done, START_TIMEOUT, "a first /tf from every node", every=resend, every_period=0.5)
        except AssertionError as exc:  # HarnessTimeout: say which nodes never answered
            raise AssertionError(f"no /tf yet from {sorted(pending)}\n{exc}") from None

    def send(self, ns: str, names: list[str], pos: list[float], t_ns: int, vel: list[float] | None = None,
             eff: list[float] | None = None) -> None:
        msg = JointState()
        msg.header.stamp = stamp(t_ns)
        msg.name = names
        msg.position = [float(x) for x in pos]
        msg.velocity = [float(x) for x in vel or []]
        msg.effort = [float(x) for x in eff or []]
        self.pubs[ns].publish(msg)

    def find(self, child: str, t_ns: int | None = None) -> list[Any]:
        return [t for t in self.tf if t.child_frame_id == child and (t_ns is None or ns_of(t.header.stamp) == t_ns)]

    def wait_tf(self, child: str, t_ns: int, timeout: float = 20.0) -> Any:
        self.ros.spin_until(lambda: bool(self.find(child, t_ns)), timeout, f"/tf {child} at {t_ns}")
        return self.find(child, t_ns)[0]

    def output(self, ns: str) -> str:
        return self.procs[ns].output()

    def next_stamp(self) -> int:
        self.base += 10 * S
        return self.base

    def set_params(self, ns: str, **values: Any) -> Any:
        """Set parameters through the node's service; ``results`` of the call."""
        client = self.ros.wait_for_service(f"/{ns}/state_publisher/set_parameters", SetParameters, timeout=20.0)
        req = SetParameters.Request()
        for name, value in values.items():
            pv = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=value) if isinstance(value, str) \
                else ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=float(value))
            req.parameters.append(Parameter(name=name, value=pv))
        return self.ros.call(client, req, timeout=30.0).results


@pytest.fixture(scope="module")
def rig(ros_context: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    ros = RosHarness(ros_context, tmp_path_factory.mktemp("state_publisher"))
    r = Rig(ros)
    try:
        r.start("pend", {"robot_description": pendulum()})
        r.start("sdf", {"model_file": str(SAMPLES / "two_links_orthogonal_1.sdf"), "publish_frequency": 0.0})
        r.start("change", {"robot_description": pendulum(CAMERA), "publish_frequency": 0.0})
        r.start("mimic", {"robot_description": MIMIC_URDF, "publish_frequency": 0.0})
        r.start("ign", {"robot_description": pendulum(), "ignore_timestamp": True})
        r.start("r1", {"robot_description": pendulum(), "publish_frequency": 0.0})
        r.start("r2", {"robot_description": pendulum(), "publish_frequency": 0})  # an integer is accepted
        r.start("pose", {"robot_description": pendulum(), "model_parent_frame": "odom", "snapshot_frequency": 50.0})
        r.start("topic", {"use_robot_description_topic": True, "publish_frequency": 0.0})
        r.start("arm", {"model_file": str(SAMPLES / "arm7_gripper.urdf"), "publish_frequency": 0.0})
        r.start("world", {"model_file": str(SAMPLES / "nested_world.sdf"), "publish_frequency": 0.0})
        warm: dict[str, tuple[str | None, str | None]] = {
            "sdf": ("jointAB", "linkB"), "mimic": ("ja", "a"), "topic": (None, None),
            "arm": ("joint1", "link1"), "world": ("robot::shoulder", "robot::arm::upper")}
        r.ready({ns: warm.get(ns, ("joint A", "link B")) for ns in r.procs})
        yield r
    finally:
        ros.close()


def assert_tf(t: Any, xyz: tuple[float, float, float], quat: tuple[float, float, float, float]) -> None:
    tr, ro = t.transform.translation, t.transform.rotation
    np.testing.assert_allclose([tr.x, tr.y, tr.z], xyz, atol=1e-9, rtol=0)
    np.testing.assert_allclose([ro.x, ro.y, ro.z, ro.w], quat, atol=1e-9, rtol=0)


def test_pendulum_tf_equals_hand_derived(rig: Rig) -> None:
    for qa, qb in ((0.0, 0.0), (0.5, -1.2), (2.0, 3.0)):
        t = rig.next_stamp()
        rig.send("pend", ["joint A", "joint B"], [qa, qb], t)
        a, b = rig.wait_tf("pend/link B", t), rig.wait_tf("pend/link C", t)
        assert a.header.frame_id == "pend/link A" and b.header.frame_id == "pend/link B"
        assert_tf(a, (0, 0, -0.05), ry_quat(qa))
        assert_tf(b, (0, 0, -1), ry_quat(qb))


def test_sdf_tf_and_static_for_a_late_subscriber(rig: Rig) -> None:
    for q in (0.0, 0.7, -1.4):
        t = rig.next_stamp()
        rig.send("sdf", ["jointAB"], [q], t)
        # joint at (0.1, 0, 0) in linkA, child 0.1 above the joint: t = (0.1 + 0.1 sin q, 0, 0.1 cos q)
        assert_tf(rig.wait_tf("sdf/linkB", t), (0.1 + 0.1 * math.sin(q), 0, 0.1 * math.cos(q)), ry_quat(q))
    # the node has run for seconds: a new /tf_static subscriber still gets the fixed joint to the world
    static = rig.ros.collect("/tf_static", TFMessage, STATIC_QOS, count=1,
                             predicate=lambda m: any(t.child_frame_id == "sdf/linkA" for t in m.transforms))
    t = next(t for t in static[0].transforms if t.child_frame_id == "sdf/linkA")
    assert t.header.frame_id == "world"
    assert_tf(t, (0, 0, 0), (0, 0, 0, 1))
    # fixed to the world by its own joint: the snapshot poses the model in the world (identity here)
    from robot_state_format.usdf.reader import read_world_state

    msg = rig.ros.collect("/sdf/world_state", String, LATCHED, count=1)[0]
    ms = read_world_state(msg.data).state.model("two_links_orthogonal_1")
    assert ms is not None and ms.parent is None
    np.testing.assert_allclose(ms.pose, (0, 0, 0, 0, 0, 0), atol=1e-15, rtol=0)


def test_tf_static_reaches_subscriber_started_2s_later(rig: Rig) -> None:
    rig.ros.spin_for(2.0)
    static = rig.ros.collect("/tf_static", TFMessage, STATIC_QOS, count=1,
                             predicate=lambda m: any(t.child_frame_id == "change/camera" for t in m.transforms))
    t = next(t for t in static[0].transforms if t.child_frame_id == "change/camera")
    assert t.header.frame_id == "change/link A"
    assert_tf(t, (0.1, 0, 0.2), (0, 0, 0, 1))


def test_world_state_parses_and_matches_kinematics(rig: Rig) -> None:
    from robot_state_format.spatial import pose6_to_transform, pose_to_transform
    from robot_state_format.usdf.reader import read_world_state

    qa, qb, va, vb = 0.4, -0.9, 0.3, -0.2
    t = rig.next_stamp()
    rig.send("pend", ["joint A", "joint B"], [qa, qb], t, vel=[va, vb], eff=[1.5, -2.5])

    def parsed(m: Any) -> bool:
        ws = read_world_state(m.data).state
        return ws.stamp is not None and ws.stamp.sec * S + ws.stamp.nanosec == t

    msg = rig.ros.collect("/pend/world_state", String, LATCHED, count=1, predicate=parsed)[0]
    ws = read_world_state(msg.data).state
    ms = ws.model("linkage")
    assert ms is not None
    assert ms.pose is None and ms.parent is None  # no TF from world to the root link: pose unknown
    x_b = pose_to_transform((0, 0, -0.05), (0, qa, 0))
    x_c = x_b @ pose_to_transform((0, 0, -1), (0, qb, 0))
    for name, want in (("link A", np.eye(4)), ("link B", x_b), ("link C", x_c)):
        ls = ms.link(name)
        assert ls is not None and ls.pose is not None
        np.testing.assert_allclose(pose6_to_transform(ls.pose), want, atol=1e-9, rtol=0)
    # link C's origin swings about joint A's axis: v = (0, va, 0) x R_y(qa)(0, 0, -1)
    twist_c = ms.link("link C").twist  # type: ignore[union-attr]
    np.testing.assert_allclose(twist_c, [-va * math.cos(qa), 0, va * math.sin(qa), 0, va + vb, 0], atol=1e-9, rtol=0)
    ja = ms.joint("joint A")
    assert ja is not None and ja.positions == (qa,) and ja.velocities == (va,) and ja.torques == (1.5,)
    # a late subscriber gets the latest snapshot (transient_local)
    late = rig.ros.collect("/pend/world_state", String, LATCHED, count=1)[0]
    assert read_world_state(late.data).state.stamp is not None


def test_bad_inputs_never_stop_the_node(rig: Rig) -> None:
    t0 = rig.next_stamp()
    bad = [
        (["joint A", "joint B"], [math.nan, 0.1]),
        (["joint A", "joint B"], [0.1]),  # length mismatch
        (["no such joint"], [1.0]),
        ([], []),  # empty
        (["joint A", "joint B"], [math.inf, -math.inf]),
    ]
    for i, (names, pos) in enumerate(bad):
        rig.send("pend", names, pos, t0 + i * S // 10)
        rig.ros.spin_for(0.05)
    t = t0 + S
    rig.send("pend", ["joint A", "joint B"], [0.25, 0.75], t)
    assert_tf(rig.wait_tf("pend/link B", t), (0, 0, -0.05), ry_quat(0.25))
    assert_tf(rig.wait_tf("pend/link C", t), (0, 0, -1), ry_quat(0.75))
    rig.ros.spin_until(lambda: all(w in rig.output("pend") for w in (
        "non-finite position(s) dropped for joint A", "position has 1 values for 2 names",
        "not in the model ignored: no such joint", "empty JointState")), 10.0, "one warning per bad input")
    assert rig.procs["pend"].alive()


def test_throttle_and_repeated_stamps(rig: Rig) -> None:
    t = rig.next_stamp()  # default publish_frequency 20 Hz: at most one transform per joint per 50 ms
    for dt_ms, q in ((0, 0.1), (0, 0.2), (10, 0.3), (30, 0.4), (60, 0.5), (60, 0.6)):
        rig.send("pend", ["joint A"], [q], t + dt_ms * 1_000_000)
        rig.ros.spin_for(0.05)  # the joint_states queue is SensorDataQoS (keep last 5): no bursts
    rig.wait_tf("pend/link B", t + 60_000_000)
    rig.ros.spin_for(0.3)
    got = sorted((ns_of(x.header.stamp) - t) // 1_000_000 for x in rig.tf
                 if x.child_frame_id == "pend/link B" and 0 <= ns_of(x.header.stamp) - t < S)
    assert got == [0, 60]
    assert_tf(rig.find("pend/link B", t)[0], (0, 0, -0.05), ry_quat(0.1))
    assert_tf(rig.find("pend/link B", t + 60_000_000)[0], (0, 0, -0.05), ry_quat(0.5))


def test_ignore_timestamp_publishes_every_message_with_its_stamp(rig: Rig) -> None:
    # three messages 1 ms apart: under the default 20 Hz throttle only the first would go out
    t = rig.next_stamp()
    for k, q in enumerate((0.1, 0.2, 0.3)):
        rig.send("ign", ["joint A", "joint B"], [q, 0.0], t + k * MS)
        rig.ros.spin_for(0.05)
    for k in range(3):
        rig.wait_tf("ign/link B", t + k * MS)  # each with the message's own stamp (as RSP)
    assert_tf(rig.find("ign/link B", t + 2 * MS)[0], (0, 0, -0.05), ry_quat(0.3))
    # the same stamp again is not re-sent (no TF_REPEATED_DATA)
    rig.send("ign", ["joint A", "joint B"], [0.4, 0.0], t + 2 * MS)
    rig.ros.spin_for(0.3)
    assert len(rig.find("ign/link B", t + 2 * MS)) == 1


def test_mimic_chain_and_leader_in_an_earlier_message(rig: Rig) -> None:
    t = rig.next_stamp()
    rig.send("mimic", ["ja"], [0.3], t)
    # jb = 2 * 0.3 + 0.1 = 0.7 about y, 1 m above a; jc = -0.5 * 0.7 along x
    assert_tf(rig.wait_tf("mimic/b", t), (0, 0, 1), ry_quat(0.7))
    assert_tf(rig.wait_tf("mimic/c", t), (-0.35, 0, 0), (0, 0, 0, 1))
    # a message naming only a follower: its value is ignored, computed from the earlier leader value
    rig.send("mimic", ["jc"], [5.0], t + S)
    assert_tf(rig.wait_tf("mimic/c", t + S), (-0.35, 0, 0), (0, 0, 0, 1))
    assert not rig.find("mimic/a", t + S)


def test_time_jump_backwards_resets_with_one_info_line(rig: Rig) -> None:
    t = rig.next_stamp()
    rig.send("mimic", ["ja"], [0.1], t)
    rig.wait_tf("mimic/a", t)
    back = t - 100 * S
    rig.send("mimic", ["ja"], [0.2], back)
    assert_tf(rig.wait_tf("mimic/a", back), (0, 0, 0), ry_quat(0.2))
    rig.ros.spin_until(lambda: "jumped backwards" in rig.output("mimic"), 10.0, "the reset info line")
    assert rig.output("mimic").count("jumped backwards") == 1


def test_two_robots_side_by_side(rig: Rig) -> None:
    t = rig.next_stamp()
    rig.send("r1", ["joint A", "joint B"], [0.1, 0.2], t)
    rig.send("r2", ["joint A", "joint B"], [-0.3, 0.4], t)
    assert_tf(rig.wait_tf("r1/link B", t), (0, 0, -0.05), ry_quat(0.1))
    assert_tf(rig.wait_tf("r2/link B", t), (0, 0, -0.05), ry_quat(-0.3))
    assert rig.find("r2/link C", t)[0].header.frame_id == "r2/link B"
    desc = rig.ros.collect("/r2/robot_description", String, LATCHED, count=1)[0]
    assert '<robot name = "linkage">' in desc.data


def test_runtime_description_change(rig: Rig) -> None:
    results = rig.set_params("change", robot_description=pendulum(TOOL))
    assert results[0].successful, results[0].reason
    rig.ros.spin_for(0.5)
    static = rig.ros.collect("/tf_static", TFMessage, STATIC_QOS, count=1,
                             predicate=lambda m: any(t.child_frame_id.startswith("change/") for t in m.transforms))
    children = {t.child_frame_id for t in static[0].transforms}
    assert "change/tool" in children and "change/camera" not in children
    tool = next(t for t in static[0].transforms if t.child_frame_id == "change/tool")
    assert tool.header.frame_id == "change/link C"
    assert_tf(tool, (0, 0, -1), (0, 0, 0, 1))

    results = rig.set_params("change", robot_description="<robot name='broken'><link name='a'></robot>")
    assert not results[0].successful and "refused" in results[0].reason
    t = rig.next_stamp()
    rig.send("change", ["joint A", "joint B"], [0.6, -0.6], t)
    assert_tf(rig.wait_tf("change/link C", t), (0, 0, -1), ry_quat(-0.6))
    desc = rig.ros.collect("/change/robot_description", String, LATCHED, count=1)[0]
    assert "tool_mount" in desc.data


def test_model_pose_in_model_parent_frame_from_tf(rig: Rig) -> None:
    from geometry_msgs.msg import TransformStamped

    from robot_state_format.usdf.reader import read_world_state

    pub = rig.ros.node.create_publisher(TFMessage, "/tf", TF_QOS)
    rig.ros.wait_for_matched(pub, count=len(rig.procs))
    t = rig.next_stamp()
    tf = TransformStamped()
    tf.header.stamp = stamp(t)
    tf.header.frame_id = "odom"
    tf.child_frame_id = "pose/link A"  # the root link, frame_prefix applied
    tf.transform.translation.x, tf.transform.translation.y = 1.0, 2.0
    tf.transform.rotation.z, tf.transform.rotation.w = math.sin(0.25), math.cos(0.25)  # yaw 0.5
    rig.send("pose", ["joint A", "joint B"], [0.1, 0.2], t)

    def posed(m: Any) -> bool:
        ms = read_world_state(m.data).state.model("linkage")
        return ms is not None and ms.pose is not None

    msg = rig.ros.collect("/pose/world_state", String, LATCHED, count=1, predicate=posed,
                          every=lambda: pub.publish(TFMessage(transforms=[tf])))[0]
    ms = read_world_state(msg.data).state.model("linkage")
    assert ms is not None and ms.parent == "odom"
    np.testing.assert_allclose(ms.pose, (1, 2, 0, 0, 0, 0.5), atol=1e-12, rtol=0)


def test_rejected_parameter_updates_say_why_and_keep_the_old_value(rig: Rig) -> None:
    res = rig.set_params("pose", publish_frequency=2000.0)
    assert not res[0].successful and res[0].reason
    res = rig.set_params("pose", model_file=str(SAMPLES / "double_pendulum.urdf"))  # description also set
    assert not res[0].successful and "exactly one" in res[0].reason
    res = rig.set_params("pose", model_parent_frame="")
    assert not res[0].successful and "model_parent_frame" in res[0].reason
    t = rig.next_stamp()
    rig.send("pose", ["joint A"], [0.3], t)
    rig.wait_tf("pose/link B", t)
    rig.send("pose", ["joint A"], [0.4], t + 20_000_000)  # 20 ms later: still throttled at 20 Hz
    rig.ros.spin_for(0.3)
    assert not rig.find("pose/link B", t + 20_000_000)


def test_description_from_the_robot_description_topic(rig: Rig) -> None:
    pub = rig.ros.node.create_publisher(String, "/topic/robot_description", LATCHED)
    pub.publish(String(data=pendulum(CAMERA)))
    t = rig.next_stamp()
    rig.ros.spin_until(lambda: bool(rig.find("topic/link B", t)), 15.0, "TF from the topic's model",
                       every=lambda: rig.send("topic", ["joint A", "joint B"], [0.2, 0.3], t))
    assert_tf(rig.find("topic/link B", t)[0], (0, 0, -0.05), ry_quat(0.2))
    pub.publish(String(data="<robot name='x'><joint/></robot>"))
    rig.ros.spin_until(lambda: "robot_description from the topic refused" in rig.output("topic"), 10.0,
                       "the refusal warning")
    t2 = t + S
    rig.send("topic", ["joint A", "joint B"], [0.5, 0.3], t2)
    assert_tf(rig.wait_tf("topic/link B", t2), (0, 0, -0.05), ry_quat(0.5))


def test_arm7_gripper_tf_static_and_mimic_finger(rig: Rig) -> None:
    h = math.sqrt(0.5)
    for q2, d in ((0.0, 0.0), (0.8, 0.01), (-1.3, 0.035)):
        t = rig.next_stamp()
        rig.send("arm", ["joint2", "finger_left_joint"], [q2, d], t)
        # joint2: origin rpy (-pi/2, 0, 0) then about z by q2: quaternion q_x(-pi/2) * q_z(q2)
        c, s_ = math.cos(q2 / 2), math.sin(q2 / 2)
        assert_tf(rig.wait_tf("arm/link2", t), (0, 0, 0.2), (-h * c, h * s_, h * s_, h * c))
        assert_tf(rig.wait_tf("arm/finger_left", t), (0, 0.02 + d, 0.05), (0, 0, 0, 1))
        # the right finger mimics the left one; its joint frame is turned by pi about z
        right = rig.wait_tf("arm/finger_right", t)
        tr = right.transform.translation
        np.testing.assert_allclose([tr.x, tr.y, tr.z], (0, -0.02 - d, 0.05), atol=1e-9, rtol=0)
        r = right.transform.rotation
        np.testing.assert_allclose(abs(r.z), 1.0, atol=1e-9, rtol=0)
    static = rig.ros.collect("/tf_static", TFMessage, STATIC_QOS, count=1,
                             predicate=lambda m: any(t.child_frame_id == "arm/hand" for t in m.transforms))
    by_child = {t.child_frame_id: t for t in static[0].transforms if t.child_frame_id.startswith("arm/")}
    assert set(by_child) == {"arm/hand", "arm/tool_frame"}
    assert_tf(by_child["arm/hand"], (0, 0, 0.08), (0, 0, -math.sin(math.pi / 8), math.cos(math.pi / 8)))
    assert_tf(by_child["arm/tool_frame"], (0, 0, 0.12), (0, 0, 0, 1))


def test_values_outside_the_limits_are_used_and_warned_once_per_period(rig: Rig) -> None:
    """joint1 is limited to [-2.9, 2.9]: 3.5 is used as given (as robot_state_publisher does): link1 sits at
    (0, 0, 0.1) turned by 3.5 about z; five such messages give one warning line (throttled, 5 s)."""
    t = rig.next_stamp()
    for k in range(5):
        rig.send("arm", ["joint1"], [3.5], t + k * 100 * MS)
        rig.ros.spin_for(0.05)
    # q_z(3.5) = (0, 0, sin 1.75, cos 1.75), published with the sign robot_state_publisher's KDL gives: the
    # trace 1 + 2 cos 3.5 < 0 and m22 = 1 is the largest diagonal element, so z > 0 (and here w < 0)
    assert_tf(rig.wait_tf("arm/link1", t), (0, 0, 0.1), (0, 0, math.sin(1.75), math.cos(1.75)))
    want = "joint 'joint1' = 3.5 is outside its limits [-2.9, 2.9]"
    rig.ros.spin_until(lambda: want in rig.output("arm"), 10.0, "the limit warning")
    rig.ros.spin_for(0.3)
    assert rig.output("arm").count(want) == 1, rig.output("arm")
    assert rig.procs["arm"].alive()


def test_sdf_world_file_tf_and_snapshot(rig: Rig) -> None:
    from robot_state_format.usdf.reader import read_world_state

    q = 0.6
    t = rig.next_stamp()
    # every moving joint of the world reported (no world_state before: only measured state is shared)
    rig.send("world", ["robot::shoulder", "robot::arm::elbow_joint", "robot::wrist"], [q, 0.0, 0.0], t)
    # the shoulder's frame is 0.1 below robot::arm::upper, which sits at (0.2, 0, 0.1) in robot::base
    x = rig.wait_tf("world/robot::arm::upper", t)
    assert x.header.frame_id == "world/robot::base"
    assert_tf(x, (0.2, 0, 0.1), (0, 0, math.sin(q / 2), math.cos(q / 2)))

    def stamped(m: Any) -> bool:
        ws = read_world_state(m.data).state
        return ws.stamp is not None and ws.stamp.sec * S + ws.stamp.nanosec == t

    ws = read_world_state(rig.ros.collect("/world/world_state", String, LATCHED, count=1, predicate=stamped)[0].data).state
    robot, box = ws.model("robot"), ws.model("box")
    assert robot is not None and box is not None
    np.testing.assert_allclose(robot.pose, (1, 0, 0.5, 0, 0, math.pi / 2), atol=1e-12, rtol=0)
    np.testing.assert_allclose(box.pose, (2, 0, 0, 0, 0, 0), atol=1e-12, rtol=0)


@pytest.mark.parametrize("params,code,text", [
    ({}, 2, "give exactly one of the parameters robot_description"),
    ({"model_file": str(SAMPLES / "double_pendulum.urdf"), "publish_frequency": 5000.0}, 2, "out of range"),
    ({"model_file": str(SAMPLES / "double_pendulum.urdf"), "snapshot_frequency": "often"}, 2,
     "snapshot_frequency must be a number in 0..1000 Hz"),
    ({"robot_description": "<robot name='r'><link name='a'/><joint name='j' type='revolute'/></robot>"}, 1,
     "cannot load the robot description"),
])
def test_startup_errors_are_clear(ros: RosHarness, params: dict[str, Any], code: int, text: str) -> None:
    proc = ros.start_node("state_publisher", params)
    deadline = time.monotonic() + 30.0
    while proc.alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.stopping = True
    assert proc.returncode == code, proc.output()
    assert text in proc.output()


def test_composable_in_process(rig: Rig) -> None:
    from rclpy.parameter import Parameter as P

    from robot_state_format.ros.state_publisher import StatePublisher

    node = StatePublisher("composed", namespace="comp", context=rig.ros.context, parameter_overrides=[
        P("model_file", value=str(SAMPLES / "double_pendulum.urdf")), P("frame_prefix", value="comp/"),
        P("publish_frequency", value=0.0)])
    rig.ros.executor.add_node(node)
    try:
        pub = rig.ros.node.create_publisher(JointState, "/comp/joint_states", qos_profile_sensor_data)
        rig.pubs["comp"] = pub
        rig.ros.wait_for_matched(pub)
        t = rig.next_stamp()
        rig.ros.spin_until(lambda: bool(rig.find("comp/link C", t)), 20.0, "TF from the composed node",
                           every=lambda: rig.send("comp", ["joint A", "joint B"], [0.3, -0.4], t), every_period=0.5)
        assert_tf(rig.find("comp/link C", t)[0], (0, 0, -1), ry_quat(-0.4))
    finally:
        rig.ros.executor.remove_node(node)
        node.destroy_node()


def test_services_and_timers_are_answered_while_joint_states_stream(rig: Rig) -> None:
    # while JointStates keep the node busy its wait leaves the parameter services out and looks at them
    # every few ms (ros/wait_loop.py): a request is still answered, and the snapshot timer (50 Hz) keeps its rate
    import threading

    from rcl_interfaces.srv import GetParameters

    snapshots: list[float] = []
    rig.ros.node.create_subscription(String, "/pose/world_state", lambda _m: snapshots.append(time.monotonic()), 100)
    stop = threading.Event()
    t0 = rig.next_stamp()

    def stream() -> None:  # ~1 kHz from another thread: the node stays busy during the calls below
        k = 0
        while not stop.is_set():
            k += 1
            rig.send("pose", ["joint A"], [0.001 * (k % 1000)], t0 + k * MS)
            time.sleep(0.001)

    thread = threading.Thread(target=stream, daemon=True)
    thread.start()
    try:
        rig.ros.spin_for(1.0)
        client = rig.ros.wait_for_service("/pose/state_publisher/get_parameters", GetParameters, timeout=20.0)
        for _ in range(5):
            reply = rig.ros.call(client, GetParameters.Request(names=["snapshot_frequency"]), timeout=30.0)
            assert reply.values[0].double_value == 50.0
        res = rig.set_params("pose", publish_frequency=25.0)
        assert res[0].successful
        start = time.monotonic()
        rig.ros.spin_for(2.0)
        got = [t for t in snapshots if t >= start]
    finally:
        stop.set()
        thread.join()
    assert rig.set_params("pose", publish_frequency=20.0)[0].successful  # the rig's value again
    assert len(got) >= 50, f"{len(got)} snapshots in 2 s at 50 Hz"  # its timer runs while the node is busy


def test_a_stamp_whose_nanoseconds_are_not_below_a_second_is_dropped_with_one_line(rig: Rig) -> None:
    # builtin_interfaces/Time: nanosec in [0, 1e9); a stranger's 2**32 - 1 gave an internal packing error
    msg = JointState()
    msg.header.stamp = Time(sec=2**31 - 1, nanosec=2**32 - 1)
    msg.name, msg.position = ["joint A"], [0.3]
    rig.pubs["pend"].publish(msg)
    rig.ros.spin_until(lambda: "not below 1e9" in rig.output("pend"), 20, "the node's warning")
    out = rig.output("pend")
    assert "header.stamp.nanosec 4294967295 is not below 1e9" in out and "format requires" not in out, out
    t = rig.next_stamp()  # and the node goes on
    rig.send("pend", ["joint A"], [0.2], t)
    assert_tf(rig.wait_tf("pend/link B", t), (0, 0, -0.05), ry_quat(0.2))
