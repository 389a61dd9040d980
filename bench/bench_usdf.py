"""USDF snapshot write/read speed for a large humanoid, against raw lxml in the same run.

    python3 bench/bench_usdf.py [--repeat N]

Model: romeo (82 links) from example-robot-data when installed, else a generated 82-link tree.
Anchors (measured here, same data, same float text via repr):
* write: lxml building the same element tree (Element/SubElement, text) + ``etree.tostring``;
* read: ``etree.fromstring`` alone, and fromstring + a minimal walk turning every vector to floats.
Goals (issue 6): write and read within 1.5x of the lxml floor; restart-file write incl. fsync < 5 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from lxml import etree

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))

from figures import Figures  # noqa: E402  (bench/ is on sys.path)
from kernels import numba_kernel, using  # noqa: E402
from machine import describe_machine  # noqa: E402

from robot_state_format.kinematics.fk import forward, link_twists  # noqa: E402
from robot_state_format.kinematics.tree import compile_model  # noqa: E402
from robot_state_format.model.types import Joint, JointType, Limits, Link, Model  # noqa: E402
from robot_state_format.spatial import pose_to_transform  # noqa: E402
from robot_state_format.usdf.build import SnapshotBuilder  # noqa: E402
from robot_state_format.usdf.reader import read_world_state  # noqa: E402
from robot_state_format.usdf.types import WorldState  # noqa: E402
from robot_state_format.usdf.writer import write_world_state, write_world_state_file  # noqa: E402


def load_humanoid() -> tuple[Model, str]:
    try:
        from real_robots import romeo_urdf

        path = romeo_urdf()
    except ImportError:
        path = None
    if path is not None:
        from robot_state_format.model import load_model_file

        return load_model_file(path), f"romeo ({path.name})"
    m = Model(name="generated", format="urdf")
    m.links["base"] = Link("base")
    rng = np.random.default_rng(0)
    for i in range(1, 82):
        parent = "base" if i < 5 else f"l{rng.integers(max(1, i - 6), i)}"
        m.links[f"l{i}"] = Link(f"l{i}")
        kind = JointType.REVOLUTE if i % 3 else JointType.FIXED
        m.joints[f"j{i}"] = Joint(f"j{i}", kind, parent, f"l{i}",
                                  origin=pose_to_transform(rng.normal(size=3) * 0.1, rng.normal(size=3)),
                                  axis=(0.0, 0.0, 1.0), limits=Limits(-1.0, 1.0))
    return m, "generated 82-link tree"


def timeit(fn: Callable[[], object], repeat: int) -> float:
    """Median seconds per call over 7 batches of ``repeat`` calls."""
    fn()
    batches = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        batches.append((time.perf_counter() - t0) / repeat)
    return statistics.median(batches)


def ratio(fn: Callable[[], object], anchor: Callable[[], object], repeat: int, rounds: int = 15) -> float:
    """Median over rounds of time(fn) / time(anchor), the two batches run back to back each round
    (so load from other processes on a shared machine hits both alike)."""
    return measured(fn, anchor, repeat, rounds)[0]


def measured(fn: Callable[[], object], anchor: Callable[[], object], repeat: int,
             rounds: int = 15) -> tuple[float, float, float]:
    """(median ratio, median us of fn, median us of anchor) over interleaved rounds (see :func:`ratio`)."""
    fn()
    anchor()
    out = []
    t_fn: list[float] = []
    t_an: list[float] = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(repeat):
            anchor()
        t1 = time.perf_counter()
        for _ in range(repeat):
            fn()
        t2 = time.perf_counter()
        out.append((t2 - t1) / (t1 - t0))
        t_fn.append((t2 - t1) / repeat * 1e6)
        t_an.append((t1 - t0) / repeat * 1e6)
    return statistics.median(out), statistics.median(t_fn), statistics.median(t_an)


def lxml_build(state: WorldState) -> bytes:
    """The same document built as an lxml tree and serialised (the write floor)."""
    r = repr
    root = etree.Element("world_state", name=state.name, version="1.0")
    if state.stamp is not None:
        etree.SubElement(root, "stamp", sec=str(state.stamp.sec), nanosec=str(state.stamp.nanosec))
    sub = etree.SubElement
    for ms in state.model_states:
        m = sub(root, "model_state", name=ms.name)
        if ms.pose is not None:
            sub(m, "pose").text = " ".join(map(r, ms.pose))
        if ms.twist is not None:
            sub(m, "twist").text = " ".join(map(r, ms.twist))
        for ls in ms.link_states:
            e = sub(m, "link_state", name=ls.name)
            if ls.pose is not None:
                sub(e, "pose").text = " ".join(map(r, ls.pose))
            if ls.twist is not None:
                sub(e, "twist").text = " ".join(map(r, ls.twist))
        for js in ms.joint_states:
            e = sub(m, "joint_state", name=js.name)
            if js.positions is not None:
                sub(e, "positions").text = " ".join(map(r, js.positions))
            if js.velocities is not None:
                sub(e, "velocities").text = " ".join(map(r, js.velocities))
            if js.torques is not None:
                sub(e, "torques").text = " ".join(map(r, js.torques))
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
_VECTORS = {"pose", "twist", "wrench", "positions", "velocities", "torques"}


def lxml_parse_walk(data: bytes) -> int:
    """Parse, then turn every vector's text into floats (the read floor with values extracted)."""
    root = etree.fromstring(data, _PARSER)
    n = 0
    for el in root.iter():
        if el.tag in _VECTORS:
            n += len(tuple(map(float, (el.text or "").split())))
    return n


def main() -> int:  # noqa: PLR0915 (85 statements): to be split, issue 38
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--json", action="store_true", help="also print the figures as one BENCH_JSON line")
    ap.add_argument("--smoke", action="store_true", help="a few iterations only (checks the bench runs)")
    args = ap.parse_args()
    if args.smoke:
        args.repeat = 3
    model, label = load_humanoid()
    tree = compile_model(model)
    rng = np.random.default_rng(1)
    q = tree.neutral()
    q += rng.uniform(-0.5, 0.5, size=tree.nq) * (q == 0)
    v = rng.normal(size=tree.nv)
    eff = rng.normal(size=tree.nv)
    poses = forward(tree, q)
    twists = link_twists(tree, q, v)
    builder = SnapshotBuilder(model, tree, pretty=False)
    stamp = (1700000000, 123456789)
    state = builder.state(q, v, eff, link_poses=poses, link_twists=twists, stamp=stamp)
    text = write_world_state(state, pretty=False)
    data = text.encode()
    assert builder.build(q, v, eff, link_poses=poses, link_twists=twists, stamp=stamp) == text
    assert read_world_state(data).state == state

    n = args.repeat
    results: dict[str, float] = {}
    # --- write
    results["lxml build+tostring (from WorldState)"] = t_lx = timeit(lambda: lxml_build(state), n)
    results["write_world_state (from WorldState)"] = t_w = timeit(lambda: write_world_state(state, pretty=False), n)
    results["lxml: values() + build+tostring (from arrays)"] = t_lxa = timeit(
        lambda: lxml_build(builder.state(q, v, eff, link_poses=poses, link_twists=twists, stamp=stamp)), n)
    results["SnapshotBuilder.build (from arrays)"] = t_b = timeit(
        lambda: builder.build(q, v, eff, link_poses=poses, link_twists=twists, stamp=stamp), n)
    # --- read
    results["lxml fromstring"] = t_p = timeit(lambda: etree.fromstring(data, _PARSER), n)
    results["lxml fromstring + floats walk"] = t_pw = timeit(lambda: lxml_parse_walk(data), n)
    results["read_world_state (strict)"] = t_r = timeit(lambda: read_world_state(data), n)
    # --- restart file (fsync)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "restart.usdf"
        fs = []
        for _ in range(5 if args.smoke else 40):
            t0 = time.perf_counter()
            write_world_state_file(state, path)
            fs.append(time.perf_counter() - t0)
        t_f = statistics.median(fs)
        t_f95 = sorted(fs)[int(len(fs) * 0.95) - 1]
        raw = []  # anchor: the same bytes written to one file and fsynced, nothing else
        for _ in range(5 if args.smoke else 40):
            t0 = time.perf_counter()
            fd = os.open(Path(d) / "raw.bin", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.write(fd, data)
            os.fsync(fd)
            os.close(fd)
            raw.append(time.perf_counter() - t0)
        t_raw = statistics.median(raw)

    print(f"machine: {describe_machine()}")
    print(f"model: {label}: {tree.nlinks} links, {len(tree.joint_names)} joints, nq={tree.nq}, nv={tree.nv}; "
          f"document {len(data)} bytes (compact), repeat={n}")
    for k, t in results.items():
        print(f"  {k:48s} {t * 1e6:9.1f} us")
    print(f"  {'restart file write incl. fsync (median / p95)':48s} {t_f * 1e3:9.3f} ms / {t_f95 * 1e3:.3f} ms")
    print(f"  {'anchor: plain write + one fsync, same bytes':48s} {t_raw * 1e3:9.3f} ms")
    del t_lx, t_w, t_lxa, t_b, t_p, t_pw, t_r
    r = max(5, n // 5)

    def snap() -> str:
        return builder.build(q, v, eff, link_poses=poses, link_twists=twists, stamp=stamp)

    def snap_lxml() -> bytes:
        return lxml_build(builder.state(q, v, eff, link_poses=poses, link_twists=twists, stamp=stamp))

    def snap_q() -> str:  # from joint values: the kinematics included (what the node does per snapshot)
        return builder.build(q, v, eff, stamp=stamp)

    def snap_q_lxml() -> bytes:
        return lxml_build(builder.state(q, v, eff, stamp=stamp))

    def snap_q_pos() -> str:  # positions only (a JointState without velocities): poses, no twists
        return builder.build(q, stamp=stamp)

    def snap_q_pos_lxml() -> bytes:
        return lxml_build(builder.state(q, stamp=stamp))

    rounds = 3 if args.smoke else 15
    figs = Figures()
    # ours and anchor: medians of the interleaved rounds; ratio: median of the per-round ratios
    rr, t_a, t_b = measured(snap_q, snap_q_lxml, r, rounds)
    figs.add("usdf snapshot romeo from joint values (FK+twists+text)", t_a, t_b, "us",
             anchor_is="same values + lxml build+tostring", goal="<= 100 us and <= 0.1", ratio=rr)
    kern = numba_kernel()
    if kern is not None:  # the opt-in extra (numba kernels), beside the default (numpy) above
        rr, t_a, t_b = measured(using(kern, snap_q), using(kern, snap_q_lxml), r, rounds)
        using(None, lambda: None)()
        figs.add("usdf snapshot romeo from joint values (FK+twists+text) (numba extra)", t_a, t_b, "us",
                 anchor_is="same values + lxml build+tostring", goal="<= 100 us and <= 0.1", ratio=rr)
    rr, t_a, t_b = measured(snap_q_pos, snap_q_pos_lxml, r, rounds)
    figs.add("usdf snapshot romeo, positions only (FK+text)", t_a, t_b, "us",
             anchor_is="same values + lxml build+tostring", ratio=rr)
    rr, t_a, t_b = measured(lambda: write_world_state(state, pretty=False), lambda: lxml_build(state), r, rounds)
    figs.add("usdf write_world_state (from WorldState)", t_a, t_b, "us", anchor_is="lxml build+tostring",
             goal="<= 1.5", ratio=rr)
    rr, t_a, t_b = measured(lambda: read_world_state(data), lambda: lxml_parse_walk(data), r, rounds)
    figs.add("usdf read_world_state", t_a, t_b, "us", anchor_is="lxml fromstring + floats walk", goal="<= 1.5",
             ratio=rr)
    figs.add("usdf restart file write incl. fsync", t_f * 1e3, t_raw * 1e3, "ms", anchor_is="plain write + fsync",
             goal="< 5 ms")
    if args.smoke or args.json:
        figs.emit(args.json)
        return 0
    print("ratios, interleaved (median of 15 rounds; goal <= 1.5 for write and read; fsync write < 5 ms):")
    print(f"  write_world_state / lxml build+tostring            = "
          f"{ratio(lambda: write_world_state(state, pretty=False), lambda: lxml_build(state), r):5.2f}")
    print(f"  SnapshotBuilder.build / (values + lxml build)      = {ratio(snap, snap_lxml, r):5.2f}")
    print(f"  read_world_state / lxml fromstring                 = "
          f"{ratio(lambda: read_world_state(data), lambda: etree.fromstring(data, _PARSER), r):5.2f}")
    print(f"  read_world_state / lxml fromstring + floats walk   = "
          f"{ratio(lambda: read_world_state(data), lambda: lxml_parse_walk(data), r):5.2f}")
    print(f"  restart write incl. fsync                          = {t_f * 1e3:.3f} ms "
          f"({'ok' if t_f < 5e-3 else 'over'} the 5 ms goal); / plain write+fsync = {t_f / t_raw:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
