"""state_store recording and timed playback over real DDS.

A node-written recording reads back, message for message, with the mcap reader and with rosbags;
a recording killed with SIGKILL reads back up to its last chunk; playback keeps the recorded pace,
loops with stamps shifted by whole loop lengths, and pauses.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest
from optional import MCAP, needs
from repo_paths import REPO_ROOT

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

import itertools

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from ros_harness import RosHarness

from robot_state_format.recording import JOINT_STATE_TYPE, STRING_TYPE, RecordingWriter, decode_all

LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
RELIABLE = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
RELIABLE_LATE_JOINER = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                                  durability=DurabilityPolicy.TRANSIENT_LOCAL)
NODE = "/state_store"


def _trigger(ros: RosHarness, name: str) -> Any:
    from std_srvs.srv import Trigger

    client = ros.wait_for_service(f"{NODE}/{name}", Trigger)
    return ros.call(client, Trigger.Request())


def _joint_state(i: int) -> Any:
    from sensor_msgs.msg import JointState

    msg = JointState()
    msg.header.stamp.sec = 50 + i
    msg.header.stamp.nanosec = i * 1000
    msg.name = ["joint A", "joint B"]
    msg.position = [0.01 * i, -0.02 * i]
    msg.velocity = [1.0 * i, 2.0]
    return msg


def _send(ros: RosHarness, n: int) -> tuple[list[Any], str]:
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    js_pub = ros.node.create_publisher(JointState, "joint_states", 100)
    ws_pub = ros.node.create_publisher(String, "world_state", LATCHED)
    ros.wait_for_matched(js_pub)
    ros.wait_for_matched(ws_pub)
    ros.spin_for(0.2)  # the node's (best-effort) reader matches our writer too
    text = '<world_state name="w" version="1.0"><stamp sec="7" nanosec="8"/></world_state>'
    ws_pub.publish(String(data=text))
    sent = []
    for i in range(n):
        msg = _joint_state(i)
        js_pub.publish(msg)
        sent.append(msg)
        ros.spin_for(0.004)
    return sent, text


@needs(*MCAP, "rosbags")
def test_node_recording_reads_back_with_mcap_and_rosbags(ros: RosHarness, tmp_path: Path) -> None:
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    from rosbags.highlevel import AnyReader

    ros.start_node("state_store", {"output_dir": str(tmp_path), "record": True, "joint_states_qos": "reliable"})
    ros.wait_for_service(f"{NODE}/stop_recording")
    sent, text = _send(ros, 60)
    ros.spin_for(0.3)
    r = _trigger(ros, "stop_recording")
    assert r.success, r.message
    bag = Path(r.message.split(" (")[0])
    assert bag.parent == tmp_path and (bag / "metadata.yaml").exists()

    with open(next(bag.glob("*.mcap")), "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        got = [(ch.topic, dec) for _, ch, _, dec in reader.iter_decoded_messages()]
    with AnyReader([bag]) as ar:
        got_rosbags = [(c.topic, ar.deserialize(raw, c.msgtype)) for c, _, raw in ar.messages()]
    for messages in (got, got_rosbags):
        js = [m for t, m in messages if t == "/joint_states"]
        ws = [m for t, m in messages if t == "/world_state"]
        assert [m.data for m in ws] == [text]
        assert len(js) == len(sent)  # reliable reader and writer: nothing lost
        for m, s in zip(js, sent, strict=True):
            assert list(m.name) == list(s.name)
            assert list(m.position) == list(s.position) and list(m.velocity) == list(s.velocity)
            assert (m.header.stamp.sec, m.header.stamp.nanosec) == (s.header.stamp.sec, s.header.stamp.nanosec)


@needs(*MCAP)
def test_killed_recording_reads_back_up_to_last_chunk(ros: RosHarness, tmp_path: Path) -> None:
    from robot_state_format.recording import read_recording

    store = ros.start_node("state_store", {"output_dir": str(tmp_path), "record": True,
                                           "joint_states_qos": "reliable"})
    ros.wait_for_service(f"{NODE}/stop_recording")
    sent, _ = _send(ros, 80)
    bag = next(p for p in tmp_path.iterdir() if p.is_dir())
    # A chunk ends once 0.5 s have passed since the last (checked every 0.2 s): wait, while the
    # node runs, until its chunks hold every message (reliable QoS: none lost); on a loaded machine
    # the node may receive them late, so a fixed sleep would race.
    on_disk = 0
    for _ in range(100):
        ros.spin_for(0.1)
        on_disk = sum(1 for t, _, _ in decode_all(bag) if t == "/joint_states")
        if on_disk == len(sent):
            break
    assert on_disk == len(sent), f"after 10 s the running node's chunks hold {on_disk} of {len(sent)} messages"
    store.stopping = True  # killed on purpose
    os.kill(store.pid, signal.SIGKILL)
    store.proc.wait()
    assert not (bag / "metadata.yaml").exists()  # never closed
    done: list[bool] = []
    list(read_recording(bag, complete=done))
    assert done == [False]
    js = [m for t, _, m in decode_all(bag) if t == "/joint_states"]
    assert [list(m.position) for m in js] == [list(s.position) for s in sent]


def _write_timeline(directory: Path, n: int, step_ns: int) -> list[int]:
    w = RecordingWriter(directory)
    w.add_topic("/joint_states", JOINT_STATE_TYPE)
    w.add_topic("/world_state", STRING_TYPE)
    times = []
    for i in range(n):
        t = 5 * 10**9 + i * step_ns
        stamp = {"sec": t // 10**9, "nanosec": t % 10**9}
        w.write_message("/joint_states", {"header": {"stamp": stamp, "frame_id": ""}, "name": ["j"],
                                          "position": [float(i)], "velocity": [], "effort": []}, t)
        times.append(t)
    w.write_message("/world_state", {"data": '<world_state name="w" version="1.0"><stamp sec="5" nanosec="0"/>'
                                             "</world_state>"}, 5 * 10**9)
    w.close()
    return times


@needs(*MCAP)
def test_playback_keeps_pace_loops_and_pauses(ros: RosHarness, tmp_path: Path) -> None:
    import time

    from sensor_msgs.msg import JointState

    n, step = 20, 20_000_000  # 20 messages, 20 ms apart
    _write_timeline(tmp_path / "bag", n, step)
    ros.start_node("state_store", {"playback_path": str(tmp_path / "bag"), "loop": True, "rate": 2.0})
    received: list[tuple[float, Any]] = []
    sub = ros.node.create_subscription(JointState, "joint_states", lambda m: received.append((time.monotonic(), m)),
                                       RELIABLE)
    ros.wait_for_matched(sub)
    r = _trigger(ros, "play")
    assert r.success, r.message
    ros.spin_until(lambda: len(received) >= 2 * n + 5, timeout=10, what="two loops of playback")
    msgs = [m for _, m in received]
    first = int(msgs[0].position[0])
    stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in msgs]
    assert all(b > a for a, b in itertools.pairwise(stamps))  # looping never goes back in time
    # the loop length is the span plus one step: the stamp of value i in loop k is t_i + k * n * step
    for m, s in zip(msgs, stamps):
        i = int(m.position[0])
        assert (s - (5 * 10**9 + i * step)) % (n * step) == 0
    assert [int(m.position[0]) for m in msgs[:n - first]] == list(range(first, n))
    # pace: 20 ms steps at rate 2 -> 10 ms apart on the wall clock
    wall = [t for t, _ in received[1:n]]
    gaps = sorted(b - a for a, b in itertools.pairwise(wall))
    assert 0.006 < gaps[len(gaps) // 2] < 0.014
    # pause stops the flow, resume restarts it
    assert _trigger(ros, "pause").success
    ros.spin_for(0.1)
    count = len(received)
    ros.spin_for(0.3)
    assert len(received) == count
    assert _trigger(ros, "resume").success
    ros.spin_until(lambda: len(received) > count + 5, timeout=5, what="playback resumed")
    assert _trigger(ros, "stop_playback").success
    ros.node.destroy_subscription(sub)


def test_playback_from_directory_of_restart_files(ros: RosHarness, tmp_path: Path) -> None:
    from sensor_msgs.msg import JointState

    from robot_state_format.usdf.types import JointState as UJointState
    from robot_state_format.usdf.types import ModelState, Stamp, WorldState
    from robot_state_format.usdf.writer import write_world_state

    model_file = REPO_ROOT / "robot_state_format" / "samples" / "double_pendulum.urdf"
    d = tmp_path / "files"
    d.mkdir()
    for i in range(5):
        ws = WorldState("w", stamp=Stamp(100, i * 10_000_000), model_states=[ModelState(
            "linkage", joint_states=[UJointState("joint A", (0.1 * i,)), UJointState("joint B", (-0.1 * i,))])])
        (d / f"f{i}.usdf").write_text(write_world_state(ws))
    ros.start_node("state_store", {"playback_path": str(d), "model_file": str(model_file)})
    received: list[Any] = []
    # transient_local: this reader's match is seen here before the node's writer may have seen it; the writer's
    # history (the last 10, docs/state_store.md) still holds all 5 when it does (a volatile reader could miss some)
    sub = ros.node.create_subscription(JointState, "joint_states", received.append, RELIABLE_LATE_JOINER)
    ros.wait_for_matched(sub)
    assert _trigger(ros, "play").success
    ros.spin_until(lambda: len(received) >= 5, timeout=10, what="5 replayed restart files")
    assert [list(m.position) for m in received] == [[0.1 * i, -0.1 * i] for i in range(5)]
    assert [m.header.stamp.nanosec for m in received] == [i * 10_000_000 for i in range(5)]
    ros.node.destroy_subscription(sub)


@needs(*MCAP)
def test_playback_publishes_clock_on_the_recorded_timeline(ros: RosHarness, tmp_path: Path) -> None:
    import time

    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState

    n, step, rate = 20, 20_000_000, 2.0  # 20 messages 20 ms apart, played at twice the pace
    times = _write_timeline(tmp_path / "bag", n, step)
    loop = n * step  # span plus one step
    proc = ros.start_node("state_store", {"playback_path": str(tmp_path / "bag"), "loop": True, "rate": rate,
                                          "publish_clock": True})
    clocks: list[tuple[float, int]] = []
    states: list[Any] = []
    clock_sub = ros.node.create_subscription(
        Clock, "/clock", lambda m: clocks.append((time.monotonic(), m.clock.sec * 10**9 + m.clock.nanosec)),
        RELIABLE)
    js_sub = ros.node.create_subscription(JointState, "joint_states", states.append, RELIABLE)
    r = _trigger(ros, "play")  # the /clock publisher exists once playback starts
    assert r.success, r.message
    ros.wait_for_matched(clock_sub)
    ros.spin_until(lambda: len(clocks) >= 2 * n + 10 and len(states) >= 2 * n + 5, timeout=15,
                   what="two loops of /clock")
    assert _trigger(ros, "stop_playback").success
    values = [c for _, c in clocks]
    # monotonic: never back in time, also across loop boundaries
    assert all(b >= a for a, b in itertools.pairwise(values))
    assert len(set(values)) > 2 * n // 2
    # every /clock value is a recorded stamp shifted by whole loop lengths
    for c in values:
        k, rest = divmod(c - times[0], loop)
        assert k >= 0 and times[0] + rest in times, c
    assert max(values) >= times[0] + loop  # it went on into the second loop, shifted consistently
    # the clock is the time of each played message: every joint_states stamp was a /clock value
    published = set(values)
    stamps = [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in states]
    inside = [s for s in stamps if values[0] <= s <= values[-1]]  # /clock may match a little later
    assert len(inside) >= n and all(s in published for s in inside)
    # pace: /clock advances at rate times the wall clock (whole run, tolerant of scheduling jitter)
    (w0, c0), (w1, c1) = clocks[0], clocks[-1]
    assert c1 > c0 and 0.8 < ((c1 - c0) / 1e9 / rate) / (w1 - w0) < 1.25
    ros.node.destroy_subscription(clock_sub)
    ros.node.destroy_subscription(js_sub)
    assert proc.stop() == 0 and proc.stopped_by == "SIGINT"


CLOCK_REFUSED = r"""
import sys
import rclpy
from rclpy.parameter import Parameter
from robot_state_format.ros.state_store import StateStore, clock_type
assert clock_type() is not None
# from here on, as in a set-up without rosgraph_msgs: importing it fails (rclpy's own time source
# imported it already above; it only listens to /clock)
sys.modules["rosgraph_msgs"] = None
sys.modules["rosgraph_msgs.msg"] = None
assert clock_type() is None
rclpy.init(args=sys.argv)
node = StateStore(parameter_overrides=[Parameter("playback_path", value=sys.argv[1]),
                                       Parameter("publish_clock", value=True)])
played = node.play()  # set at start (a parameter file): playback refuses, saying why
print("PLAY", played.ok, played.message)
node.set_parameters([Parameter("publish_clock", value=False)])
r = node.set_parameters([Parameter("publish_clock", value=True)])[0]
print("SET", r.successful, r.reason)
print("TOPICS", [t for t, _ in node.get_topic_names_and_types() if t == "/clock"])
node.destroy_node()
rclpy.try_shutdown()
"""


def test_publish_clock_is_refused_without_rosgraph_msgs(tmp_path: Path) -> None:
    import subprocess
    import sys

    _write_timeline(tmp_path / "bag", 3, 10_000_000)
    out = subprocess.run([sys.executable, "-c", CLOCK_REFUSED, str(tmp_path / "bag")], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if line.startswith(("SET", "PLAY", "TOPICS")))
    assert lines["PLAY"].startswith("False ") and "rosgraph_msgs" in lines["PLAY"]
    assert lines["SET"].startswith("False ") and "rosgraph_msgs" in lines["SET"]
    assert lines["TOPICS"] == "[]"  # nothing was published on /clock


REALTIME_OPT_IN = r"""
import json
import os
import sys
import time
import rclpy
from rclpy.parameter import Parameter
from robot_state_format.ros.state_store import StateStore
rclpy.init(args=sys.argv)
for realtime in (False, True):
    before = (sys.getswitchinterval(), os.sched_getscheduler(0))
    node = StateStore(parameter_overrides=[Parameter("playback_path", value=sys.argv[1]),
                                           Parameter("realtime_playback", value=realtime)])
    played = node.play()
    during = (sys.getswitchinterval(), os.sched_getscheduler(0))
    end = time.monotonic() + 0.8  # the 20 ms recording ends; the 0.2 s timer sees it
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.05)
    after = (sys.getswitchinterval(), os.sched_getscheduler(0))
    print("RT " + json.dumps({"realtime": realtime, "ok": played.ok, "msg": played.message, "before": before, "during": during,
                             "after": after}), flush=True)
    node.destroy_node()
rclpy.try_shutdown()
"""


def test_real_time_scheduling_is_opt_in_and_restored(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    _write_timeline(tmp_path / "bag", 3, 10_000_000)
    out = subprocess.run([sys.executable, "-c", REALTIME_OPT_IN, str(tmp_path / "bag")], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    runs = {r["realtime"]: r for r in (json.loads(line[3:]) for line in out.stdout.splitlines()
                                          if line.startswith("RT "))}
    off, on = runs[False], runs[True]
    assert off["ok"] and on["ok"], (off["msg"], on["msg"])
    assert off["during"] == off["before"] and off["after"] == off["before"]  # by default: the process left alone
    assert on["during"][0] == pytest.approx(0.0002,
                                            rel=0, abs=1e-12) and on["after"] == on["before"]  # asked for: applied, restored
    assert on["during"][1] == os.SCHED_FIFO or "no real-time priority for the executor" in out.stderr
