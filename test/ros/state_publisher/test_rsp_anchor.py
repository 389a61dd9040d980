"""The state_publisher against the real C++ robot_state_publisher, when it is built (never built here).

bench/bench_vs_rsp.py builds it with the shared script into ``../rsp_cpp`` beside the clone (or
``RSF_RSP_CPP``); without it these tests skip and say so. Both nodes run at once, each in its own
namespace with its own ``frame_prefix``; the same JointStates go to both.

* TF: every /tf transform of several configurations (inside the limits, past 120 degrees, outside the
  limits) and every /tf_static transform of ours equals the C++ node's to 1e-9, component by component
  (quaternion signs included), on arm7_gripper, romeo and a model with mimic chains and turned origins;
* ``publish_frequency``: the hand-derived sequence of test_state_publisher_throttle.py gives the same
  transforms from both nodes (default 20 Hz).
"""

from __future__ import annotations

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

ANCHOR, WHY = find_anchor()
pytestmark = pytest.mark.skipif(ANCHOR is None, reason=f"the C++ robot_state_publisher anchor: {WHY}")

S = 1_000_000_000
MS = 1_000_000
SAMPLES = ROOT / "robot_state_format" / "samples"
TF_QOS = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
STATIC_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)


def _models() -> list[tuple[str, str]]:
    out = [("arm7", (SAMPLES / "arm7_gripper.urdf").read_text()), ("chain", CHAIN)]
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
