"""``robot-state-format save | record | replay``: the node's code started from the command line."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from optional import MCAP, needs

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from ros_harness import HarnessTimeout, RosHarness
from test_state_store import MODEL_FILE, pendulum_state

from robot_state_format.usdf.types import JointState
from robot_state_format.usdf.writer import write_world_state

LATCHED = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL)
LATCHED_DEEP = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                          durability=DurabilityPolicy.TRANSIENT_LOCAL)
CLI = [sys.executable, "-m", "robot_state_format"]


def test_replay_refuses_a_mismatched_file(tmp_path: Path) -> None:
    wrong = pendulum_state(0.1, 0.2)
    wrong.model_states[0].joint_states[0] = JointState("joint A", (0.1, 0.2))  # 2 values for a 1-DOF joint
    f = tmp_path / "wrong.usdf"
    f.write_text(write_world_state(wrong))
    r = subprocess.run([*CLI, "replay", str(f), "--model", MODEL_FILE, "--hold", "0"], capture_output=True,
                       text=True, timeout=30, env=dict(os.environ))
    assert r.returncode == 1
    assert "joint A" in r.stderr and "positions" in r.stderr


def test_save_without_snapshot_exits_1(tmp_path: Path) -> None:
    r = subprocess.run([*CLI, "save", "--output", str(tmp_path), "--timeout", "0.5"], capture_output=True, text=True,
                       timeout=30, env=dict(os.environ))
    assert r.returncode == 1 and "no snapshot" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_replay_cli_serves_late_subscribers(ros: RosHarness, tmp_path: Path) -> None:
    from sensor_msgs.msg import JointState as JointStateMsg

    f = tmp_path / "ok.usdf"
    f.write_text(write_world_state(pendulum_state(0.25, -0.75)))
    proc = ros.start_node("robot-state-format", args=["replay", str(f), "--model", MODEL_FILE, "--hold", "20"])
    js = ros.collect("joint_states", JointStateMsg, LATCHED, timeout=15)[0]
    assert list(js.position) == [0.25, -0.75]
    assert proc.alive()
    assert proc.stop() == 0


@needs(*MCAP)
def test_record_cli_writes_a_readable_recording(ros: RosHarness, tmp_path: Path) -> None:
    from std_msgs.msg import String

    from robot_state_format.recording import decode_all

    pub = ros.node.create_publisher(String, "world_state", LATCHED)
    text = write_world_state(pendulum_state(0.5, 0.5))
    pub.publish(String(data=text))
    # the latched snapshot reaches the recorder once discovery matched it: the window allows for a loaded machine
    # and a slow DDS discovery (Fast DDS starts take 2-3 s in some runs: 3 s missed it once in a Jazzy CI run)
    r = subprocess.run([*CLI, "record", "--output", str(tmp_path), "--duration", "8.0"], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    bag = Path(r.stdout.strip().split(" (")[0])
    assert bag.parent == tmp_path and (bag / "metadata.yaml").exists()
    got = decode_all(bag)
    assert [(t, m.data) for t, _, m in got] == [("/world_state", text)]


@needs(*MCAP)
def test_replay_cli_plays_a_recording_and_exits(ros: RosHarness, tmp_path: Path) -> None:
    from sensor_msgs.msg import JointState as JointStateMsg
    from test_state_store_recording import _write_timeline

    _write_timeline(tmp_path / "bag", 30, 10_000_000)  # 0.3 s of recording
    # A transient_local subscription: samples written before its side of discovery completes are
    # still delivered from the publisher's history (a volatile one would start at its own match).
    inbox = ros.subscribe("joint_states", JointStateMsg, LATCHED_DEEP)
    # Playback waits until this test's subscription matches and has acknowledged the first message: every
    # message then arrives, in order. (Runs that lost the first 4-17 messages, mostly on Jazzy under load, were
    # the replaying node counting its own joint_states reader as the subscriber it waited for.)
    proc = ros.start_node("robot-state-format", args=["replay", str(tmp_path / "bag"), "--speed", "0.1",
                                                      "--wait-for-subscribers", "1"])
    ros.spin_until(lambda: not proc.alive(), timeout=20, what="playback to end")
    assert proc.returncode == 0, proc.output()
    assert "published 31 messages" in proc.output()
    assert proc.stop() == 0  # it has exited: marks it expected, so the harness does not report its exit
    with contextlib.suppress(HarnessTimeout):  # the assertion below shows which arrived
        ros.spin_until(lambda: len(inbox.messages) >= 30, timeout=5, what="all 30 joint states")
    assert [int(m.position[0]) for m in inbox.messages] == list(range(30))


@needs(*MCAP)
@pytest.mark.parametrize("want", [1, 50])
def test_replay_cli_gives_up_when_nobody_subscribes(ros: RosHarness, tmp_path: Path, want: int) -> None:
    from test_state_store_recording import _write_timeline

    _write_timeline(tmp_path / "bag", 5, 10_000_000)
    # want=1: the replaying node's own joint_states reader is nobody to wait for (it once counted, and playback
    # started before the subscriber the user waited for had matched)
    proc = ros.start_node("robot-state-format", args=["replay", str(tmp_path / "bag"), "--wait-for-subscribers",
                                                      str(want), "--timeout", "1"])
    ros.spin_until(lambda: not proc.alive(), timeout=20, what="replay to give up")
    assert proc.returncode == 1, proc.output()
    assert re.search(rf"replay: error: 0 of {want} subscriber\(s\) on joint_states after 1 s; nothing played",
                     proc.output()), proc.output()
    assert "published" not in proc.output()
