"""state_publisher against the real C++ robot_state_publisher: the same JointState stream into each, in turn.

    .venv/bin/python bench/bench_vs_rsp.py              # 3 rounds, 8 s windows, arm7_gripper and romeo
    .venv/bin/python bench/bench_vs_rsp.py --quick      # 2 rounds, 4 s windows
    .venv/bin/python bench/bench_vs_rsp.py --smoke      # 1 round, 1 s windows, never builds the anchor

The anchor is built first with the shared script (bench/rsp_anchor.py: ``../rsp_cpp`` beside the clone or
``RSF_RSP_CPP``; about 3 minutes once, cached afterwards). When it cannot be built the bench says so in one
``skip:`` line and measures our node alone (TF only against the full job).

Per model (the arm7_gripper sample, romeo from example-robot-data) each node runs as its own process, one at a
time, alternating (the order rotates per round), with ``ignore_timestamp: true`` (every JointState gives a
/tf): the C++ node, ours TF only (``snapshot_frequency: 0``) and ours doing the full job (``snapshot_frequency:
-1``: a world_state per JointState, read here too). JointStates are stamped with the wall clock when sent; their
positions change every message (inside the joint limits). Figures, each as a ratio to the C++ node of the same
run (medians over the rounds):

* CPU per JointState: utime + stime of the node process (``/proc/PID/stat``) over a window of the stream,
  divided by the JointStates sent in it, at 100 Hz and at 1 kHz;
* RSS (``VmRSS``) after the 1 kHz window;
* start to first /tf: process start (its spawn, after the harness wrote its params file) to the first /tf
  carrying a stamp sent after the start (JointStates at 100 Hz meanwhile); fastest and median of the rounds. The same for a bare rclpy node in each round
  (``bench/anchor_node.py relay``: rclpy and the message packages, a /tf per JointState; ``--no-floor`` skips
  it): the floor any Python node starts from, so the figures say what is rclpy's and what is this package's;
* latency: stamp to /tf receipt here (both in this process's wall clock), median and p99;
* messages lost: JointStates of the window without a /tf of their stamp;
* TF equality: one more JointState, every /tf transform and every /tf_static one of ours against the C++
  node's (max abs difference of translation and quaternion, and of each link's pose composed from the root).
"""

from __future__ import annotations

import argparse
import compileall
import math
import os
import statistics
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from figures import Figures
from machine import describe_machine
from paced import paced
from rsp_anchor import Anchor, build_anchor, find_anchor, our_command
from rsp_anchor import start as start_node

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))

FIGS = Figures()
TICK = os.sysconf("SC_CLK_TCK")
NS = "/rspbench"
VARIANTS = ("cpp", "ours", "full", "floor")
LABEL = {"cpp": "C++ robot_state_publisher", "ours": "state_publisher TF only", "full": "state_publisher full job",
         "floor": "bare rclpy node (bench/anchor_node.py relay)"}
FLOOR = ROOT / "bench" / "anchor_node.py"


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@dataclass
class Window:
    sent: dict[int, int] = field(default_factory=dict)  # stamp ns -> 1
    latency_ns: list[int] = field(default_factory=list)


class Stream:
    """This process's ROS side in a plain WaitSet loop: JointStates out, /tf (raw) and world_state in."""

    def __init__(self, context: Any, names: list[str], lower: np.ndarray, upper: np.ndarray) -> None:
        from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
        from rclpy.node import Node
        from rclpy.qos import (
            DurabilityPolicy,
            HistoryPolicy,
            QoSProfile,
            ReliabilityPolicy,
            qos_profile_sensor_data,
        )
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String
        from tf2_msgs.msg import TFMessage

        self._rclpy = _rclpy
        self.context = context
        self.node = Node("rsp_bench_feeder", context=context, start_parameter_services=False, enable_rosout=False)
        self.names = names
        self.mid = (lower + upper) / 2
        self.amp = np.minimum((upper - lower) / 2 * 0.8, 1.0)
        self.msg = JointState()
        self.msg.name = list(names)
        self.pub = self.node.create_publisher(JointState, f"{NS}/joint_states", qos_profile_sensor_data)
        tf_qos = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
        latched = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        static_qos = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                                durability=DurabilityPolicy.TRANSIENT_LOCAL)
        noop: Callable[[Any], None] = lambda _m: None  # noqa: E731  (read by take, never by an executor)
        self.tf_sub = self.node.create_subscription(TFMessage, "/tf", noop, tf_qos, raw=True)
        self.static_sub = self.node.create_subscription(TFMessage, "/tf_static", noop, static_qos, raw=True)
        self.world_sub = self.node.create_subscription(String, f"{NS}/world_state", noop, latched, raw=True)
        self.k = 0
        self.after_ns = 0
        self.first_tf: float | None = None
        self.t0 = 0.0
        self.window: Window | None = None
        self.keep: dict[int, list[bytes]] = {}  # stamps whose /tf bytes are kept (TF equality)
        self.static: list[bytes] = []
        self.worlds = 0
        self._ws = _rclpy.WaitSet(3, 0, 0, 0, 0, 0, context.handle)

    def positions(self, k: int) -> list[float]:
        return (self.mid + self.amp * np.sin(0.001 * k + np.arange(len(self.names)))).tolist()

    def arm(self) -> None:
        self.first_tf = None
        self.after_ns = time.time_ns()
        self.t0 = time.monotonic()
        self.static = []

    def send(self, values: list[float] | None = None) -> int:
        from builtin_interfaces.msg import Time

        now = time.time_ns()
        self.msg.header.stamp = Time(sec=now // 10**9, nanosec=now % 10**9)
        self.msg.position = values if values is not None else self.positions(self.k)
        self.k += 1
        self.pub.publish(self.msg)
        if self.window is not None:
            self.window.sent[now] = 1
        return now

    def _drain(self) -> None:
        now_ns = time.time_ns()
        for sub in (self.tf_sub, self.static_sub, self.world_sub):
            while True:
                taken = sub.handle.take_message(sub.msg_type, True)
                if taken is None:
                    break
                raw = taken[0]
                if sub is self.world_sub:
                    self.worlds += 1
                    continue
                if sub is self.static_sub:
                    self.static.append(raw)
                    continue
                if len(raw) < 16:
                    continue
                sec, nsec = struct.unpack_from("<iI", raw, 8)  # the first transform's stamp
                stamp = sec * 10**9 + nsec
                if self.first_tf is None and stamp >= self.after_ns:
                    self.first_tf = time.monotonic() - self.t0
                w = self.window
                if w is not None and w.sent.get(stamp) == 1:
                    w.sent[stamp] = 2
                    w.latency_ns.append(now_ns - stamp)
                if stamp in self.keep:
                    self.keep[stamp].append(raw)

    def _wait(self, timeout_s: float) -> None:
        ws = self._ws
        ws.clear_entities()
        for sub in (self.tf_sub, self.static_sub, self.world_sub):
            ws.add_subscription(sub.handle)
        ws.wait(max(0, int(timeout_s * 1e9)))
        self._drain()

    def run(self, seconds: float, rate: float, until: Callable[[], bool] | None = None,
            proc: Any = None) -> bool:
        """Send at ``rate`` for ``seconds`` (or until ``until()``), reading in between; whether ``until`` came."""
        return paced(seconds, rate, self.send, self._wait, until, proc)

    def settle(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._wait(min(0.01, end - time.monotonic()))

    def destroy(self) -> None:
        self.node.destroy_node()


@dataclass
class Model:
    name: str
    path: Path
    text: str
    names: list[str]
    lower: np.ndarray
    upper: np.ndarray
    fixed_children: set[str]
    parents: dict[str, str]  # child link -> parent link (the URDF tree)


def load(name: str, path: Path) -> Model:
    from robot_state_format.kinematics.tree import compile_model
    from robot_state_format.model.loader import load_model_file
    from robot_state_format.model.types import JointType

    model = load_model_file(path)
    tree = compile_model(model)
    names = list(tree.moving_joint_names)
    lo, hi = [], []
    for n in names:
        lim = model.joints[n].limits
        a = lim.lower if lim is not None and lim.lower is not None and math.isfinite(lim.lower) else -1.0
        b = lim.upper if lim is not None and lim.upper is not None and math.isfinite(lim.upper) else 1.0
        if not b > a:
            a, b = -1.0, 1.0
        lo.append(a)
        hi.append(b)
    fixed = {j.child for j in model.joints.values() if j.type is JointType.FIXED}
    parents = {j.child: j.parent for j in model.joints.values()}
    return Model(name, path, path.read_text(), names, np.array(lo), np.array(hi), fixed, parents)


def start(ros: Any, anchor: Anchor | None, variant: str, model: Model, workdir: Path, index: int,
          spawning: Callable[[], None] | None = None) -> Any:
    if variant == "floor":
        return start_node(ros, [sys.executable, str(FLOOR), "relay"], {}, ["-r", f"__ns:={NS}"],
                          f"{variant}-{model.name}-{index}", spawning=spawning)
    params: dict[str, Any] = {"robot_description": model.text, "ignore_timestamp": True}
    if variant != "cpp":
        params["snapshot_frequency"] = 0.0 if variant == "ours" else -1.0
    if variant == "cpp":
        assert anchor is not None
        return start_node(ros, anchor.command(), params, ["-r", f"__ns:={NS}"], f"{variant}-{model.name}-{index}",
                          anchor.env, spawning)
    return start_node(ros, our_command(), params, ["-r", f"__ns:={NS}"], f"{variant}-{model.name}-{index}",
                      spawning=spawning)


def measure(ros: Any, stream: Stream, anchor: Anchor | None, variant: str, model: Model, workdir: Path, index: int,
            rates: tuple[float, ...], window: float, probe: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    proc = start(ros, anchor, variant, model, workdir, index, stream.arm)  # the clock starts at the spawn
    try:
        if not stream.run(60.0, 100.0, lambda: stream.first_tf is not None, proc):
            raise RuntimeError(f"{variant}: no /tf in 60 s\n{proc.describe()}")
        out["startup"] = stream.first_tf
        if variant == "floor":  # start-up only: the least any rclpy node takes to its first /tf
            return out
        for rate in rates:
            stream.run(0.5, rate, proc=proc)
            stream.settle(0.05)
            w = stream.window = Window()
            stream.worlds = 0
            c0 = cpu_s(proc.pid)
            stream.run(window, rate, proc=proc)
            c1 = cpu_s(proc.pid)
            stream.window = None
            stream.settle(0.3)  # the last messages' /tf (not counted in the CPU)
            sent = len(w.sent)
            got = sum(1 for v in w.sent.values() if v == 2)
            lat = sorted(w.latency_ns)
            out[rate] = {"cpu_us": (c1 - c0) / sent * 1e6, "sent": sent, "lost": sent - got,
                         "lat_p50_ms": statistics.median(lat) / 1e6 if lat else float("nan"),
                         "lat_p99_ms": lat[min(len(lat) - 1, int(0.99 * len(lat)))] / 1e6 if lat else float("nan"),
                         "worlds": stream.worlds, "cpu_core": (c1 - c0) / window}
        out["rss"] = rss_mb(proc.pid)
        if probe:
            values = (stream.mid + stream.amp * np.cos(np.arange(len(stream.names)) * 0.7)).tolist()
            stream.settle(0.2)
            stamp = stream.send(values)
            stream.keep[stamp] = []
            end = time.monotonic() + 5.0
            while not stream.keep[stamp] and time.monotonic() < end:
                stream.settle(0.02)
            stream.settle(0.1)
            out["probe"] = (stream.keep.pop(stamp), list(stream.static))
    finally:
        proc.stop()
    return out


def transforms_of(raws: list[bytes]) -> dict[str, tuple[str, np.ndarray]]:
    """child frame -> (parent frame, x y z qx qy qz qw) over every TFMessage given (the last one wins)."""
    from rclpy.serialization import deserialize_message
    from tf2_msgs.msg import TFMessage

    out: dict[str, tuple[str, np.ndarray]] = {}
    for raw in raws:
        for t in deserialize_message(raw, TFMessage).transforms:
            tr, ro = t.transform.translation, t.transform.rotation
            out[t.child_frame_id] = (t.header.frame_id, np.array([tr.x, tr.y, tr.z, ro.x, ro.y, ro.z, ro.w]))
    return out


def link_poses(tf: dict[str, tuple[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Every child frame's 4x4 pose in its tree's root frame (composed along the parents)."""
    from robot_state_format.spatial import quaternion_to_matrix

    local = {}
    for child, (parent, v) in tf.items():
        x = np.eye(4)
        x[:3, :3] = quaternion_to_matrix(tuple(v[3:]))
        x[:3, 3] = v[:3]
        local[child] = (parent, x)
    out: dict[str, np.ndarray] = {}

    def pose(frame: str, depth: int = 0) -> np.ndarray:
        if frame in out:
            return out[frame]
        if frame not in local or depth > 512:
            return np.eye(4)
        parent, x = local[frame]
        out[frame] = pose(parent, depth + 1) @ x
        return out[frame]

    for child in local:
        pose(child)
    return out


def compare_tf(ours: tuple[list[bytes], list[bytes]], cpp: tuple[list[bytes], list[bytes]]) -> dict[str, Any]:
    """Max differences of ours against the C++ node's TF (dynamic and static), and what differs in the sets."""
    a = transforms_of(ours[0])
    a.update(transforms_of(ours[1]))
    b = transforms_of(cpp[0])
    b.update(transforms_of(cpp[1]))
    common = sorted(set(a) & set(b))
    parents_differ = [c for c in common if a[c][0] != b[c][0]]
    d_local = max((float(np.max(np.abs(a[c][1] - b[c][1]))) for c in common), default=float("nan"))
    pa, pb = link_poses(a), link_poses(b)
    d_link = max((float(np.max(np.abs(pa[c] - pb[c]))) for c in common), default=float("nan"))
    return {"frames": len(common), "only_ours": sorted(set(a) - set(b)), "only_cpp": sorted(set(b) - set(a)),
            "parents_differ": parents_differ, "max_transform_diff": d_local, "max_link_pose_diff": d_link}


def median(values: list[float]) -> float:
    vals = [v for v in values if v is not None and not math.isnan(v)]
    return statistics.median(vals) if vals else float("nan")


def report(model: Model, res: dict[str, list[dict[str, Any]]], rates: tuple[float, ...], have_cpp: bool) -> None:
    m = model.name
    anchor_is = "C++ robot_state_publisher 3.3.3 (rclcpp 29.3), same stream, same run, alternated"
    base = "cpp" if have_cpp else None
    for v in VARIANTS:
        if not res.get(v):
            continue
        runs = res[v]
        ups = [r["startup"] for r in runs]
        line = f"{m} {LABEL[v]}: start to first /tf {min(ups):.3f} s fastest, {median(ups):.3f} s median"
        if v == "floor":
            print(line)
            continue
        line += f"; RSS {median([r['rss'] for r in runs]):.1f} MB"
        for rate in rates:
            rr = [r[rate] for r in runs]
            line += (f"; {rate:g} Hz: CPU {median([x['cpu_us'] for x in rr]):.1f} us/JointState "
                     f"({median([x['cpu_core'] for x in rr]) * 100:.1f} % core), latency "
                     f"{median([x['lat_p50_ms'] for x in rr]):.3f} / {median([x['lat_p99_ms'] for x in rr]):.3f} ms, "
                     f"lost {sum(x['lost'] for x in rr)} of {sum(x['sent'] for x in rr)}")
            if v == "full":
                line += f", world_states {sum(x['worlds'] for x in rr)}"
        print(line)
    ours = res["ours"]
    if base is not None:
        cpp = res["cpp"]
        for rate in rates:
            tag = f"{rate / 1000:g} kHz" if rate >= 1000 else f"{rate:g} Hz"
            per = [(o[rate], c[rate]) for o, c in zip(ours, cpp)]
            FIGS.add(f"vs rsp {m} {tag}: CPU per JointState", median([o["cpu_us"] for o, _ in per]),
                     median([c["cpu_us"] for _, c in per]), "us",
                     ratio=median([o["cpu_us"] / c["cpu_us"] for o, c in per if c["cpu_us"] > 0]),
                     anchor_is=anchor_is + " (median of per-round ratios)", goal="<= 1.2 (beyond: <= 1.0)")
            FIGS.add(f"vs rsp {m} {tag}: latency stamp -> /tf median", median([o["lat_p50_ms"] for o, _ in per]),
                     median([c["lat_p50_ms"] for _, c in per]), "ms",
                     ratio=median([o["lat_p50_ms"] / c["lat_p50_ms"] for o, c in per]), anchor_is=anchor_is,
                     goal="<= 1.5")
            FIGS.add(f"vs rsp {m} {tag}: latency stamp -> /tf p99", median([o["lat_p99_ms"] for o, _ in per]),
                     median([c["lat_p99_ms"] for _, c in per]), "ms",
                     ratio=median([o["lat_p99_ms"] / c["lat_p99_ms"] for o, c in per]), anchor_is=anchor_is)
            lost_o, lost_c = sum(o["lost"] for o, _ in per), sum(c["lost"] for _, c in per)
            FIGS.add(f"vs rsp {m} {tag}: JointStates without /tf", lost_o, lost_c, "msgs",
                     ratio=None if lost_c == 0 else lost_o / lost_c,
                     anchor_is=f"the C++ node's, of {sum(c['sent'] for _, c in per)} sent to each", goal="0")
        FIGS.add(f"vs rsp {m}: RSS", median([r["rss"] for r in ours]), median([r["rss"] for r in cpp]), "MB",
                 anchor_is=anchor_is)
        fo, fc = min(r["startup"] for r in ours), min(r["startup"] for r in cpp)
        FIGS.add(f"vs rsp {m}: start to first /tf, fastest", fo, fc, "s", anchor_is=anchor_is + ", fastest runs",
                 goal=f"<= C++ + 0.2 s (here {fo - fc:+.3f} s)")
        mo, mc = median([r["startup"] for r in ours]), median([r["startup"] for r in cpp])
        FIGS.add(f"vs rsp {m}: start to first /tf, median", mo, mc, "s", anchor_is=anchor_is + ", medians",
                 goal=f"<= C++ + 0.2 s (here {mo - mc:+.3f} s)")
        if res.get("floor"):
            ff = min(r["startup"] for r in res["floor"])
            FIGS.add(f"vs rsp {m}: start to first /tf, a bare rclpy node, fastest", ff, fc, "s",
                     anchor_is=anchor_is + ", fastest runs (the floor of any rclpy node: interpreter, rclpy, "
                                           "discovery)", goal=f"here {ff - fc:+.3f} s")
    if res.get("floor"):
        ff, fo = min(r["startup"] for r in res["floor"]), min(r["startup"] for r in ours)
        FIGS.add(f"vs rsp {m}: start to first /tf, ours vs a bare rclpy node, fastest", fo, ff, "s",
                 anchor_is="bench/anchor_node.py relay (rclpy and the message packages only), same run",
                 goal=f"what this package adds: {fo - ff:+.3f} s")
    if res.get("full"):
        full = res["full"]
        for rate in rates:
            tag = f"{rate / 1000:g} kHz" if rate >= 1000 else f"{rate:g} Hz"
            per = [(f[rate], o[rate]) for f, o in zip(full, ours)]
            FIGS.add(f"vs rsp {m} {tag}: CPU per JointState, full job (snapshot_frequency -1) vs TF only",
                     median([f["cpu_us"] for f, _ in per]), median([o["cpu_us"] for _, o in per]), "us",
                     ratio=median([f["cpu_us"] / o["cpu_us"] for f, o in per if o["cpu_us"] > 0]),
                     anchor_is="our node TF only (snapshot_frequency 0), same run")


def breakdown(model: Model, context: Any, n: int) -> dict[str, float]:
    """Where a JointState's microseconds go in our node, each stage timed alone in this process (romeo's
    stream): the wait (one rclpy wait set as ros/wait_loop.py fills it, a message ready), the raw take,
    the CDR read, the merge (HotPath without kinematics and encoding), the kinematics and TF encoding (one
    TfWriter; Pose7 and PreparedTf for a model it does not take), the raw publish (one subscriber matched), the node clock."""
    from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
    from rclpy.node import Node
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    from robot_state_format.model.loader import load_model
    from robot_state_format.ros.description import LoadedDescription
    from robot_state_format.ros.node_now import NodeNow
    from robot_state_format.ros.publisher_runtime import Runtime
    from robot_state_format.ros.publisher_wire import JointStateReader

    node = Node("rsp_bench_breakdown", context=context, start_parameter_services=False, enable_rosout=False)
    deep = QoSProfile(depth=n + 10, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
    pub = node.create_publisher(JointState, "/rspbench_breakdown/joint_states", deep)
    sub = node.create_subscription(JointState, "/rspbench_breakdown/joint_states", lambda _m: None, deep, raw=True)
    tf_pub = node.create_publisher(TFMessage, "/rspbench_breakdown/tf", 100)
    node.create_subscription(TFMessage, "/rspbench_breakdown/tf", lambda _m: None, 100, raw=True)
    rt = Runtime(LoadedDescription(model.text, load_model(model.text), model.name), "", 0, True)
    reader = JointStateReader()
    raws = []
    mid, amp = (model.lower + model.upper) / 2, np.minimum((model.upper - model.lower) / 2 * 0.8, 1.0)

    def positions(k: int) -> list[float]:
        return (mid + amp * np.sin(0.001 * k + np.arange(len(model.names)))).tolist()

    for k in range(n):
        msg = JointState(name=model.names, position=positions(k))  # as the stream: inside the limits
        msg.header.stamp.sec, msg.header.stamp.nanosec = 1000 + k // 1000, (k % 1000) * 1_000_000
        raws.append(serialize_message(msg))
    end = time.monotonic() + 5.0
    while sub.handle.get_publisher_count() < 1 and time.monotonic() < end:
        time.sleep(0.01)
    out: dict[str, float] = {}

    def timed(name: str, fn: Callable[[int], Any], count: int = n) -> None:
        t0 = time.perf_counter()
        for i in range(count):
            fn(i)
        out[name] = (time.perf_counter() - t0) / count * 1e6

    for raw in raws:  # n messages waiting
        pub.publish(raw)
    time.sleep(0.2)
    ws = _rclpy.WaitSet(1, 1, 1, 0, 7, 0, context.handle)
    services = [s.handle for s in node.services]
    gc = node.create_guard_condition(lambda: None)

    def wait(_i: int) -> None:  # what spin_hot does per wake-up, the message already there
        ws.clear_entities()
        ws.add_subscription(sub.handle)
        for srv in services:
            ws.add_service(srv)
        ws.add_guard_condition(gc.handle)
        ws.wait(0)
        ws.is_ready("subscription", 0)
        ws.get_ready_entities("guard_condition")

    timed("wait set filled and waited on, a message ready", wait, 2000)
    timed("raw take", lambda _i: sub.handle.take_message(sub.msg_type, True))
    timed("CDR read (JointStateReader)", lambda i: reader.read(raws[i]))
    decoded = [reader.read(r) for r in raws]
    plan = rt.hot._hot(decoded[0])
    assert plan is not None and plan.tf is not None
    tf = plan.tf
    timed("apply", lambda i: rt.hot.apply(decoded[i], 10**18 + i))
    writer = plan.writer
    if plan.scalar is not None:  # a list of at most SCALAR_MAX rows: plain floats, no numpy call
        scalar = plan.scalar
        stage = "kinematics + TF encoding (ScalarTfWriter, plain floats into the prepared buffer)"
        timed(stage, lambda i: scalar.write(rt.cache.views.q, 10**18 + i, True))
        apply = out.pop("apply")
        out["merge + throttle (HotPath.apply without the writer)"] = max(0.0, apply - out[stage])
    elif writer is not None:  # the 1 kHz path: kinematics and encoding in one, the moving numbers only
        stage = "kinematics + TF encoding (TfWriter, into the prepared buffer)"
        timed(stage, lambda i: writer.write(rt.cache.q, 10**18 + i, True))
        apply = out.pop("apply")
        out["merge + throttle (HotPath.apply without the TfWriter)"] = max(0.0, apply - out[stage])
    else:
        timed("kinematics (Pose7, every tree joint)", lambda _i: rt.joint_pose7())
        p7 = rt.joint_pose7().copy()
        timed("TF encoding (PreparedTf.write)", lambda i: tf.write(p7, 10**18 + i))
        apply = out.pop("apply")  # the merge and the throttle: HotPath.apply without the two above
        out["merge + throttle (HotPath.apply without kinematics and encoding)"] = max(
            0.0, apply - out["kinematics (Pose7, every tree joint)"] - out["TF encoding (PreparedTf.write)"])
    publish_raw = tf_pub.handle.publish_raw
    timed("raw publish (55 transforms, one subscriber)", lambda _i: publish_raw(tf.buffer))
    now = NodeNow(node.get_clock())  # the node's own (time.time_ns while ROS time is not active)
    timed("node clock (NodeNow)", lambda _i: now.now_ns())
    now.destroy()
    node.destroy_node()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="2 rounds, 4 s windows")
    ap.add_argument("--smoke", action="store_true", help="1 round, 1 s windows, arm7_gripper only; never builds")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--window", type=float, default=None, help="seconds of stream measured per rate")
    ap.add_argument("--models", default="arm7_gripper,romeo", help="arm7_gripper, romeo, or .urdf paths")
    ap.add_argument("--rates", default="100,1000")
    ap.add_argument("--no-full", action="store_true", help="skip our node with snapshot_frequency -1")
    ap.add_argument("--no-floor", action="store_true", help="skip the bare rclpy node's start-up")
    ap.add_argument("--no-build", action="store_true", help="use the anchor only when already built")
    ap.add_argument("--breakdown", action="store_true", help="only where our node's microseconds go (romeo)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    rounds = a.rounds or (1 if a.smoke else 2 if a.quick else 3)
    window = a.window or (1.0 if a.smoke else 4.0 if a.quick else 8.0)
    rates = tuple(float(r) for r in a.rates.split(","))
    print(f"machine: {describe_machine()}")
    # installed packages carry bytecode (pip, apt, colcon, ./run setup): so does this tree's (bench_footprint.py)
    compileall.compile_dir(str(ROOT / "robot_state_format"), quiet=1)
    if a.smoke or a.no_build:
        anchor, why = find_anchor()
    else:
        t0 = time.monotonic()
        anchor, why = build_anchor()
        if anchor is not None:
            print(f"anchor: {anchor.exe} (build or cache check {time.monotonic() - t0:.1f} s)")
    if anchor is None:
        print(f"skip: the C++ robot_state_publisher comparison: {why}")
    from bench_state_publisher import find_romeo

    models = []
    for m in (["arm7_gripper"] if a.smoke else a.models.split(",")):
        if m == "romeo":
            models.append(load("romeo", find_romeo()))
        elif m == "arm7_gripper":
            models.append(load(m, ROOT / "robot_state_format" / "samples" / "arm7_gripper.urdf"))
        else:
            models.append(load(Path(m).stem, Path(m)))

    from ros_harness import RosHarness, init_context, shutdown_context  # type: ignore[import-not-found]

    os.environ.pop("ROBOT_STATE_FORMAT_KERNEL", None)  # the default install
    context = init_context()
    workdir = Path(tempfile.mkdtemp(prefix="bench_vs_rsp_"))
    ros = RosHarness(context, workdir)
    variants = [v for v in VARIANTS if (v != "cpp" or anchor is not None) and (v != "full" or not a.no_full)
                and (v != "floor" or not a.no_floor)]
    try:
        for model in models:
            if model.name != "romeo" and len(models) > 1:
                continue
            parts = {k: min(v, breakdown(model, context, 500 if not a.smoke else 50)[k]) for k, v in
                     breakdown(model, context, 500 if not a.smoke else 50).items()}  # the better of two runs
            total = sum(parts.values())
            print(f"{model.name}: where a JointState's microseconds go in our node (each stage alone, in process):")
            for k, v in parts.items():
                print(f"  {k:60s} {v:7.2f} us")
                FIGS.add(f"vs rsp breakdown {model.name}: {k}", v, total, "us", anchor_is="the sum of the stages")
            print(f"  {'sum':60s} {total:7.2f} us")
        if a.breakdown:
            models = []
        for model in models:
            stream = Stream(context, model.names, model.lower, model.upper)
            try:
                res: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
                for r in range(rounds):
                    order = variants[r % len(variants):] + variants[:r % len(variants)]
                    for v in order:
                        res[v].append(measure(ros, stream, anchor, v, model, workdir, r, rates, window,
                                              probe=r == 0 and v in ("ours", "cpp")))
                report(model, res, rates, anchor is not None)
                if anchor is not None:
                    cmp = compare_tf(res["ours"][0]["probe"], res["cpp"][0]["probe"])
                    print(f"{model.name}: TF against the C++ node: {cmp['frames']} frames, max |diff| of a transform "
                          f"{cmp['max_transform_diff']:.2g}, of a link pose from the root {cmp['max_link_pose_diff']:.2g}"
                          f"; only ours {cmp['only_ours']}, only C++ {cmp['only_cpp']}, parents differ "
                          f"{cmp['parents_differ']}")
                    FIGS.add(f"vs rsp {model.name}: TF max |difference| to the C++ node",
                             max(cmp["max_transform_diff"], cmp["max_link_pose_diff"]) * 1e15, None, "1e-15",
                             anchor_is=f"{cmp['frames']} frames, /tf and /tf_static, each transform and each "
                                       "link's pose from the root", goal="<= 1e-9 (1e6 in this unit)")
            finally:
                stream.destroy()
    finally:
        ros.close()
        shutdown_context(context)
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    FIGS.emit(a.json)


if __name__ == "__main__":
    main()
