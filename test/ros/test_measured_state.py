"""Only measured state is shared, and no input stops a node: state_publisher and state_store over real DDS.

The robot is defined here (not a sample): base -> j1 (revolute z, 0.1 up) -> l1 -> j2 (revolute y,
0.5 up) -> l2 -> j3 (prismatic x, 0.4 up) -> l3, a mimic j4 = 2 j1 + 0.1 (revolute z, 0.1 along x of
l1) -> f, and a fixed tool on l3. Expected transforms are derived by hand: a revolute joint about
axis a at origin p gives translation p and quaternion (a sin q/2, cos q/2); a prismatic joint along
x gives translation p + (q, 0, 0) and the identity rotation.
"""

from __future__ import annotations

import math
import random
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from builtin_interfaces.msg import Time
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from ros_harness import RosHarness
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from robot_state_format.usdf.reader import read_world_state, read_world_state_file
from robot_state_format.usdf.types import WorldState

S = 1_000_000_000
MS = 1_000_000
LIM = '<limit lower="-3" upper="3" effort="1" velocity="1"/>'
ROBOT = f"""<robot name="measured_bot">
 <link name="base"/><link name="l1"/><link name="l2"/><link name="l3"/><link name="f"/><link name="tool"/>
 <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.1"/>
   <axis xyz="0 0 1"/>{LIM}</joint>
 <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.5"/>
   <axis xyz="0 1 0"/>{LIM}</joint>
 <joint name="j3" type="prismatic"><parent link="l2"/><child link="l3"/><origin xyz="0 0 0.4"/>
   <axis xyz="1 0 0"/>{LIM}</joint>
 <joint name="j4" type="revolute"><parent link="l1"/><child link="f"/><origin xyz="0.1 0 0"/>
   <axis xyz="0 0 1"/><mimic joint="j1" multiplier="2" offset="0.1"/>{LIM}</joint>
 <joint name="tool_mount" type="fixed"><parent link="l3"/><child link="tool"/><origin xyz="0 0 0.05"/></joint>
</robot>
"""
CHILD = {"j1": "l1", "j2": "l2", "j3": "l3"}
LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
RELIABLE = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
TF_QOS = QoSProfile(depth=5000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)


def expected(child: str, values: dict[str, float]) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """Hand-derived (translation, quaternion xyzw) of the transform into ``child``, or None when its
    joint has no value in ``values``."""
    if child == "l1" and "j1" in values:
        q = values["j1"]
        return (0.0, 0.0, 0.1), (0.0, 0.0, math.sin(q / 2), math.cos(q / 2))
    if child == "l2" and "j2" in values:
        q = values["j2"]
        return (0.0, 0.0, 0.5), (0.0, math.sin(q / 2), 0.0, math.cos(q / 2))
    if child == "l3" and "j3" in values:
        return (values["j3"], 0.0, 0.4), (0.0, 0.0, 0.0, 1.0)
    if child == "f" and "j1" in values:
        q = 2 * values["j1"] + 0.1
        return (0.1, 0.0, 0.0), (0.0, 0.0, math.sin(q / 2), math.cos(q / 2))
    return None


def stamp(ns: int) -> Time:
    return Time(sec=ns // S, nanosec=ns % S)


def ns_of(t: Any) -> int:
    return int(t.sec) * S + int(t.nanosec)


class Rig:
    def __init__(self, ros: RosHarness, out: Path) -> None:
        self.ros = ros
        self.out = out
        self.tf: list[Any] = []
        ros.node.create_subscription(TFMessage, "/tf", lambda m: self.tf.extend(m.transforms), TF_QOS)
        self.world: list[str] = []
        ros.node.create_subscription(String, "/m/world_state", lambda m: self.world.append(m.data), LATCHED)
        self.pub = ros.node.create_publisher(JointState, "/m/joint_states", RELIABLE)
        self.base = (int(time.time()) - 5000) * S
        self.sent: list[int] = []  # the stamps of the JointStates sent

    def send(self, names: list[str], pos: list[float], t_ns: int, vel: list[float] | None = None) -> None:
        msg = JointState()
        msg.header.stamp = stamp(t_ns)
        msg.name = names
        msg.position = [float(x) for x in pos]
        msg.velocity = [float(x) for x in vel or []]
        self.pub.publish(msg)
        self.sent.append(t_ns)

    def find(self, child: str, t_ns: int) -> list[Any]:
        return [t for t in self.tf if t.child_frame_id == f"m/{child}" and ns_of(t.header.stamp) == t_ns]

    def wait_tf(self, child: str, t_ns: int, timeout: float = 20.0) -> Any:
        self.ros.spin_until(lambda: bool(self.find(child, t_ns)), timeout, f"/tf m/{child} at {t_ns}")
        return self.find(child, t_ns)[0]

    def trigger(self, node: str, name: str) -> Any:
        client = self.ros.wait_for_service(f"{node}/{name}", Trigger, timeout=30.0)
        return self.ros.call(client, Trigger.Request(), timeout=30.0)

    def set_param(self, node: str, name: str, value: Any) -> Any:
        client = self.ros.wait_for_service(f"{node}/set_parameters", SetParameters, timeout=30.0)
        req = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()])
        return self.ros.call(client, req, timeout=30.0).results[0]

    def save_until_stamp(self, want_ns: int, timeout: float = 20.0) -> WorldState:
        """~/save until the file holds the state stamped ``want_ns``, and that state.

        The store is a second subscriber of world_state: seeing a snapshot here does not mean the store holds it
        yet (CI's colcon route once saved the one before). Meanwhile a save may say it has nothing yet, or write
        a state measured earlier: a world_state this rig received or a JointState it sent, never a stamp nobody
        measured. Those files are removed."""
        deadline = time.monotonic() + timeout
        while True:
            r = self.trigger("/m/state_store", "save")
            if r.success:
                state = read_world_state_file(r.message).state
                assert state.stamp is not None
                got: int | str = state.stamp.sec * S + state.stamp.nanosec
                if got == want_ns:
                    return state
                earlier = {_stamp_ns(w) for w in self.world} | set(self.sent)
                assert got in earlier, f"saved a stamp nobody measured: {got}"
                Path(r.message).unlink()
            else:
                assert "no snapshot yet" in r.message, r.message
                got = r.message
            assert time.monotonic() < deadline, f"after {timeout} s the store still answers {got}, not {want_ns}"
            self.ros.spin_for(0.2)

    def files(self) -> list[Path]:
        return sorted(self.out.glob("*.usdf"))


def assert_tf(t: Any, want: tuple[tuple[float, ...], tuple[float, ...]]) -> None:
    tr, ro = t.transform.translation, t.transform.rotation
    np.testing.assert_allclose([tr.x, tr.y, tr.z], want[0], atol=1e-9, rtol=0)
    got = np.array([ro.x, ro.y, ro.z, ro.w])
    if float(got @ np.asarray(want[1])) < 0:  # q and -q are the same rotation
        got = -got
    np.testing.assert_allclose(got, want[1], atol=1e-9, rtol=0)


@pytest.fixture(scope="module")
def rig(ros_module: RosHarness, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    out = tmp_path_factory.mktemp("measured_out")
    model = out.parent / "measured_bot.urdf"
    model.write_text(ROBOT)
    ros = ros_module
    ros.start_node("state_publisher", {"model_file": str(model), "frame_prefix": "m/", "publish_frequency": 0.0,
                                       "joint_states_qos": "reliable", "snapshot_frequency": 20.0},
                   ros_args=["-r", "__ns:=/m"], name="publisher")
    ros.start_node("state_store", {"model_file": str(model), "output_dir": str(out), "joint_states_qos": "reliable"},
                   ros_args=["-r", "__ns:=/m"], name="store")
    r = Rig(ros, out)
    ros.wait_for_matched(r.pub, count=2, timeout=60.0)
    ros.wait_for_publisher("/m/world_state", count=1, timeout=60.0)
    ros.wait_for_service("/m/state_store/save", timeout=60.0)
    yield r


def test_nothing_is_shared_or_saved_before_joints_are_measured(rig: Rig) -> None:
    ros = rig.ros
    # no JointState yet: no world_state (a latched one would arrive at once), ~/save refuses and writes nothing
    ros.spin_for(1.5)
    assert rig.world == []
    r = rig.trigger("/m/state_store", "save")
    assert not r.success
    assert "j1" in r.message and "j2" in r.message and "j3" in r.message, r.message
    assert rig.files() == []

    # j1 only: its transform (and its mimic follower's) goes out; none for j2, j3; still no world_state
    t = rig.base + 10 * S
    rig.send(["j1"], [0.4], t)
    assert_tf(rig.wait_tf("l1", t), expected("l1", {"j1": 0.4}))  # type: ignore[arg-type]
    assert_tf(rig.wait_tf("f", t), expected("f", {"j1": 0.4}))  # type: ignore[arg-type]
    ros.spin_for(0.5)
    assert not [x for x in rig.tf if x.child_frame_id in ("m/l2", "m/l3")]
    assert rig.world == []
    ros.spin_until(lambda: "no JointState has reported 2 of 3 moving joint(s): j2, j3"
                   in ros.processes[0].output(), 10.0, "the waiting line naming j2, j3")
    r = rig.trigger("/m/state_store", "save")
    assert not r.success and "j2, j3" in r.message and "allow_partial" in r.message, r.message
    assert rig.files() == []

    # allow_partial: what is known is written, the unmeasured joints and the links they move are left out
    assert rig.set_param("/m/state_store", "allow_partial", True).successful
    try:
        r = rig.trigger("/m/state_store", "save")
        assert r.success, r.message
        state = read_world_state_file(r.message).state
        ms = state.model("measured_bot")
        assert ms is not None and state.stamp is not None
        assert state.stamp.sec * S + state.stamp.nanosec == t
        assert {js.name for js in ms.joint_states} == {"j1", "j4"}
        assert ms.joint("j1").positions == (0.4,)  # type: ignore[union-attr]
        assert {ls.name for ls in ms.link_states} == {"base", "l1", "f"}
        Path(r.message).unlink()
    finally:
        assert rig.set_param("/m/state_store", "allow_partial", False).successful

    # every joint: the world_state carries the JointState's stamp and the values sent
    t2 = t + S
    rig.send(["j2", "j3"], [-0.3, 0.25], t2)
    ros.spin_until(lambda: any(_stamp_ns(w) == t2 for w in rig.world), 20.0, "a world_state stamped t2")
    ws = read_world_state(next(w for w in rig.world if _stamp_ns(w) == t2)).state
    ms = ws.model("measured_bot")
    assert ms is not None
    assert [ms.joint(n).positions for n in ("j1", "j2", "j3")] == [(0.4,), (-0.3,), (0.25,)]  # type: ignore[union-attr]


def _stamp_ns(text: str) -> int | None:
    ws = read_world_state(text).state
    return None if ws.stamp is None else ws.stamp.sec * S + ws.stamp.nanosec


def test_warning_then_stamp_jump_keeps_the_node_and_save_holds_the_last_values(rig: Rig) -> None:
    ros = rig.ros
    t = rig.base + 100 * S
    rig.send(["j1", "j2", "j3"], [0.1, 0.2, 0.3], t)
    rig.wait_tf("l3", t)
    rig.send(["j1", "nope"], [0.5, 1.0], t + S)  # a warning (unknown joint) ...
    rig.wait_tf("l1", t + S)
    back = t - 50 * S  # ... then a stamp jump backwards (an info line from the same node): it once died here
    rig.send(["j1", "j2", "j3"], [-0.7, 0.8, 0.05], back)
    assert_tf(rig.wait_tf("l2", back), expected("l2", {"j2": 0.8}))  # type: ignore[arg-type]
    later = back + S
    rig.send(["j1", "j2", "j3"], [-0.6, 0.9, 0.06], later)
    assert_tf(rig.wait_tf("l3", later), expected("l3", {"j3": 0.06}))  # type: ignore[arg-type]
    ros.spin_until(lambda: any(_stamp_ns(w) == later for w in rig.world), 20.0, "the world_state of the last message")
    out = ros.processes[0].output()
    assert "jumped backwards" in out and "not in the model ignored: nope" in out
    assert "Traceback" not in out and ros.processes[0].alive()
    state = rig.save_until_stamp(later)
    ms = state.model("measured_bot")
    assert ms is not None
    assert [ms.joint(n).positions for n in ("j1", "j2", "j3")] == [(-0.6,), (0.9,), (0.06,)]  # type: ignore[union-attr]


def test_a_snapshot_whose_publisher_is_gone_is_not_saved_as_current(ros: RosHarness, tmp_path: Path) -> None:
    model = tmp_path / "measured_bot.urdf"
    model.write_text(ROBOT)
    out = tmp_path / "out"
    out.mkdir()
    ros.start_node("state_store", {"model_file": str(model), "output_dir": str(out), "max_snapshot_age": 1.0},
                   ros_args=["-r", "__ns:=/stale"], name="store")
    pub = ros.node.create_publisher(String, "/stale/world_state", LATCHED)
    pub.publish(String(data=_COMPLETE))
    ros.wait_for_matched(pub, timeout=60.0)
    client = ros.wait_for_service("/stale/state_store/save", Trigger, timeout=30.0)

    def save() -> Any:
        return ros.call(client, Trigger.Request(), timeout=30.0)

    ros.spin_until(lambda: save().success, 20.0, "the snapshot saved")
    ros.spin_for(1.5)  # older than max_snapshot_age, but its publisher is alive: still the current state
    r = save()
    assert r.success, r.message
    ros.node.destroy_publisher(pub)  # the publisher is gone
    ros.spin_until(lambda: ros.node.count_publishers("/stale/world_state") == 1, 20.0, "the publisher gone")
    # the store learns of the departure through its own discovery, which may lag this node's: until then
    # the snapshot is still current there (saved); once it knows, it refuses and writes nothing
    refusal: list[Any] = []

    def refused() -> bool:
        files = sorted(out.iterdir())
        r = save()
        if not r.success:
            refusal[:] = [r, files, sorted(out.iterdir())]
        return not r.success

    ros.spin_until(refused, 20.0, "the store to see its publisher gone")
    r, before, after = refusal
    assert "s old (max_snapshot_age 1 s) and its publisher is gone" in r.message, r.message
    assert after == before  # nothing written


def test_a_store_without_a_model_takes_the_robots_and_names_the_unmeasured_joints(ros: RosHarness,
                                                                                  tmp_path: Path) -> None:
    model = tmp_path / "measured_bot.urdf"
    model.write_text(ROBOT)
    ros.start_node("state_publisher", {"model_file": str(model)}, ros_args=["-r", "__ns:=/nm"], name="publisher")
    ros.start_node("state_store", {"output_dir": str(tmp_path)}, ros_args=["-r", "__ns:=/nm"], name="store")
    client = ros.wait_for_service("/nm/state_store/save", Trigger, timeout=60.0)
    last: list[str] = []

    def names_them() -> bool:
        r = ros.call(client, Trigger.Request(), timeout=30.0)
        assert not r.success, r.message
        last[:] = [r.message]
        return "j1, j2, j3" in r.message

    ros.spin_until(names_them, 30.0, "a refusal naming j1, j2, j3 (model from robot_description)")
    assert "never reported: 3 moving joint(s)" in last[0]
    assert list(tmp_path.glob("*.usdf")) == []


_COMPLETE = ('<world_state name="w" version="1.0"><stamp sec="12" nanosec="5"/><model_state name="measured_bot">'
             '<joint_state name="j1"><positions>0.5</positions></joint_state>'
             '<joint_state name="j2"><positions>0.25</positions></joint_state>'
             '<joint_state name="j3"><positions>0.125</positions></joint_state></model_state></world_state>')


# -- every JointState problem class, in random orders, through the real node ---------------------------
def _problem_messages(rng: random.Random) -> list[tuple[str, list[str], list[float], list[float]]]:
    """(kind, names, positions, velocities) of each bad class."""
    huge = 100_000
    return [
        ("unknown", ["j1", "nope", "j2", "j3"], [0.1, 1.0, 0.2, 0.3], []),
        ("nan", ["j1", "j2", "j3"], [math.nan, rng.uniform(-1, 1), rng.uniform(-1, 1)], []),
        ("inf", ["j1", "j2", "j3"], [rng.uniform(-1, 1), math.inf, -math.inf], []),
        ("nan_velocity", ["j1", "j2", "j3"], [rng.uniform(-1, 1) for _ in range(3)], [math.nan, 0.0, 0.0]),
        ("length", ["j1", "j2", "j3"], [0.1, 0.2], []),
        ("velocity_length", ["j1", "j2", "j3"], [0.1, 0.2, 0.3], [1.0]),
        ("duplicate", ["j1", "j2", "j1"], [0.1, 0.2, 0.3], []),
        ("empty", [], [], []),
        ("huge_names", [f"x{i}" for i in range(huge)], [0.0] * huge, []),
        ("huge_mismatch", ["j1"], [0.0] * huge, []),
    ]


def _applied(kind: str, names: list[str], pos: list[float]) -> dict[str, float]:
    """The joint values the node applies from a message of this kind (the rest is dropped)."""
    if kind in ("length", "velocity_length", "duplicate", "empty", "huge_names", "huge_mismatch"):
        return {}
    return {n: p for n, p in zip(names, pos) if n in CHILD and math.isfinite(p)}


@pytest.mark.parametrize("seed", [1, 2])
def test_every_joint_state_problem_in_random_order_keeps_tf_equal_to_fk(rig: Rig, seed: int) -> None:
    ros = rig.ros
    rng = random.Random(seed)
    t = rig.base + (1000 + 500 * seed) * S
    sent: dict[int, dict[str, float]] = {}  # stamp -> values applied from that message
    kinds = [k for k, *_ in _problem_messages(rng)] + ["good"] * 10 + ["backwards"] * 3
    rng.shuffle(kinds)
    for kind in kinds:
        t += 10 * MS
        if kind == "good":
            names = rng.sample(["j1", "j2", "j3"], rng.randint(1, 3))
            pos, vel = [rng.uniform(-2, 2) for _ in names], []
        elif kind == "backwards":  # a bag loop: every joint again, 20 s earlier (the node resets, then applies)
            t -= 20 * S
            names, pos, vel = ["j1", "j2", "j3"], [rng.uniform(-2, 2) for _ in range(3)], []
        else:
            _, names, pos, vel = next(m for m in _problem_messages(rng) if m[0] == kind)
        rig.send(names, pos, t, vel)
        applied = {n: p for n, p in zip(names, pos) if n in CHILD} if kind in ("good", "backwards") \
            else _applied(kind, names, pos)
        if applied:
            sent[t] = applied
        ros.spin_for(0.03)
    t += 10 * MS
    rig.send(["j1", "j2", "j3"], [0.11, 0.22, 0.33], t)
    sent[t] = {"j1": 0.11, "j2": 0.22, "j3": 0.33}
    rig.wait_tf("l3", t, timeout=30.0)
    ros.spin_for(0.3)
    assert ros.processes[0].alive()
    for stamp_ns, values in sent.items():
        for child in ("l1", "l2", "l3", "f"):
            want = expected(child, values)
            got = rig.find(child, stamp_ns)
            if want is None:
                assert got == [], (child, stamp_ns, values)
            else:
                assert len(got) == 1, (child, stamp_ns, values)
                assert_tf(got[0], want)
    out = ros.processes[0].output()
    assert "Traceback" not in out and "Logger severity" not in out
    for text in ("not in the model ignored: nope", "non-finite position(s) dropped", "more than once",
                 "empty JointState", "jumped backwards"):
        assert text in out, text


# -- state_store: bad inputs and service calls in bad states -------------------------------------------
def _cdr_string(data: bytes) -> bytes:
    return b"\x00\x01\x00\x00" + struct.pack("<I", len(data) + 1) + data + b"\x00"


def test_state_store_survives_bad_inputs_and_bad_service_calls(ros: RosHarness, tmp_path: Path) -> None:
    model = tmp_path / "measured_bot.urdf"
    model.write_text(ROBOT)
    out = tmp_path / "out"
    out.mkdir()
    store = ros.start_node("state_store", {"model_file": str(model), "output_dir": str(out)},
                           ros_args=["-r", "__ns:=/bad"], name="store")
    ws_pub = ros.node.create_publisher(String, "/bad/world_state", LATCHED)
    js_pub = ros.node.create_publisher(JointState, "/bad/joint_states", RELIABLE)
    ros.wait_for_matched(ws_pub, timeout=60.0)

    def trigger(name: str) -> Any:
        client = ros.wait_for_service(f"/bad/state_store/{name}", Trigger, timeout=30.0)
        return ros.call(client, Trigger.Request(), timeout=30.0)

    # services in every bad state: nothing received, nothing playing, not recording, no replay file
    for name in ("save", "replay", "play", "pause", "resume", "stop_playback", "stop_recording"):
        r = trigger(name)
        assert not r.success and r.message, name
    rng = random.Random(7)
    bad_texts = [b"", b"not xml", b"<world_state", b"\xff\xfe\xfd invalid utf-8", b"<a>" * 10_000,
                 b'<world_state name="w" version="1.0"><model_state name="measured_bot"/></world_state>',
                 b'<world_state name="w" version="9"/>']
    bad_js = [(["j1", "j1"], [0.0, 0.0]), (["j1"], []), ([], []), (["nope"], [1.0]), (["j1"], [math.nan]),
              ([f"x{i}" for i in range(100_000)], [0.0] * 100_000)]
    actions = [("ws", x) for x in bad_texts] + [("js", x) for x in bad_js] + [("save", None)] * 4
    rng.shuffle(actions)
    for kind, item in actions:
        if kind == "ws":
            ws_pub.publish(_cdr_string(item))
        elif kind == "js":
            msg = JointState(name=item[0], position=[float(v) for v in item[1]])
            js_pub.publish(msg)
        else:
            r = trigger("save")
            assert not r.success, r.message  # nothing valid and measured has arrived: refused
        ros.spin_for(0.05)
    assert list(out.iterdir()) == []
    # parameters out of range are refused, the node keeps its state
    client = ros.wait_for_service("/bad/state_store/set_parameters", SetParameters, timeout=30.0)
    for name, value in (("max_snapshot_age", -1.0), ("checkpoint_period", math.nan), ("keep_last", -3)):
        req = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()])
        assert not ros.call(client, req).results[0].successful, name
    # a valid, stamped and complete snapshot is saved
    ws_pub.publish(String(data=_COMPLETE))
    ros.spin_until(lambda: trigger("save").success, 20.0, "the good snapshot saved")
    (saved,) = list(out.glob("*.usdf"))
    state = read_world_state_file(saved).state
    assert state.stamp is not None and (state.stamp.sec, state.stamp.nanosec) == (12, 5)
    assert store.alive()
    assert "Traceback" not in store.output()
