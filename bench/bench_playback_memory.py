"""Benchmark: memory of playing a long recording, streamed (as state_store plays) vs loaded whole,
and a long recording played at its real pace (1 kHz): timing error and memory over time.

Run: ``.venv/bin/python bench/bench_playback_memory.py [--messages 300000] [--duration 30]``.

``--duration S`` (default 30 s; ``--duration 3600`` is the one-hour recording, which then takes an
hour to play): a synthetic recording of S seconds of 7-joint JointState at 1 kHz is played at rate 1
by ``Player`` over a ``RecordingTimeline`` (streamed) in a fresh process; it reports the p50/p99
timing error of each publish against the recorded stamps (centred on the median) and the resident
memory sampled every 5 s of playback (growth from the 5 s sample to the end).  Anchors, same run:
a ``time.sleep``-paced 1 kHz loop's error (the scheduler's jitter), and the recording's message
bytes (what loading it whole would at least take).

Writes an MCAP recording of 7-joint JointState messages 1 ms apart, then plays it at rate 1000
in two fresh processes: once through ``RecordingTimeline`` (read-ahead of 4096 messages) and once
from ``timeline_from_recording`` (every message in memory). Reports each process's peak RSS above
its baseline (after imports) and the time to the first published message. Anchor: the same
processes' baseline RSS and the recording's uncompressed message bytes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from figures import Figures
from machine import describe_machine

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time
from robot_state_format.playback import player as rp
from robot_state_format.playback.timeline import RecordingTimeline, timeline_from_recording
def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
base = rss_mb()
t0 = time.monotonic()
source = RecordingTimeline(sys.argv[1]) if sys.argv[2] == "stream" else timeline_from_recording(sys.argv[1])
first = []
peak = [base]
def publish(topic, data):
    if not first:
        first.append(time.monotonic() - t0)
    if len(first) == 1 or p.published % 5000 == 0:
        peak[0] = max(peak[0], rss_mb())
p = rp.Player(source, publish, rate=float(sys.argv[3]) if len(sys.argv) > 3 else 1000.0, realtime=False)
p.start()
p.wait()
peak_rss = max(peak[0], resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print(json.dumps({"base": base, "peak": peak_rss, "first_s": first[0], "published": p.published,
                  "total_s": time.monotonic() - t0}))
"""

REALTIME_CHILD = r"""
import json, sys, time
import numpy as np
from robot_state_format.playback import player as rp
from robot_state_format.playback.timeline import RecordingTimeline, timeline_from_recording
def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
source = RecordingTimeline(sys.argv[1])
n = int(sys.argv[2])
# error of each publish against its stamp, in a fixed histogram (1 us bins, -100..+100 ms): nothing
# here grows with the recording's length, so what grows is the player's
hist = np.ones(200_001, dtype=np.int64)
hist[:] = 0
state = {"t0": None, "i": 0, "next": 0.0}
samples = []
def publish(topic, data):
    t = time.monotonic()
    if state["t0"] is None:
        state["t0"] = t
    e = (t - state["t0"]) - state["i"] * 1e-3
    hist[min(200_000, max(0, int(round(e * 1e6)) + 100_000))] += 1
    state["i"] += 1
    if t >= state["next"] or state["i"] == n:
        samples.append(rss_mb())
        state["next"] = t + 5.0
p = rp.Player(source, publish, rate=1.0, realtime=True)
p.start()
p.wait()
k = state["i"]
cum = np.cumsum(hist)
med = int(np.searchsorted(cum, (k + 1) // 2))
offsets = np.abs(np.arange(hist.size) - med)  # |error - median| in us per bin
dev = np.bincount(offsets, weights=hist)
dcum = np.cumsum(dev)
pct = lambda q: float(np.searchsorted(dcum, q * k)) / 1e3
print(json.dumps({"published": k, "p50": pct(0.5), "p99": pct(0.99), "rss": samples, "note": p.realtime_note}))
"""


def sleep_anchor(n: int, period: float = 1e-3) -> tuple[float, float]:
    """p50/p99 error (ms) of a time.sleep-paced loop at 1 kHz in this process."""
    import numpy as np

    t0 = time.monotonic()
    times = np.empty(n)
    for i in range(n):
        left = t0 + i * period - time.monotonic()
        if left > 0:
            time.sleep(left)
        times[i] = time.monotonic()
    err = times - t0 - np.arange(n) * period
    err = np.abs(err - np.median(err)) * 1e3
    return float(np.percentile(err, 50)), float(np.percentile(err, 99))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=300_000, help="recording of the streamed/loaded comparison")
    parser.add_argument("--duration", type=float, default=30.0,
                        help="seconds of 1 kHz recording played at its real pace (3600: one hour) [30]")
    parser.add_argument("--json", action="store_true", help="also print the figures as one BENCH_JSON line")
    parser.add_argument("--smoke", action="store_true", help="tiny recordings (checks the bench runs)")
    args = parser.parse_args()
    if args.smoke:
        args.messages, args.duration = 1000, 1.0
    figs = Figures()
    sys.path.insert(0, str(ROOT))
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    from robot_state_format.recording import RecordingWriter

    print(describe_machine())

    def write(bag: Path, n: int) -> int:
        w = RecordingWriter(bag)
        w.add_topic("/joint_states", "sensor_msgs/msg/JointState")
        msg = JointState()
        msg.name = [f"joint{i}" for i in range(7)]
        size = 0
        for i in range(n):
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(i * 1_000_000, 1_000_000_000)
            msg.position = [0.001 * i + k for k in range(7)]
            data = serialize_message(msg)
            size += len(data)
            w.write("/joint_states", data, i * 1_000_000)
        w.close()
        return size

    with tempfile.TemporaryDirectory() as tmp:
        n_rt = int(args.duration * 1000)
        long_bag = Path(tmp) / "long"
        t_w = time.monotonic()
        long_size = write(long_bag, n_rt)
        print(f"real-pace recording: {args.duration:g} s at 1 kHz = {n_rt} messages, {long_size / 2**20:.1f} MiB "
              f"of messages (written in {time.monotonic() - t_w:.1f} s); playing it at rate 1 ...")
        out = subprocess.run([sys.executable, "-c", REALTIME_CHILD, str(long_bag), str(n_rt)], capture_output=True,
                             text=True, check=True, cwd=ROOT)
        rt = json.loads(out.stdout.strip().splitlines()[-1])
        a50, a99 = sleep_anchor(min(n_rt, 5000))
        rss = rt["rss"]
        # from the sample at 5 s of playback on (the read-ahead queue and caches are filled by then)
        growth = rss[-1] - (rss[1] if len(rss) >= 3 else rss[0])
        print(f"played {rt['published']} messages at 1 kHz (streamed): timing error p50 {rt['p50']:.3f} ms, p99 "
              f"{rt['p99']:.3f} ms (goal p99 <= 1 ms); anchor time.sleep loop p50 {a50:.3f} ms, p99 {a99:.3f} ms"
              f"{'; ' + rt['note'] if rt['note'] else ''}")
        print(f"resident memory every 5 s: {' '.join(f'{x:.1f}' for x in rss)} MiB (growth {growth:+.1f} MiB over "
              f"{args.duration:g} s; the messages are {long_size / 2**20:.1f} MiB)")
        figs.add(f"playback {args.duration:g} s at 1 kHz, timing error p99 (streamed)", rt["p99"], a99, "ms",
                 anchor_is="time.sleep-paced 1 kHz loop p99", goal="<= 1 ms")
        figs.add(f"playback {args.duration:g} s at 1 kHz, memory growth (streamed)", growth, long_size / 2**20,
                 "MiB", anchor_is="the recording's message bytes", goal="flat")
        shutil.rmtree(long_bag)
        bag = Path(tmp) / "bag"
        size = write(bag, args.messages)
        on_disk = sum(f.stat().st_size for f in bag.glob("*.mcap")) / 2**20
        print(f"recording: {args.messages} JointState messages, {size / 2**20:.1f} MiB of messages, "
              f"{on_disk:.1f} MiB on disk (zstd)")
        growth_by: dict[str, float] = {}
        for how in ("stream", "memory"):
            out = subprocess.run([sys.executable, "-c", CHILD, str(bag), how], capture_output=True, text=True,
                                 check=True, cwd=ROOT)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            assert r["published"] == args.messages, r
            print(f"{'streamed (RecordingTimeline)' if how == 'stream' else 'loaded whole (list)':30s}: "
                  f"peak RSS +{r['peak'] - r['base']:.1f} MiB over a {r['base']:.1f} MiB baseline "
                  f"({(r['peak'] - r['base']) / (size / 2**20):.2f}x the message bytes); first message after "
                  f"{r['first_s'] * 1e3:.0f} ms; played in {r['total_s']:.1f} s")
            growth_by[how] = r["peak"] - r["base"]
        figs.add(f"playback memory, {args.messages} messages streamed vs loaded whole", growth_by["stream"],
                 growth_by["memory"], "MiB", anchor_is="the same recording loaded whole (list)")
    figs.emit(args.json)


if __name__ == "__main__":
    main()
