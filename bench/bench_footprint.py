"""What the nodes cost to run: start-up, memory, CPU, against bare rclpy nodes in the same run; install size.

    .venv/bin/python bench/bench_footprint.py            # 5 start-ups each, 60 s soak at 1 kHz
    .venv/bin/python bench/bench_footprint.py --quick    # 3 start-ups each, 10 s soak
    .venv/bin/python bench/bench_footprint.py --smoke    # 1 start-up each, 2 s soak (checks that it runs)

Each node runs as its own process, as installed (the default kinematics: numpy, no JIT), beside its anchor,
a bare rclpy node (bench/anchor_node.py), started and measured the same way in the same run, alternately:

* ``state_publisher`` (romeo, ``publish_frequency`` 0: a /tf per JointState like the relay; snapshots at
  the default 10 Hz) against ``anchor_node.py relay`` (JointState -> TFMessage in Python);
* ``state_store`` (romeo as its model, as launch/state_sharing.launch.py starts it) against
  ``anchor_node.py store`` (one JointState subscription, one Trigger service).

Figures: start-up = process start to the first /tf carrying a JointState stamp sent after the start
(JointStates published here at 100 Hz all along; the state_publisher's first world_state too), for the
stores to the first answer of ``~/save``; RSS 1 s after that; CPU (user + system, % of one core) while
JointStates arrive at 100 Hz and at 1 kHz; RSS after the soak at 1 kHz.  Start-ups: medians and fastest of
the runs (DDS discovery now and then adds ~2 s to either process on a loaded machine).
Installed size: the site-packages files (RECORD) of the distributions a default install pulls in
(requirements/core.txt, with their dependencies) and of each optional extra.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.metadata as md
import os
import re
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from figures import Figures
from machine import describe_machine
from paced import paced

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))

FIGS = Figures()
STAMP_RE = re.compile(rb'<stamp sec="([0-9]+)" nanosec="([0-9]+)"')
TICK = os.sysconf("SC_CLK_TCK")

EXTRAS: dict[str, list[str]] = {
    "numba kernels (fast)": ["numba", "llvmlite"],
    "MCAP recording": ["mcap", "mcap-ros2-support"],
    "orjson": ["orjson"],
    "MuJoCo": ["mujoco"],
    "Drake": ["drake"],
    "Pinocchio (tests)": ["pin", "cmeel-boost", "cmeel-urdfdom", "cmeel-console-bridge", "cmeel-tinyxml2"],
}


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


class Feeder:
    """This process's ROS side: JointStates out (stamped with wall-clock time), /tf, world_state and ~/save in."""

    def __init__(self, ros: Any, names: list[str], ns: str) -> None:
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

        self.ros = ros
        self.msg = JointState()
        self.msg.name = list(names)
        self.msg.position = [0.1] * len(names)
        self.pub = ros.node.create_publisher(JointState, f"{ns}/joint_states", qos_profile_sensor_data)
        self.first_tf: dict[str, float] = {}
        self.after_ns = 0
        self.t0 = 0.0
        self.tf: float | None = None
        self.world: float | None = None
        qos = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE)
        ros.node.create_subscription(TFMessage, "/tf", self._on_tf, qos, raw=True)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        ros.node.create_subscription(String, f"{ns}/world_state", self._on_world, latched, raw=True)

    def arm(self) -> None:
        """Start timing: the process is started right after this."""
        self.tf = self.world = None
        self.after_ns = time.time_ns()
        self.t0 = time.monotonic()

    def _on_tf(self, raw: bytes) -> None:
        if self.tf is None and len(raw) >= 16:
            sec, nsec = struct.unpack_from("<iI", raw, 8)  # the first transform's stamp
            if sec * 10**9 + nsec >= self.after_ns:
                self.tf = time.monotonic() - self.t0

    def _on_world(self, raw: bytes) -> None:
        m = STAMP_RE.search(raw, 0, 400)
        if self.world is None and m and int(m.group(1)) * 10**9 + int(m.group(2)) >= self.after_ns:
            self.world = time.monotonic() - self.t0

    def publish(self) -> None:
        from builtin_interfaces.msg import Time

        now = time.time_ns()
        self.msg.header.stamp = Time(sec=now // 10**9, nanosec=now % 10**9)
        self.pub.publish(self.msg)

    def run(self, seconds: float, rate: float, until: Any = None, proc: Any = None) -> bool:
        """Publish at ``rate`` for ``seconds`` (or until ``until()``), spinning in between; whether ``until`` came."""
        return paced(seconds, rate, self.publish, lambda dt: self.ros.executor.spin_once(timeout_sec=max(0.0, dt)),
                     until, proc)


def save_ready(ros: Any, service: str) -> Any:
    """A predicate: ``service`` (std_srvs/Trigger) has answered a call (one call kept in flight)."""
    from std_srvs.srv import Trigger

    client = ros.node.create_client(Trigger, service)
    state: dict[str, Any] = {"future": None}

    def ready() -> bool:
        f = state["future"]
        if f is not None and f.done():
            return True
        if f is None and client.service_is_ready():
            ready.seen = time.monotonic()  # type: ignore[attr-defined]
            state["future"] = client.call_async(Trigger.Request())
        return False
    ready.seen = None  # type: ignore[attr-defined]
    return ready


def measure(ros: Any, feed: Feeder, label: str, target: str, params: dict[str, Any], args: list[str], ns: str,
            store: bool, soak: float, window: float, full: bool) -> dict[str, float]:
    """Start one process; its start-up (and, with ``full``, memory and CPU figures); stop it."""
    feed.arm()
    proc = ros.start_node(target, params, ros_args=["-r", f"__ns:={ns}"], args=args, name=label)
    out: dict[str, float] = {}
    try:
        if store:
            node = "state_store" if target == "state_store" else "anchor_store"
            ready = save_ready(ros, f"{ns}/{node}/save")
            if not feed.run(60.0, 100.0, ready, proc):
                raise RuntimeError(f"{label}: no answer from ~/save in 60 s\n{proc.describe()}")
            out["startup"] = time.monotonic() - feed.t0
            out["service"] = ready.seen - feed.t0  # type: ignore[attr-defined]
        else:
            want_world = target == "state_publisher"
            if not feed.run(60.0, 100.0, lambda: feed.tf is not None and (feed.world is not None or not want_world),
                            proc):
                raise RuntimeError(f"{label}: no /tf in 60 s\n{proc.describe()}")
            out["startup"] = feed.tf or 0.0
            if want_world and feed.world is not None:
                out["world"] = feed.world
        if not full:
            return out
        feed.run(1.0, 100.0, proc=proc)
        out["rss_start"] = rss_mb(proc.pid)
        for rate, key in ((100.0, "cpu_100"), (1000.0, "cpu_1k")):
            feed.run(0.5, rate, proc=proc)
            c0, t0 = cpu_s(proc.pid), time.monotonic()
            feed.run(window, rate, proc=proc)
            out[key] = 100.0 * (cpu_s(proc.pid) - c0) / (time.monotonic() - t0)
        feed.run(max(0.0, soak - window - 0.5), 1000.0, proc=proc)
        out["rss_soak"] = rss_mb(proc.pid)
        return out
    finally:
        proc.stop()


def nodes(model: Path, runs: int, soak: float, window: float) -> None:
    import rclpy  # noqa: F401  (initialised by the harness)
    from ros_harness import RosHarness, init_context, shutdown_context  # type: ignore[import-not-found]

    from robot_state_format.kinematics.tree import compile_model
    from robot_state_format.model.loader import load_model_file

    names = list(compile_model(load_model_file(model)).moving_joint_names)
    env_kernel = os.environ.pop("ROBOT_STATE_FORMAT_KERNEL", None)  # the default install: no variable set
    context = init_context()
    ros = RosHarness(context, Path(tempfile.mkdtemp(prefix="bench_footprint_")))
    anchor = str(BENCH / "anchor_node.py")
    out_dir = tempfile.mkdtemp(prefix="bench_footprint_store_")
    pairs = [
        ("state_publisher", {"model_file": str(model), "publish_frequency": 0.0}, [], False,
         anchor, {}, ["relay"]),
        ("state_store", {"model_file": str(model), "output_dir": out_dir}, [], True, anchor, {}, ["store"]),
    ]
    try:
        for i, (target, params, args, store, a_target, a_params, a_args) in enumerate(pairs):
            feed = Feeder(ros, names, f"/fp{i}")
            res: dict[str, list[dict[str, float]]] = {"node": [], "anchor": []}
            for r in range(runs):  # alternately, the anchor first; the last run of each also measures memory/CPU
                full = r == runs - 1
                res["anchor"].append(measure(ros, feed, f"anchor-{target}-{r}", a_target, a_params, a_args,
                                             f"/fp{i}", store, soak, window, full))
                res["node"].append(measure(ros, feed, f"{target}-{r}", target, params, args, f"/fp{i}", store,
                                           soak, window, full))
            report(target, res, soak)
    finally:
        ros.close()
        shutdown_context(context)
        if env_kernel is not None:
            os.environ["ROBOT_STATE_FORMAT_KERNEL"] = env_kernel


def report(target: str, res: dict[str, list[dict[str, float]]], soak: float) -> None:
    node, anc = res["node"], res["anchor"]
    what = "first /tf" if target == "state_publisher" else "first ~/save answer"
    anchor_is = "bare rclpy relay node (bench/anchor_node.py relay)" if target == "state_publisher" else \
        "bare rclpy node, 1 subscription + 1 service (bench/anchor_node.py store)"
    s_node = statistics.median(r["startup"] for r in node)
    s_anc = statistics.median(r["startup"] for r in anc)
    # DDS discovery is bimodal on a loaded machine (+2 s now and then, either process): the fastest start of
    # each shows what the process itself costs; the median difference of the pairs started one after the other
    m_node, m_anc = min(r["startup"] for r in node), min(r["startup"] for r in anc)
    pair = statistics.median(n["startup"] - a["startup"] for n, a in zip(node, anc))
    print(f"{target}: start-up to {what}: median {s_node:.2f} s, fastest {m_node:.2f} s (runs "
          f"{[round(r['startup'], 2) for r in node]}); anchor median {s_anc:.2f} s, fastest {m_anc:.2f} s (runs "
          f"{[round(r['startup'], 2) for r in anc]}); differences: medians {s_node - s_anc:+.2f} s, fastest "
          f"{m_node - m_anc:+.2f} s, median of pairs {pair:+.2f} s")
    FIGS.add(f"footprint {target} start-up to {what}", s_node, s_anc, "s", anchor_is=anchor_is + ", medians",
             goal="<= anchor + 0.2 s")
    FIGS.add(f"footprint {target} start-up to {what}, fastest run", m_node, m_anc, "s",
             anchor_is=anchor_is + ", fastest runs", goal="<= anchor + 0.2 s")
    if all("service" in r for r in node + anc):
        sv_n, sv_a = min(r["service"] for r in node), min(r["service"] for r in anc)
        print(f"{target}: start-up to ~/save discovered: fastest {sv_n:.2f} s (runs "
              f"{[round(r['service'], 2) for r in node]}), anchor fastest {sv_a:.2f} s (runs "
              f"{[round(r['service'], 2) for r in anc]}); the first answer then took "
              f"{statistics.median(r['startup'] - r['service'] for r in node):.3f} s (median; anchor "
              f"{statistics.median(r['startup'] - r['service'] for r in anc):.3f} s)")
        FIGS.add(f"footprint {target} start-up to ~/save discovered, fastest run", sv_n, sv_a, "s",
                 anchor_is=anchor_is + ", fastest runs", goal="<= anchor + 0.2 s")
    worlds = [r["world"] for r in node if "world" in r]
    if worlds:
        w = statistics.median(worlds)
        print(f"{target}: start-up to first world_state: {w:.2f} s")
        FIGS.add(f"footprint {target} start-up to first world_state", w, s_anc, "s",
                 anchor_is="the bare relay's first /tf, same run")
    last_n, last_a = node[-1], anc[-1]
    for key, label, unit in (("rss_start", "RSS after start", "MB"), ("rss_soak", f"RSS after {soak:g} s at 1 kHz", "MB"),
                             ("cpu_100", "CPU at 100 Hz joint states", "% core"),
                             ("cpu_1k", "CPU at 1 kHz joint states", "% core")):
        if key in last_n and key in last_a:
            goal = "<= 1.3" if key == "rss_start" else ""
            print(f"{target}: {label}: {last_n[key]:.1f} {unit}, anchor {last_a[key]:.1f} {unit} "
                  f"({last_n[key] / last_a[key] if last_a[key] else float('nan'):.2f} x)")
            FIGS.add(f"footprint {target} {label}", last_n[key], last_a[key], unit, anchor_is=anchor_is, goal=goal)


# ---- installed size -------------------------------------------------------------------------------


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_names(lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-") or (";" in line and "extra ==" in line):
            continue
        m = re.match(r"[A-Za-z0-9_.\-]+", line)
        if m:
            out.append(m.group(0))
    return out


def _closure(names: list[str]) -> set[str]:
    """The installed distributions ``names`` pull in (their requirements without extras, transitively)."""
    seen: set[str] = set()
    todo = [_norm(n) for n in names]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        try:
            reqs = md.requires(n) or []
        except md.PackageNotFoundError:
            continue
        seen.add(n)
        todo += [_norm(r) for r in _requirement_names([r for r in reqs if "extra ==" not in r])]
    return seen


def _size_mb(dist: str) -> float:
    try:
        d = md.distribution(dist)
    except md.PackageNotFoundError:
        return 0.0
    total = 0
    for f in d.files or []:
        p = Path(str(d.locate_file(f)))
        if p.is_file():
            total += p.stat().st_size
    return total / 1e6


def own_size_mb() -> float:
    pkg = ROOT / "robot_state_format"
    return sum(p.stat().st_size for p in pkg.rglob("*") if p.is_file() and "__pycache__" not in p.parts) / 1e6


def sizes() -> None:
    core = _requirement_names((ROOT / "requirements" / "core.txt").read_text().splitlines())
    default = _closure(core)
    total = sum(_size_mb(n) for n in default) + own_size_mb()
    shown = ", ".join(f"{n} {_size_mb(n):.1f}" for n in sorted(default, key=_size_mb, reverse=True))
    print(f"installed size, default install (requirements/core.txt and dependencies, this package "
          f"{own_size_mb():.1f} MB): {total:.1f} MB: {shown}")
    FIGS.add("footprint installed size, default install", total, None, "MB",
             anchor_is="requirements/core.txt + dependencies + the package (ROS wheels not counted)")
    roots = {_norm(n) for n in core}
    optional = {_norm(d) for dists in EXTRAS.values() for d in dists} & roots
    if optional:  # the default once these are extras (the packaging issue): the rest of core.txt
        lean = _closure(sorted(roots - optional))
        mb = sum(_size_mb(n) for n in lean) + own_size_mb()
        print(f"installed size, default install without {', '.join(sorted(optional))}: {mb:.1f} MB")
        FIGS.add("footprint installed size, default install without the optional extras", mb, total, "MB",
                 anchor_is="the default install as requirements/core.txt lists it today")
    for extra, dists in EXTRAS.items():
        mine = {_norm(d) for d in dists}
        rest = _closure(sorted(roots - mine))  # what the default needs without this extra
        extra_dists = _closure(dists) - rest
        if not extra_dists:
            print(f"installed size, {extra}: not installed here")
            continue
        mb = sum(_size_mb(n) for n in extra_dists)
        today = " (in requirements/core.txt today)" if mine & roots else ""
        print(f"installed size, {extra}: {mb:.1f} MB{today} ({', '.join(sorted(extra_dists))})")
        FIGS.add(f"footprint installed size, extra: {extra}", mb, total, "MB", anchor_is="the default install")


def find_romeo() -> Path:
    from bench_state_publisher import find_romeo as find

    return find()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="3 start-ups each, 10 s soak")
    ap.add_argument("--smoke", action="store_true", help="1 start-up each, 2 s soak")
    ap.add_argument("--runs", type=int, default=None, help="start-ups of each process (default 5)")
    ap.add_argument("--soak", type=float, default=None, help="seconds at 1 kHz before the last RSS (default 60)")
    ap.add_argument("--model", type=Path, default=None, help="model file (default romeo)")
    ap.add_argument("--skip-nodes", action="store_true", help="installed sizes only")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    runs = a.runs or (1 if a.smoke else 3 if a.quick else 5)
    soak = a.soak or (2.0 if a.smoke else 10.0 if a.quick else 60.0)
    window = 1.0 if a.smoke else 3.0 if a.quick else 5.0
    print(f"machine: {describe_machine()}")
    # installed packages carry bytecode (pip, apt, colcon, ./run setup): so does this tree's, as bench_cli.py does
    compileall.compile_dir(str(ROOT / "robot_state_format"), quiet=1)
    compileall.compile_file(str(BENCH / "anchor_node.py"), quiet=1)
    sizes()
    if not a.skip_nodes:
        nodes(a.model or find_romeo(), runs, soak, min(window, soak))
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    FIGS.emit(a.json)


if __name__ == "__main__":
    main()
