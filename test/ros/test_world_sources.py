"""state_store with ``sources``: one world from robots under several namespaces, on one host and
across "hosts" (network namespaces on a virtual switch, test/helpers/netns_lab.py).

Two robots never used by the other DDS tests (example-robot-data's SO-100 arm and xArm7) run each
under its namespace with ``frame_prefix``; their joint values come from a test node. Checked against
independent references: TF composed by a probe process against Pinocchio's forward kinematics; the
saved world's joint values against what was published; each model_state against its model.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from real_robots import SKIP_REASON, real_urdf
from repo_paths import REPO_ROOT, TEST_DIR

from robot_state_format.errors import Severity
from robot_state_format.model.loader import load_model_file
from robot_state_format.spatial import pose6_to_transform, quaternion_to_matrix
from robot_state_format.usdf.reader import read_world_state_file
from robot_state_format.usdf.types import ModelState, WorldState
from robot_state_format.usdf.validate import validate_against_model

sys.path.insert(0, str(TEST_DIR / "helpers"))
import netns_lab

pin = pytest.importorskip("pinocchio", reason="pin (Pinocchio) is not installed")

HELPERS = TEST_DIR / "helpers"
UDP_PROFILE = TEST_DIR / "fastdds_udp_profile.xml"
R1_URDF = real_urdf("so_arm_description/urdf/so100.urdf")
R2_URDF = real_urdf("xarm_description/urdf/xarm7.urdf")
MOUNT = {"parent": "world", "child": "r1/base", "xyz": [1.0, -0.5, 0.25],
         "quat": [0.0, 0.0, math.sin(0.35), math.cos(0.35)]}  # yaw 0.7 rad

pytestmark = pytest.mark.skipif(R1_URDF is None or R2_URDF is None, reason=SKIP_REASON)


def joint_values(urdf: Path, seed: int) -> dict[str, float]:
    """Values inside each moving joint's limits (an independent draw, not a model default)."""
    model = load_model_file(str(urdf))
    rng = np.random.default_rng(seed)
    out = {}
    for j in model.joints.values():
        if not j.is_moving or j.mimic:
            continue
        lo, hi = (j.limits.lower, j.limits.upper) if j.limits is not None else (-1.0, 1.0)
        lo, hi = (lo if lo is not None else -1.0), (hi if hi is not None else 1.0)
        out[j.name] = float(rng.uniform(lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo)))
    return out


def pin_link_poses(urdf: Path, values: dict[str, float]) -> dict[str, np.ndarray]:
    """X_root_link of every link by Pinocchio (an independent kinematics library)."""
    model = pin.buildModelFromUrdf(str(urdf))
    data = model.createData()
    q = pin.neutral(model)
    for jid in range(1, model.njoints):
        jm = model.joints[jid]
        v = values[model.names[jid]]
        if jm.nq == 2:  # continuous: cos, sin
            q[jm.idx_q:jm.idx_q + 2] = [math.cos(v), math.sin(v)]
        else:
            q[jm.idx_q] = v
    pin.framesForwardKinematics(model, data, q)
    return {f.name: data.oMf[i].homogeneous.copy() for i, f in enumerate(model.frames) if f.type == pin.BODY}


def mount_matrix() -> np.ndarray:
    x = np.eye(4)
    x[:3, :3] = quaternion_to_matrix(tuple(MOUNT["quat"]))  # type: ignore[arg-type]
    x[:3, 3] = MOUNT["xyz"]
    return x


class Robots:
    """Expected values of the two robots."""

    def __init__(self) -> None:
        assert R1_URDF is not None and R2_URDF is not None
        self.urdf = {"r1": R1_URDF, "r2": R2_URDF}
        self.values = {"r1": joint_values(R1_URDF, 1), "r2": joint_values(R2_URDF, 2)}
        self.models = {k: load_model_file(str(p)) for k, p in self.urdf.items()}
        p1 = pin_link_poses(R1_URDF, self.values["r1"])
        p2 = pin_link_poses(R2_URDF, self.values["r2"])
        # r1 stands on its mount; r2 (xArm7, a URDF rooted at `world`) is placed by its own world joint
        self.expected_tf = {("world", f"r1/{k}"): mount_matrix() @ v for k, v in p1.items()}
        self.expected_tf.update({("world", f"r2/{k}"): v for k, v in p2.items() if k != "world"})

    def start(self, ros: Any, prefix: dict[str, list[str]], env: dict[str, str]) -> None:
        for ns in ("r1", "r2"):
            ros.start_node("state_publisher", params={"model_file": str(self.urdf[ns]), "frame_prefix": f"{ns}/"},
                           ros_args=["-r", f"__ns:=/{ns}"], prefix=prefix[ns], env=env, name=f"state_publisher_{ns}")
            spec: dict[str, Any] = {"names": list(self.values[ns]), "positions": list(self.values[ns].values())}
            if ns == "r1":
                spec["mount"] = MOUNT
            ros.start_node(str(HELPERS / "joint_source_node.py"), args=[json.dumps(spec)],
                           ros_args=["-r", f"__ns:=/{ns}"], prefix=prefix[ns], env=env, name=f"joints_{ns}")


def start_store(ros: Any, out: Path, prefix: list[str], env: dict[str, str], stale_after: float = 2.0) -> Any:
    return ros.start_node("state_store", params={"output_dir": str(out), "sources": ["/r1", "/r2"],
                                                 "stale_after": stale_after},
                          prefix=prefix, env=env, name="state_store")


def probe(ros: Any, prefix: list[str], env: dict[str, str], frames: list[tuple[str, str]],
          save: bool = True, timeout: float = 40.0) -> dict[str, Any]:
    spec = {"frames": frames, "save": "/state_store/save" if save else None, "sources": "/state_store/sources",
            "timeout": timeout}
    proc = ros.start_node(str(HELPERS / "world_probe.py"), args=[json.dumps(spec)], prefix=prefix, env=env,
                          name=f"probe-{len(ros.processes)}")
    proc.stopping = True  # it ends by itself
    deadline = time.monotonic() + timeout + 20
    while proc.alive() and time.monotonic() < deadline:
        ros.spin_once(0.1)
    assert not proc.alive(), "probe did not finish\n" + ros.report()
    lines = [ln for ln in proc.output().splitlines() if ln.startswith("{")]
    assert proc.returncode == 0 and lines, f"probe failed ({proc.returncode})\n" + proc.describe()
    return json.loads(lines[-1])


def check_tf(robots: Robots, tf: dict[str, list[list[float]]]) -> None:
    for (target, source), want in robots.expected_tf.items():
        got = np.asarray(tf[f"{target} {source}"])
        assert np.allclose(got, want, atol=1e-9, rtol=0), f"{target} -> {source}:\n{got}\n!=\n{want}"


def check_saved(robots: Robots, path: Path) -> WorldState:
    state = read_world_state_file(path).state
    assert sorted(m.name for m in state.model_states) == ["r1", "r2"]
    for ns in ("r1", "r2"):
        ms = state.model(ns)
        assert ms is not None
        got = {js.name: js.positions for js in ms.joint_states if js.positions}
        for name, value in robots.values[ns].items():
            assert got[name] == (value,), (ns, name)  # bit-exact: what was published
        single = WorldState(state.name, state.version, state.stamp, [],
                            [ModelState(robots.models[ns].name, None, ms.pose, ms.twist, ms.link_states,
                                        ms.joint_states, ms.model_states)])
        errors = [d for d in validate_against_model(single, robots.models[ns], check_poses=True)
                  if d.severity is Severity.ERROR]
        assert not errors, errors
    r1 = state.model("r1")
    assert r1 is not None and r1.pose is not None
    assert np.allclose(pose6_to_transform(r1.pose), mount_matrix(), atol=1e-12, rtol=0)  # from TF, in the world
    return state


def tf_frames(robots: Robots) -> list[tuple[str, str]]:
    return sorted(robots.expected_tf)


# -- one host ------------------------------------------------------------------------------------
def test_world_of_two_robots_one_host(ros: Any, tmp_path: Path) -> None:
    """The same on this machine's own DDS (this test process is the TF consumer and the caller)."""
    from std_srvs.srv import Trigger
    from tf2_msgs.msg import TFMessage

    from robot_state_format.ros.messages import transform_msg_to_matrix
    from robot_state_format.ros.qos import TF_QOS, TF_STATIC_LISTEN_QOS
    from robot_state_format.world.tf_tree import TfTree

    robots = Robots()
    env: dict[str, str] = {}
    robots.start(ros, {"r1": [], "r2": []}, env)
    start_store(ros, tmp_path, [], env)
    tree = TfTree()

    def on_tf(msg: Any) -> None:
        for t in msg.transforms:
            tree.set(t.header.frame_id, t.child_frame_id, transform_msg_to_matrix(t.transform))

    ros.node.create_subscription(TFMessage, "/tf", on_tf, TF_QOS)
    ros.node.create_subscription(TFMessage, "/tf_static", on_tf, TF_STATIC_LISTEN_QOS)
    frames = tf_frames(robots)
    ros.spin_until(lambda: all(tree.lookup(*f) is not None for f in frames), timeout=40, what="TF of both robots")
    check_tf(robots, {f"{t} {s}": tree.lookup(t, s).tolist() for t, s in frames})  # type: ignore[union-attr]
    sources = ros.wait_for_service("/state_store/sources", Trigger, timeout=20)
    ros.spin_until(lambda: "r2 (/r2): live" in ros.call(sources, Trigger.Request()).message
                   and "r1 (/r1): live" in ros.call(sources, Trigger.Request()).message, timeout=20,
                   what="both robots live in the store")
    res = ros.call(ros.wait_for_service("/state_store/save", Trigger), Trigger.Request())
    assert res.success, res.message
    path = Path(res.message)
    assert path.parent == tmp_path and path.name.startswith("world_restart_")
    check_saved(robots, path)

    # replay of that world: each robot's joint states under its namespace, its pose with its prefix
    from rcl_interfaces.msg import Parameter as ParameterMsg
    from rcl_interfaces.msg import ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    for p in ros.processes:
        if p.name.startswith("joints_"):
            p.stop()  # nothing else publishes joint values now
    setter = ros.wait_for_service("/state_store/set_parameters", SetParameters)
    value = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=str(path))
    assert ros.call(setter, SetParameters.Request(parameters=[ParameterMsg(name="replay_file", value=value)])
                    ).results[0].successful
    latched = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    inboxes = {ns: ros.subscribe(f"/{ns}/joint_states", JointState, latched) for ns in ("r1", "r2")}
    # forget what the replay must send again: every moving joint's transform and r1's mount (the store's now)
    for child in ["r1/base"] + [f"{ns}/{j.child}" for ns, m in robots.models.items()
                                for j in m.joints.values() if j.is_moving]:
        del tree.edges[child]
    # the state_publishers send a joint's transform again only once its stamp is 1/publish_frequency (50 ms)
    # newer than the last one sent: the replay's stamp must be more than that after the last live message
    time.sleep(0.1)
    res = ros.call(ros.wait_for_service("/state_store/replay", Trigger), Trigger.Request())
    assert res.success, res.message
    assert res.message.startswith(f"replayed {path}: 2 robots, 13 joint values"), res.message
    ros.spin_until(lambda: all(len(i) for i in inboxes.values()), what="replayed joint states of both robots")
    for ns, inbox in inboxes.items():
        msg = inbox.messages[-1]
        assert dict(zip(msg.name, msg.position, strict=True)) == robots.values[ns]
    try:
        ros.spin_until(lambda: all(tree.lookup(*f) is not None for f in frames), timeout=20, what="TF after replay")
    except AssertionError as exc:
        missing = [f for f in frames if tree.lookup(*f) is None]
        raise AssertionError(f"TF after replay: missing {missing}; known edges {sorted(tree.edges)}") from exc
    check_tf(robots, {f"{t} {s}": tree.lookup(t, s).tolist() for t, s in frames})  # type: ignore[union-attr]


# -- several hosts -------------------------------------------------------------------------------
@pytest.fixture
def lab(ros: Any) -> Any:
    why = netns_lab.unavailable()
    if why is not None:
        pytest.skip(why)
    made = netns_lab.NetnsLab(["robots", "store", "spare"])
    try:
        yield made
    finally:
        ros.stop_all()  # the nodes first, then their network
        made.close()


def lab_env() -> dict[str, str]:
    return {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET", "FASTDDS_DEFAULT_PROFILES_FILE": str(UDP_PROFILE)}


def test_world_across_hosts(ros: Any, lab: Any, tmp_path: Path) -> None:
    """Robots on two hosts, state_store and a TF consumer on a third; one robot's host goes away (its
    switch port down) and comes back."""
    robots = Robots()
    env = lab_env()
    robots.start(ros, {"r1": lab.prefix("robots"), "r2": lab.prefix("spare")}, env)
    start_store(ros, tmp_path, lab.prefix("store"), env)
    res = probe(ros, lab.prefix("store"), env, tf_frames(robots))
    check_tf(robots, res["tf"])
    assert res["save"]["success"], res
    check_saved(robots, Path(res["save"]["message"].splitlines()[0]))

    lab.unplug("robots")
    time.sleep(3.5)  # stale_after is 2 s: the store must have noticed by now (a wait on absence)
    res = probe(ros, lab.prefix("store"), env, [])
    assert res["save"]["success"], res
    lines = res["save"]["message"].splitlines()
    assert len(lines) == 2 and lines[1].startswith("stale: r1 (silent") and "r2" not in lines[1], lines
    assert "r1 (/r1): stale" in res["sources"]["message"] and "r2 (/r2): live" in res["sources"]["message"]
    check_saved(robots, Path(lines[0]))  # kept with its last values
    for p in ros.processes[:5]:
        assert p.alive(), p.describe()  # robots and store kept running

    lab.plug("robots")
    deadline = time.monotonic() + 30
    while True:
        res = probe(ros, lab.prefix("store"), env, [], save=False)
        if "r1 (/r1): live" in res["sources"]["message"]:
            break
        assert time.monotonic() < deadline, res
    assert "r2 (/r2): live" in res["sources"]["message"]


# -- discovery server (no multicast) --------------------------------------------------------------
CONFIG = REPO_ROOT / "config"


def discovery_profile(kind: str, address: str, out: Path) -> Path:
    """The shipped config/fastdds_discovery_<kind>.xml with the lab's server address and UDPv4 as the
    only transport (see fastdds_udp_profile.xml for why)."""
    from lxml import etree

    ns = "{http://www.eprosima.com}"
    root = etree.parse(str(CONFIG / f"fastdds_discovery_{kind}.xml")).getroot()
    profiles = root.find(f"{ns}profiles")
    for addr in root.iter(f"{ns}address"):
        if kind == "client":
            addr.text = address
    transports = etree.Element(f"{ns}transport_descriptors")
    profiles.insert(0, transports)  # Fast DDS reads transports before the participant that names them
    desc = etree.SubElement(transports, f"{ns}transport_descriptor")
    etree.SubElement(desc, f"{ns}transport_id").text = "udp"
    etree.SubElement(desc, f"{ns}type").text = "UDPv4"
    rtps = root.find(f"{ns}profiles/{ns}participant/{ns}rtps")
    user = etree.Element(f"{ns}userTransports")
    etree.SubElement(user, f"{ns}transport_id").text = "udp"
    builtin = etree.Element(f"{ns}useBuiltinTransports")
    builtin.text = "false"
    rtps.insert(0, builtin)
    rtps.insert(0, user)
    path = out / f"discovery_{kind}.xml"
    path.write_bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))
    return path


def test_discovery_server_profiles_without_multicast(ros: Any, tmp_path: Path) -> None:
    why = netns_lab.unavailable()
    if why is not None:
        pytest.skip(why)
    lab = netns_lab.NetnsLab(["robots", "store"], multicast=False)
    try:
        server = discovery_profile("server", lab.addresses["store"], tmp_path)
        client = discovery_profile("client", lab.addresses["store"], tmp_path)
        env_client = {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET", "FASTDDS_DEFAULT_PROFILES_FILE": str(client)}
        env_server = {**env_client, "FASTDDS_DEFAULT_PROFILES_FILE": str(server)}
        assert R1_URDF is not None
        values = joint_values(R1_URDF, 3)
        ros.start_node("state_publisher", params={"model_file": str(R1_URDF), "frame_prefix": "r1/"},
                       ros_args=["-r", "__ns:=/r1"], prefix=lab.prefix("robots"), env=env_client)
        spec = {"names": list(values), "positions": list(values.values()), "mount": MOUNT}
        ros.start_node(str(HELPERS / "joint_source_node.py"), args=[json.dumps(spec)], ros_args=["-r", "__ns:=/r1"],
                       prefix=lab.prefix("robots"), env=env_client)
        ros.start_node("state_store", params={"output_dir": str(tmp_path), "sources": ["/r1"]},
                       prefix=lab.prefix("store"), env=env_server, name="state_store")
        # control: on this network, multicast discovery (what test_world_across_hosts uses) finds nothing
        plain = lab_env()
        control = {"names": [], "positions": [], "mount": {**MOUNT, "child": "r9/base"}}
        ros.start_node(str(HELPERS / "joint_source_node.py"), args=[json.dumps(control)], ros_args=["-r", "__ns:=/r9"],
                       prefix=lab.prefix("robots"), env=plain, name="multicast-source")
        proc = ros.start_node(str(HELPERS / "world_probe.py"),
                              args=[json.dumps({"frames": [["world", "r9/base"]], "timeout": 4})],
                              prefix=lab.prefix("store"), env=plain, name="probe-multicast")
        proc.stopping = True
        assert proc.proc.wait(timeout=30) == 3, proc.describe()
        p1 = pin_link_poses(R1_URDF, values)
        res = probe(ros, lab.prefix("store"), env_client, [("world", f"r1/{k}") for k in p1])
        for k, want in p1.items():
            assert np.allclose(np.asarray(res["tf"][f"world r1/{k}"]), mount_matrix() @ want, atol=1e-9, rtol=0), k
        assert res["save"]["success"], res
        saved = read_world_state_file(Path(res["save"]["message"].splitlines()[0])).state
        (r1,) = saved.model_states
        assert r1.name == "r1" and {j.name: j.positions for j in r1.joint_states} == {
            k: (v,) for k, v in values.items()}
    finally:
        ros.stop_all()
        lab.close()


# -- recording and playback of a world -------------------------------------------------------------
def test_world_recording_and_playback(ros: Any, tmp_path: Path) -> None:
    """The sources' topics are recorded under their own names, and played back there."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    from std_srvs.srv import Trigger

    from robot_state_format.recording import read_recording

    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    ros.start_node("state_store", params={"output_dir": str(tmp_path), "sources": ["/r1", "/r2"],
                                          "record": True, "checkpoint_period": 0.2}, name="state_store")
    ws = ros.node.create_publisher(String, "/r1/world_state", latched)
    js = ros.node.create_publisher(JointState, "/r2/joint_states", qos_profile_sensor_data)
    ros.wait_for_matched(ws)
    ros.wait_for_matched(js)
    text = ('<world_state name="a" version="1.0"><stamp sec="99" nanosec="0"/>'  # a snapshot says when
            '<model_state name="a"/></world_state>')
    ws.publish(String(data=text))
    sent = []

    def publish_joints() -> None:
        msg = JointState(name=["j"], position=[float(len(sent))])
        msg.header.stamp.sec = 100 + len(sent)
        js.publish(msg)
        sent.append(msg)

    stop = ros.wait_for_service("/state_store/stop_recording", Trigger)
    ros.spin_until(lambda: len(sent) >= 10, every=publish_joints, what="ten joint states sent")
    ros.spin_for(0.3)
    res = ros.call(stop, Trigger.Request())
    assert res.success, res.message
    directory = Path(res.message.split(" (")[0])
    recorded = list(read_recording(directory))
    assert [m.data for m in recorded if m.topic == "/r1/world_state"][:1] and \
        deserialize_message(next(m.data for m in recorded if m.topic == "/r1/world_state"), String).data == text
    got = [deserialize_message(m.data, JointState) for m in recorded if m.topic == "/r2/joint_states"]
    assert got and [m.position[0] for m in got] == sorted(m.position[0] for m in got)  # in order, as sent
    assert {m.topic for m in recorded} <= {"/r1/world_state", "/r1/joint_states", "/r2/world_state",
                                           "/r2/joint_states", "/world_state", "/joint_states"}

    # checkpoints hold the world too: r1 from its world_state (r2 sent joint states but no model: not in it)
    ros.spin_until(lambda: any(tmp_path.glob("world_checkpoint_*.usdf")), what="a checkpoint of the world")
    checkpoint = read_world_state_file(sorted(tmp_path.glob("world_checkpoint_*.usdf"))[-1]).state
    assert checkpoint.name == "world" and [m.name for m in checkpoint.model_states] == ["r1"]

    ros.node.destroy_publisher(ws)
    ros.node.destroy_publisher(js)
    played_ws = ros.subscribe("/r1/world_state", String, QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE,
                                                                   durability=DurabilityPolicy.TRANSIENT_LOCAL))
    played_js = ros.subscribe("/r2/joint_states", JointState, QoSProfile(
        depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL))
    from rcl_interfaces.msg import Parameter as ParameterMsg
    from rcl_interfaces.msg import ParameterType, ParameterValue
    from rcl_interfaces.srv import SetParameters

    setter = ros.wait_for_service("/state_store/set_parameters", SetParameters)
    value = ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=str(directory))
    assert ros.call(setter, SetParameters.Request(parameters=[ParameterMsg(name="playback_path", value=value)])
                    ).results[0].successful
    res = ros.call(ros.wait_for_service("/state_store/play", Trigger), Trigger.Request())
    assert res.success, res.message
    ros.spin_until(lambda: len(played_js) >= len(got) and len(played_ws) >= 1, timeout=20, what="the played world")
    assert played_ws.messages[0].data == text
    assert [m.position[0] for m in played_js.messages[-len(got):]] == [m.position[0] for m in got]


# -- messages that cannot be read ------------------------------------------------------------------
def test_unreadable_joint_states_and_tf_are_counted_and_warned_about(ros: Any, tmp_path: Path) -> None:
    """Bytes that are no JointState on a source's ``joint_states`` and no TFMessage on ``/tf``: the
    store keeps running and warns once per topic (throttled), naming the topic and the count."""
    from rcl_interfaces.msg import Log
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_srvs.srv import Trigger
    from tf2_msgs.msg import TFMessage

    store = ros.start_node("state_store", params={"output_dir": str(tmp_path), "sources": ["/r1", "/r2"]},
                           name="state_store")
    rosout = ros.subscribe("/rosout", Log, QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST,
                                                      reliability=ReliabilityPolicy.RELIABLE,
                                                      durability=DurabilityPolicy.TRANSIENT_LOCAL))
    sources = ros.wait_for_service("/state_store/sources", Trigger, timeout=20)
    reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
    js = ros.node.create_publisher(JointState, "/r1/joint_states", reliable)
    tf = ros.node.create_publisher(TFMessage, "/tf", reliable)
    ros.spin_until(lambda: js.get_subscription_count() > 0 and tf.get_subscription_count() > 0, timeout=20,
                   what="the store subscribed to /r1/joint_states and /tf")
    garbage = b"\x00\x01\x00\x00" + b"\xff" * 3  # a CDR header, then no valid JointState / TFMessage

    def warned(topic: str) -> bool:
        return any(f"{topic}: unreadable message dropped (" in m.msg for m in rosout.messages)

    def send() -> None:  # until each topic's first is taken (the store's reader may match after our writer did)
        for pub, name in ((js, "/r1/joint_states"), (tf, "/tf")):
            if not warned(name):
                pub.publish(garbage)

    ros.spin_until(lambda: warned("/r1/joint_states") and warned("/tf"), timeout=20, every=send, every_period=0.5,
                   what="a warning about each topic's unreadable message")
    for _ in range(2):  # within the 5 s throttle window of the first warning
        js.publish(garbage)
        tf.publish(garbage)
    ros.spin_for(1.0)
    texts = [m.msg for m in rosout.messages if "unreadable message dropped" in m.msg]
    assert all(m.level == Log.WARN for m in rosout.messages if "unreadable message dropped" in m.msg)
    assert any(t.startswith("/r1/joint_states: unreadable message dropped (1 so far): ") for t in texts), texts
    assert len([t for t in texts if t.startswith("/r1/joint_states")]) == 1, texts  # throttled: 3 or more sent, 1 said
    assert store.alive()  # data from the network, never fatal
    # it still answers, and an unreadable message is no sign of the robot
    assert ros.call(sources, Trigger.Request()).message == "/r1: nothing received\n/r2: nothing received"
