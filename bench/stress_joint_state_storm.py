"""A storm of bad JointState messages at 1 kHz beside good ones: the state_publisher stays up.

    .venv/bin/python bench/stress_joint_state_storm.py               # the 60 s run of issue 14
    .venv/bin/python bench/stress_joint_state_storm.py --seconds 5 --check

The node (a separate process, the double pendulum sample, default parameters) receives at ~1 kHz a
rotation of bad messages: NaN and inf positions, names/positions length mismatch, unknown names,
duplicate names, empty messages, stamps going backwards, and (10 Hz) 1e5-element arrays; every
50 ms a good message (both joints, a new stamp, random angles).  Measured: the node is alive at the
end; the warning lines in its log (each kind throttled to one per 5 s); the /tf of every good
message against the hand-derived pose (link B: 5 cm below, rotation about y by q_A; link C: 1 m
below, rotation about y by q_B); the node's resident memory growth after a warm-up.
``--check`` exits 1 unless: alive, every good stamp seen on /tf correct to 1e-9 and at least a
quarter of them seen, also in the run's last quarter (joint_states is best effort, keep last 5: an
overloaded machine drops messages in transport, the figure is printed), warning lines within the throttle's bound, RSS growth < 5 MB (runs of 30 s and
more; shorter runs only print it).  Figures in docs/robustness.md.
"""

from __future__ import annotations

import argparse
import faulthandler
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))

from bench.machine import describe_machine  # noqa: E402

S = 1_000_000_000
SAMPLE = ROOT / "robot_state_format" / "samples" / "double_pendulum.urdf"
WARN_PERIOD_S = 5.0
NAMES = ["joint A", "joint B"]


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def _stamp(ns: int) -> Any:
    from builtin_interfaces.msg import Time

    return Time(sec=ns // S, nanosec=ns % S)


def _bad_messages(base_ns: int) -> list[tuple[str, Any]]:
    from sensor_msgs.msg import JointState

    def js(names: list[str], pos: list[float], ns: int, vel: list[float] | None = None) -> Any:
        m = JointState()
        m.header.stamp = _stamp(ns)
        m.name = names
        m.position = pos
        if vel is not None:
            m.velocity = vel
        return m

    big = 100_000
    return [
        ("nan", js(NAMES, [math.nan, 0.1], base_ns)),
        ("inf", js(NAMES, [math.inf, -math.inf], base_ns)),
        ("length mismatch", js(NAMES, [0.1], base_ns)),
        ("unknown name", js(["no such joint"], [1.0], base_ns)),
        ("duplicate names", js(["joint A", "joint A"], [0.1, 0.2], base_ns)),
        ("empty", js([], [], base_ns)),
        ("stamp backwards", js(NAMES, [0.3, 0.3], base_ns - 100 * S)),
        ("velocity mismatch", js(NAMES, [0.1, 0.2], base_ns, [1.0])),
        ("1e5-element arrays", js([f"n{i}" for i in range(big)], [0.0] * big, base_ns)),
        ("1e5 positions for 2 names", js(NAMES, [0.5] * big, base_ns)),
    ]


def run(seconds: float, rate: float, good_period: float) -> dict[str, Any]:
    import rclpy
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
    from ros_harness import RosHarness, configure_ros_environment, init_context, shutdown_context
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    configure_ros_environment()
    context = init_context()
    ros = RosHarness(context, Path(tempfile.mkdtemp(prefix="storm_")))
    try:
        proc = ros.start_node("state_publisher", {"model_file": str(SAMPLE)}, ros_args=["-r", "__ns:=/storm"])
        got: dict[tuple[str, int], Any] = {}

        def on_tf(msg: Any) -> None:
            for t in msg.transforms:
                got[(t.child_frame_id, t.header.stamp.sec * S + t.header.stamp.nanosec)] = t.transform

        tf_qos = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
        ros.node.create_subscription(TFMessage, "/tf", on_tf, tf_qos)
        pub = ros.node.create_publisher(JointState, "/storm/joint_states", qos_profile_sensor_data)
        ros.wait_for_matched(pub, timeout=60.0)
        ros.wait_for_publisher("/tf", timeout=60.0)
        base = 2_000_000 * S
        good = JointState()
        good.name = list(NAMES)
        rng = np.random.default_rng(7)
        ros.spin_until(lambda: any(k[0] == "link B" for k in got), 60.0, "first /tf",
                       every=lambda: (setattr(good, "position", [0.0, 0.0]),
                                      setattr(good.header, "stamp", _stamp(base)), pub.publish(good)))
        bad = _bad_messages(base + S)
        sent_good: dict[int, tuple[float, float]] = {}
        counts = {kind: 0 for kind, _ in bad}
        t_start = time.monotonic()
        rss0: int | None = None
        k = j = 0
        next_good = t_start
        stamp = base + 10 * S
        warm_up = min(5.0, seconds / 4)
        while True:
            now = time.monotonic()
            elapsed = now - t_start
            if elapsed >= seconds:
                break
            if rss0 is None and elapsed >= warm_up:
                rss0 = rss_kb(proc.pid)
            if now >= next_good:
                stamp += int(good_period * S)
                q = (float(rng.uniform(-1.5, 1.5)), float(rng.uniform(-1.5, 1.5)))
                good.header.stamp = _stamp(stamp)
                good.position = list(q)
                pub.publish(good)
                sent_good[stamp] = q
                next_good += good_period
            elif elapsed * rate >= k:
                kind, msg = bad[j % len(bad)]
                j += 1
                if kind.startswith("1e5") and j % 100 >= len(bad):  # the big ones at ~10 Hz
                    continue
                msg.header.stamp = _stamp(stamp - 100 * S if kind == "stamp backwards" else stamp + 1)
                pub.publish(msg)
                counts[kind] += 1
                k += 1
            ros.executor.spin_once(timeout_sec=0)
        ros.spin_for(1.0)
        rss1 = rss_kb(proc.pid)
        alive = proc.alive()
        log = proc.output()
        seen = wrong = 0
        worst = 0.0
        late = sorted(sent_good)[int(0.75 * len(sent_good)):]  # the last quarter of the run
        seen_late = sum(1 for s_ns in late if ("link B", s_ns) in got)
        for s_ns, (qa, qb) in sent_good.items():
            for frame, z, q in (("link B", -0.05, qa), ("link C", -1.0, qb)):
                t = got.get((frame, s_ns))
                if t is None:
                    continue
                seen += 1
                want = (0.0, math.sin(q / 2), 0.0, math.cos(q / 2))
                err = max(abs(t.translation.x), abs(t.translation.y), abs(t.translation.z - z),
                          abs(t.rotation.x - want[0]), abs(t.rotation.y - want[1]), abs(t.rotation.z - want[2]),
                          abs(t.rotation.w - want[3]))
                worst = max(worst, err)
                wrong += err > 1e-9
        warn_lines = sum(1 for line in log.splitlines() if "[WARN]" in line or ("[INFO]" in line and "jumped" in line))
        return {"seconds": seconds, "bad_sent": sum(counts.values()), "bad_rate": sum(counts.values()) / seconds,
                "counts": counts, "good_sent": len(sent_good), "tf_seen": seen / 2, "tf_wrong": wrong,
                "worst_error": worst, "seen_late": seen_late, "late": len(late), "warn_lines": warn_lines, "alive": alive,
                "rss0_mb": (rss0 or rss1) / 1024, "rss1_mb": rss1 / 1024, "log_tail": log.splitlines()[-5:]}
    finally:
        ros.close()
        shutdown_context(context)
        del rclpy


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--rate", type=float, default=1000.0, help="bad messages per second (default 1000)")
    ap.add_argument("--good-period", type=float, default=0.05, help="seconds between good messages")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    faulthandler.enable()  # a crash in native code (rclpy, Fast DDS) prints where it happened
    print(f"machine: {describe_machine()}")
    r = run(args.seconds, args.rate, args.good_period)
    growth = r["rss1_mb"] - r["rss0_mb"]
    print(f"{r['seconds']:.0f} s: {r['bad_sent']} bad JointState ({r['bad_rate']:.0f}/s), {r['good_sent']} good; "
          f"node alive: {r['alive']}")
    print("bad kinds sent: " + ", ".join(f"{k} {v}" for k, v in r["counts"].items()))
    print(f"good stamps on /tf: {r['tf_seen']:.0f} of {r['good_sent']} ({r['seen_late']} of the last "
          f"{r['late']}), wrong {r['tf_wrong']}, largest error {r['worst_error']:.1e}")
    print(f"warning lines in the node log: {r['warn_lines']}")
    print(f"node RSS: {r['rss0_mb']:.1f} MB after warm-up -> {r['rss1_mb']:.1f} MB (growth {growth:.2f} MB)")
    if not args.check:
        return 0
    kinds = len(r["counts"]) + 2  # some kinds log two keys (per joint)
    problems = []
    if not r["alive"]:
        problems.append("the node died: " + " | ".join(r["log_tail"]))
    if r["tf_wrong"]:
        problems.append("TF of good messages wrong")
    if r["tf_seen"] < 0.25 * r["good_sent"] or r["seen_late"] < 0.25 * r["late"]:
        problems.append("TF of good messages missing (the node stopped publishing?)")
    if r["warn_lines"] > kinds * (args.seconds / WARN_PERIOD_S + 2):
        problems.append(f"{r['warn_lines']} warning lines: not throttled")
    if args.seconds >= 30 and growth >= 5.0:
        problems.append(f"RSS grew {growth:.2f} MB")
    for p in problems:
        print(f"FAIL {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
