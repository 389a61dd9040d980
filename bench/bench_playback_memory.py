"""Benchmark: memory of playing a long recording, streamed (as state_store plays) vs loaded whole.

Run: ``.venv/bin/python bench/bench_playback_memory.py [--messages 300000]``.

Writes an MCAP recording of 7-joint JointState messages 1 ms apart, then plays it at rate 1000
in two fresh processes: once through ``RecordingTimeline`` (read-ahead of 4096 messages) and once
from ``timeline_from_recording`` (every message in memory). Reports each process's peak RSS above
its baseline (after imports) and the time to the first published message. Anchor: the same
processes' baseline RSS and the recording's uncompressed message bytes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from machine import describe_machine  # noqa: E402  (bench/ is on sys.path)

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time
from robot_state_format.ros import replay as rp
def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
base = rss_mb()
t0 = time.monotonic()
source = rp.RecordingTimeline(sys.argv[1]) if sys.argv[2] == "stream" else rp.timeline_from_recording(sys.argv[1])
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=300_000)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    from robot_state_format.recording import RecordingWriter

    print(describe_machine())
    with tempfile.TemporaryDirectory() as tmp:
        bag = Path(tmp) / "bag"
        w = RecordingWriter(bag)
        w.add_topic("/joint_states", "sensor_msgs/msg/JointState")
        msg = JointState()
        msg.name = [f"joint{i}" for i in range(7)]
        size = 0
        for i in range(args.messages):
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(i * 1_000_000, 1_000_000_000)
            msg.position = [0.001 * i + k for k in range(7)]
            data = serialize_message(msg)
            size += len(data)
            w.write("/joint_states", data, i * 1_000_000)
        w.close()
        on_disk = sum(f.stat().st_size for f in bag.glob("*.mcap")) / 2**20
        print(f"recording: {args.messages} JointState messages, {size / 2**20:.1f} MiB of messages, "
              f"{on_disk:.1f} MiB on disk (zstd)")
        for how in ("stream", "memory"):
            out = subprocess.run([sys.executable, "-c", CHILD, str(bag), how], capture_output=True, text=True,
                                 check=True, cwd=ROOT)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            assert r["published"] == args.messages, r
            print(f"{'streamed (RecordingTimeline)' if how == 'stream' else 'loaded whole (list)':30s}: "
                  f"peak RSS +{r['peak'] - r['base']:.1f} MiB over a {r['base']:.1f} MiB baseline "
                  f"({(r['peak'] - r['base']) / (size / 2**20):.2f}x the message bytes); first message after "
                  f"{r['first_s'] * 1e3:.0f} ms; played in {r['total_s']:.1f} s")


if __name__ == "__main__":
    main()
