"""Benchmark: state_store playback timing at 1 kHz and save latency (real processes, real DDS).

Run: ``.venv/bin/python bench/bench_replay.py [--messages 2000]``.

* playback: a 1 kHz MCAP of JointState messages is played by a ``state_store`` process; this
  process receives them and compares arrival times with the recorded stamps:
  ``error_i = (recv_i - recv_0) - (stamp_i - stamp_0)``, centred on its median (the constant DDS
  latency), p50/p99 of ``|error|``.  Goal: p99 <= 1 ms.  Anchor, same run: a plain
  ``time.sleep``-paced loop at 1 kHz in this process (the scheduler's own jitter).
* save latency: ``~/save`` service call → response (the file is on disk, fsynced, when the
  response is sent), p50/p99 over repeated saves.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from figures import Figures
from machine import describe_machine

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _env(tmp: Path) -> None:
    from robot_state_format.ros.demo import FASTDDS_PROFILE

    (tmp / "fastdds.xml").write_text(FASTDDS_PROFILE)
    os.environ["ROS_DOMAIN_ID"] = str(201 + os.getpid() % 30)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    os.environ["FASTDDS_DEFAULT_PROFILES_FILE"] = str(tmp / "fastdds.xml")


def _write_mcap(directory: Path, n: int, period_ns: int) -> None:
    from robot_state_format.recording import JOINT_STATE_TYPE, RecordingWriter

    w = RecordingWriter(directory)
    w.add_topic("/joint_states", JOINT_STATE_TYPE)
    names = [f"joint{i}" for i in range(7)]
    for i in range(n):
        t = 10**9 + i * period_ns
        w.write_message("/joint_states", {"header": {"stamp": {"sec": t // 10**9, "nanosec": t % 10**9},
                                                     "frame_id": ""},
                                          "name": names, "position": [0.001 * i] * 7, "velocity": [],
                                          "effort": []}, t)
    w.close()


def _stats(err_s: np.ndarray) -> tuple[float, float]:
    e = np.abs(err_s - np.median(err_s)) * 1e3
    return float(np.percentile(e, 50)), float(np.percentile(e, 99))


def anchor(n: int, period: float) -> tuple[float, float]:
    t0 = time.monotonic()
    times = []
    for i in range(n):
        target = t0 + i * period
        left = target - time.monotonic()
        if left > 0:
            time.sleep(left)
        times.append(time.monotonic())
    err = np.array(times) - t0 - np.arange(n) * period
    return _stats(err)


def main() -> int:  # noqa: PLR0915 (118 statements): to be split, issue 38
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--saves", type=int, default=50)
    parser.add_argument("--json", action="store_true", help="also print the figures as one BENCH_JSON line")
    parser.add_argument("--smoke", action="store_true", help="few messages and saves (checks the bench runs)")
    args = parser.parse_args()
    if args.smoke:
        args.messages, args.saves = 300, 5
    figs = Figures()
    print(f"machine: {describe_machine()}")
    tmp = Path(tempfile.mkdtemp(prefix="rsf_bench_replay_"))
    _env(tmp)
    import rclpy
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    from std_srvs.srv import Trigger

    from robot_state_format.usdf.types import JointState as UJ
    from robot_state_format.usdf.types import ModelState, Stamp, WorldState
    from robot_state_format.usdf.writer import write_world_state

    period_ns = 1_000_000
    _write_mcap(tmp / "bag", args.messages, period_ns)
    out = tmp / "out"
    out.mkdir()
    params = tmp / "params.yaml"
    params.write_text(f"/**:\n  ros__parameters:\n    playback_path: {tmp / 'bag'}\n    output_dir: {out}\n"
                      "    realtime_playback: true\n")
    proc = subprocess.Popen([sys.executable, "-m", "robot_state_format.ros.state_store", "--ros-args",
                             "--params-file", str(params)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # The measuring side gets real-time priority too when permitted, so that what is measured is the
    # node's timing and not this process waiting for a CPU on a loaded machine.
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(5))
        receiver = "receiver SCHED_FIFO"
    except (AttributeError, OSError) as exc:
        receiver = f"receiver normal priority ({exc})"
    rclpy.init()
    node = rclpy.create_node("bench_replay")
    try:
        recv: list[tuple[float, int]] = []
        dds: list[tuple[int, int]] = []  # (source_timestamp, received_timestamp) set by the middleware

        def on_js(msg: JointState, info: dict) -> None:  # type: ignore[type-arg]
            recv.append((time.monotonic(), msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec))
            dds.append((int(info["source_timestamp"]), int(info["received_timestamp"])))

        sub = node.create_subscription(JointState, "joint_states", on_js,
                                       QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE))

        def spin_until(cond, timeout: float) -> None:  # type: ignore[no-untyped-def]
            deadline = time.monotonic() + timeout
            while not cond():
                if time.monotonic() > deadline:
                    raise SystemExit("bench: timed out")
                rclpy.spin_once(node, timeout_sec=0.01)

        clients: dict[str, object] = {}

        def trigger(name: str) -> tuple[bool, str, float]:
            client = clients.get(name)
            if client is None:  # one client per service: the timing excludes discovery
                client = clients[name] = node.create_client(Trigger, f"/state_store/{name}")
                spin_until(client.service_is_ready, 15)  # type: ignore[attr-defined]
            t = time.perf_counter()
            fut = client.call_async(Trigger.Request())  # type: ignore[attr-defined]
            spin_until(fut.done, 15)
            dt = time.perf_counter() - t
            r = fut.result()
            return r.success, r.message, dt

        spin_until(lambda: sub.get_publisher_count() >= 1, 15)
        ok, msg, _ = trigger("play")
        assert ok, msg
        spin_until(lambda: len(recv) >= args.messages - 5 or (recv and time.monotonic() - recv[-1][0] > 1.0),
                   args.messages / 1000 + 10)
        spin_until(lambda: not time.monotonic() - recv[-1][0] < 0.3, 5)
        wall = np.array([r[0] for r in recv])
        stamps = np.array([r[1] for r in recv], dtype=np.int64)
        err = (wall - wall[0]) - (stamps - stamps[0]) / 1e9
        p50, p99 = _stats(err)
        rel = (stamps - stamps[0]) / 1e9
        src = np.array([d[0] for d in dds], dtype=np.int64)
        rcv = np.array([d[1] for d in dds], dtype=np.int64)
        s50, s99 = _stats((src - src[0]) / 1e9 - rel)  # when the node handed each message to DDS
        r50, r99 = _stats((rcv - rcv[0]) / 1e9 - rel)  # when it reached this process's reader
        a50, a99 = anchor(min(args.messages, 2000), 0.001)
        # the player alone, in this process (publish side, no DDS): what the node's scheduling adds
        from robot_state_format.playback.player import Player
        from robot_state_format.playback.timeline import RecordingTimeline, timeline_from_recording

        events = timeline_from_recording(tmp / "bag")
        alone = {}
        for how, source in (("streamed from the file, as the node plays", RecordingTimeline(tmp / "bag")),
                            ("from memory", events)):
            sent: list[float] = []
            player = Player(source, lambda topic, data, sent=sent: sent.append(time.monotonic()), realtime=True)
            player.start()
            player.wait()
            perr = (np.array(sent) - sent[0]) - (np.array([e.t_ns for e in events]) - events[0].t_ns) / 1e9
            alone[how] = _stats(perr)
        lost = args.messages - len(recv)
        print(f"playback 1 kHz ({receiver}): {len(recv)} received ({lost} lost); timing error p50 {p50:.3f} ms, "
              f"p99 {p99:.3f} ms (goal p99 <= 1 ms: {'met' if p99 <= 1.0 else 'NOT met'})")
        print(f"  by DDS timestamps: written (source_timestamp) p50 {s50:.3f} ms, p99 {s99:.3f} ms "
              f"(goal p99 <= 1 ms: {'met' if s99 <= 1.0 else 'NOT met'}); arrived (received_timestamp) "
              f"p50 {r50:.3f} ms, p99 {r99:.3f} ms")
        for how, (q50, q99) in alone.items():
            print(f"player alone (publish side, in process, {how}): p50 {q50:.3f} ms, p99 {q99:.3f} ms")
        print(f"anchor (time.sleep-paced loop, this process): p50 {a50:.3f} ms, p99 {a99:.3f} ms; "
              f"ratio playback/anchor p99 = {p99 / a99 if a99 > 0 else float('inf'):.2f}")

        # save latency
        pub = node.create_publisher(String, "world_state", QoSProfile(
            depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL))
        state = WorldState("w", stamp=Stamp(5, 0), model_states=[ModelState(
            "arm", joint_states=[UJ(f"joint{i}", (0.1 * i,), (0.0,)) for i in range(7)])])
        pub.publish(String(data=write_world_state(state)))
        spin_until(lambda: trigger("save")[0], 10)
        lat = []
        for _ in range(args.saves):
            ok, path, dt = trigger("save")
            assert ok and Path(path).exists(), path
            lat.append(dt * 1e3)
        lat_a = np.array(lat)
        print(f"save latency (service call -> fsynced file, {args.saves} saves): p50 {np.percentile(lat_a, 50):.2f} ms, "
              f"p99 {np.percentile(lat_a, 99):.2f} ms")
        data = write_world_state(state).encode()
        raw = []
        for _ in range(args.saves):  # anchor: the same bytes written and fsynced in this process
            t = time.perf_counter()
            fd = os.open(tmp / "raw.usdf", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.write(fd, data)
            os.fsync(fd)
            os.close(fd)
            raw.append((time.perf_counter() - t) * 1e3)
        figs.add("replay over DDS at 1 kHz, timing error p99", p99, a99, "ms",
                 anchor_is="time.sleep-paced 1 kHz loop p99", goal="<= 1 ms")
        figs.add("state_store ~/save latency p50", float(np.percentile(lat_a, 50)), float(np.median(raw)), "ms",
                 anchor_is="plain write + fsync of the same bytes")
        figs.emit(args.json)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
