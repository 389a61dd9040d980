"""kill -9 of state_store at random moments during checkpoint storms and recordings.

    .venv/bin/python bench/stress_kill9.py                  # 200 kills (issue 14), some minutes
    .venv/bin/python bench/stress_kill9.py --kills 5 --check

Each round starts state_store (output_dir shared by all rounds, a checkpoint every 10 ms, the last 5
kept, recording on), publishes world_state snapshots (new stamp each) and JointState messages at
~200 Hz each, and sends SIGKILL after a random 0.05-2 s (sometimes before the node is even up).
After each kill every restart file in the directory must read as strict USDF (checked before the
next start, whose checkpoints rotate the old ones away), and at the end every recording must read
back (up to its last complete chunk; each JointState read back is one that was sent, in order).
Figures in docs/robustness.md.
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))

from bench.machine import describe_machine  # noqa: E402

S = 1_000_000_000


def run(kills: int, out: Path, seed: int) -> dict[str, Any]:
    import rclpy
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
    from ros_harness import RosHarness, configure_ros_environment, init_context, shutdown_context
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    from robot_state_format.errors import RobotStateFormatError
    from robot_state_format.usdf.reader import read_world_state_file
    from robot_state_format.usdf.types import JointState as UJoint
    from robot_state_format.usdf.types import ModelState, Stamp, WorldState
    from robot_state_format.usdf.writer import write_world_state

    configure_ros_environment()
    rng = random.Random(seed)
    context = init_context()
    ros = RosHarness(context, Path(tempfile.mkdtemp(prefix="kill9_")))
    latched = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    ws_pub = ros.node.create_publisher(String, "/k9/world_state", latched)
    js_pub = ros.node.create_publisher(JointState, "/k9/joint_states", 100)
    k = 0
    checked = 0
    bad_after_kill: list[str] = []
    sent_js: dict[int, float] = {}
    early = 0
    try:
        for i in range(kills):
            proc = ros.start_node("state_store", {"output_dir": str(out), "checkpoint_period": 0.01,
                                                  "keep_last": 5, "record": True},
                                  ros_args=["-r", "__ns:=/k9"], name=f"store{i}")
            bags_before = sum(1 for p in out.iterdir() if p.is_dir())
            started = time.monotonic()
            # one round in ten is killed at a random moment of its start-up; the others at a random
            # moment once the node records (its recording directory exists)
            during_start = rng.random() < 0.1
            kill_at = started + rng.uniform(0.05, 2.0) if during_start else float("inf")

            def publish() -> None:
                nonlocal k
                k += 1
                ns = 1_000 * S + k * 5_000_000
                state = WorldState("w", stamp=Stamp(ns // S, ns % S), model_states=[ModelState(
                    "m", pose=(0.001 * k, 0.0, 0.0, 0.0, 0.0, 0.0), joint_states=[UJoint("j", (0.001 * k,))])])
                ws_pub.publish(String(data=write_world_state(state)))
                msg = JointState()
                msg.header.stamp.sec, msg.header.stamp.nanosec = ns // S, ns % S
                msg.name = ["j"]
                msg.position = [0.001 * k]
                js_pub.publish(msg)
                sent_js[ns] = 0.001 * k

            while time.monotonic() < kill_at:
                publish()
                ros.spin_for(0.005)
                if kill_at == float("inf") and sum(1 for p in out.iterdir() if p.is_dir()) > bags_before:
                    kill_at = time.monotonic() + rng.uniform(0.0, 1.5)
                if time.monotonic() - started > 60:
                    raise RuntimeError("state_store did not start recording within 60 s:\n" + proc.output())
            early += during_start
            proc.stopping = True
            os.kill(proc.pid, signal.SIGKILL)
            proc.proc.wait()
            if proc in ros.processes:  # closed already: nothing for ros.close() to stop
                ros.processes.remove(proc)
            for f in out.glob("*.usdf"):  # before the next start rotates the checkpoints
                checked += 1
                try:
                    read_world_state_file(f)
                except RobotStateFormatError as exc:
                    bad_after_kill.append(f"round {i}: {f.name}: {str(exc)[:200]}")
    finally:
        ros.close()
        shutdown_context(context)
        del rclpy
    return {"sent": k, "sent_js": sent_js, "early": early, "checked": checked, "bad": bad_after_kill}


def verify(out: Path, sent_js: dict[int, float]) -> dict[str, Any]:
    from robot_state_format.errors import RobotStateFormatError
    from robot_state_format.recording import decode_all, read_recording
    from robot_state_format.usdf.reader import read_world_state_file

    bad: list[str] = []
    files = sorted(out.glob("*.usdf"))
    for p in files:
        try:
            read_world_state_file(p)
        except RobotStateFormatError as exc:
            bad.append(f"{p.name}: {str(exc)[:200]}")
    strays = [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
    bags = sorted(p for p in out.iterdir() if p.is_dir())
    messages = complete = empty = 0
    for bag in bags:
        try:
            done: list[bool] = []
            list(read_recording(bag, complete=done))
            complete += bool(done and done[0])
            last = -1
            n = 0
            for topic, _, msg in decode_all(bag):
                if topic.endswith("/joint_states"):
                    ns = msg.header.stamp.sec * S + msg.header.stamp.nanosec
                    if ns not in sent_js or abs(msg.position[0] - sent_js[ns]) > 0 or ns <= last:
                        bad.append(f"{bag.name}: a JointState that was not sent, or out of order")
                        break
                    last = ns
                n += 1
            messages += n
            empty += n == 0
        except (RobotStateFormatError, OSError, ValueError) as exc:
            bad.append(f"{bag.name}: {type(exc).__name__}: {str(exc)[:200]}")
    return {"restart_files": len(files), "recordings": len(bags), "messages": messages, "empty": empty,
            "complete": complete, "stray_temporaries": len(strays), "bad": bad}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kills", type=int, default=200)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--out", type=Path, help="directory (default: a new temporary one)")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    faulthandler.enable()  # a crash in native code (rclpy, Fast DDS) prints where it happened
    out = args.out or Path(tempfile.mkdtemp(prefix="kill9_out_"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"machine: {describe_machine()}")
    t0 = time.monotonic()
    r = run(args.kills, out, args.seed)
    v = verify(out, r["sent_js"])
    v["bad"] = r["bad"] + v["bad"]
    print(f"{args.kills} kills in {time.monotonic() - t0:.0f} s ({r['early']} during start-up); "
          f"{r['sent']} snapshots and JointState sent")
    print(f"restart files checked after each kill: {r['checked']}; left at the end: {v['restart_files']}; "
          f"all strict USDF: {not [b for b in v['bad'] if '.usdf' in b]}; "
          f"stray temporaries (hidden, removed at the next start): {v['stray_temporaries']}")
    print(f"recordings: {v['recordings']} ({v['complete']} closed, {v['empty']} without a complete chunk), "
          f"{v['messages']} messages read back")
    for b in v["bad"][:20]:
        print(f"BAD {b}")
    print(f"output: {out}")
    return 1 if (args.check and v["bad"]) else 0


if __name__ == "__main__":
    sys.exit(main())
