"""How the state_store's costs grow with the size of the world: 1, 5 and 20 romeos (82 links each) in one
SDFormat world (20 romeos: 1,640 links, 660 moving joints).

    .venv/bin/python bench/bench_scale.py [--robots 1,5,20] [--repeat N]

Per world, in process, what a state_store does with it (same code paths):
* snapshot: ``SnapshotBuilder.build`` from joint values (kinematics + text), the store's restart-file text;
* save: the restart file written atomically with fsync (``usdf.atomic.atomic_write`` of that text);
* replay: reading the restart file back and checking it against the model
  (``read_world_state`` + ``validate_against_model``), what ``replay`` does before publishing.
Linear growth shows as cost(N) / (N x cost(1)) near 1 (the anchor of each figure is N x cost(1),
measured in the same run).  Memory caches make even a linear algorithm grow a little faster once the
document outgrows them (lxml's own parse of the restart file: 1.1-1.3x of linear at 20-40 romeos on the
project's VM), so replay is also given against lxml's parse of the same file at every size: that ratio
staying put from 1 to 20 robots means replay grows as the parse does.  The world is written from romeo by the project's own converter
(``model.writer.to_sdf``), N copies side by side.
"""

from __future__ import annotations

import argparse
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
from machine import describe_machine  # noqa: E402

from robot_state_format.kinematics.tree import compile_model  # noqa: E402
from robot_state_format.model.loader import load_model, load_model_file  # noqa: E402
from robot_state_format.model.writer import to_sdf  # noqa: E402
from robot_state_format.usdf.atomic import atomic_write  # noqa: E402
from robot_state_format.usdf.build import SnapshotBuilder  # noqa: E402
from robot_state_format.usdf.reader import read_world_state  # noqa: E402
from robot_state_format.usdf.validate import validate_against_model  # noqa: E402


def world_of_romeos(n: int) -> str:
    """An SDFormat world holding ``n`` copies of romeo, 2 m apart."""
    from real_robots import romeo_urdf

    path = romeo_urdf()
    if path is None:
        raise SystemExit("example-robot-data is not installed (pip install example-robot-data)")
    sdf = etree.fromstring(to_sdf(load_model_file(path)).text.encode())
    model = sdf.find("model")
    assert model is not None
    world = etree.Element("world", name="crowd")
    for i in range(n):
        m = etree.fromstring(etree.tostring(model))
        m.set("name", f"romeo_{i}")
        pose = m.find("pose")
        if pose is None:
            pose = etree.Element("pose")
            m.insert(0, pose)
        pose.text = f"{2.0 * (i % 5)} {2.0 * (i // 5)} 0 0 0 0"
        world.append(m)
    root = etree.Element("sdf", version=sdf.get("version", "1.9"))
    root.append(world)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8").decode()


def best(fn: Callable[[], object], repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times) if repeat < 5 else statistics.median(sorted(times)[: max(1, repeat // 2)])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--robots", default="1,5,20", help="world sizes, comma separated [1,5,20]")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--json", action="store_true", help="also print the figures as one BENCH_JSON line")
    ap.add_argument("--smoke", action="store_true", help="1 and 2 robots, few repeats (checks the bench runs)")
    args = ap.parse_args()
    sizes = [1, 2] if args.smoke else [int(x) for x in args.robots.split(",")]
    repeat = 2 if args.smoke else args.repeat
    print(f"machine: {describe_machine()}")
    rng = np.random.default_rng(0)
    costs: dict[int, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            model = load_model(world_of_romeos(n), file=f"<{n} romeos>")
            tree = compile_model(model)
            builder = SnapshotBuilder(model, tree, pretty=False)
            q = tree.neutral() + rng.uniform(-0.3, 0.3, tree.nq)
            v = rng.normal(size=tree.nv)
            stamp = (1700000000, 5)
            text = builder.build(q, v, stamp=stamp)
            path = Path(tmp) / f"restart_{n}.usdf"
            data = text.encode()

            def replay(path: Path = path, model: object = model) -> None:
                state = read_world_state(path.read_bytes(), file=str(path)).state
                diags = validate_against_model(state, model)  # type: ignore[arg-type]
                assert not [d for d in diags if d.severity.name == "ERROR"], diags[:3]

            c = {
                "snapshot": best(lambda b=builder, q=q, v=v, stamp=stamp: b.build(q, v, stamp=stamp), repeat),
                "save": best(lambda p=path, d=data: atomic_write(p, d), repeat),
                "replay": best(replay, repeat),
                "lxml": best(lambda d=data: etree.fromstring(d), repeat),
            }
            costs[n] = c
            print(f"{n:3d} romeos: {tree.nlinks:5d} links, {tree.nq:4d} moving joints, restart file {len(data) / 1024:7.1f} "
                  f"KiB; snapshot {c['snapshot'] * 1e3:7.2f} ms, save {c['save'] * 1e3:7.2f} ms, "
                  f"replay (read + check) {c['replay'] * 1e3:7.2f} ms (lxml parse alone {c['lxml'] * 1e3:6.2f} ms)")
    figs = Figures()
    one = costs[sizes[0]]
    for n in sizes[1:]:
        k = n / sizes[0]
        for what in ("snapshot", "save", "replay"):
            figs.add(f"scale {what}, {n} romeos vs {k:g} x {sizes[0]}", costs[n][what] * 1e3, k * one[what] * 1e3,
                     "ms", anchor_is=f"{k:g} x the cost at {sizes[0]} robot(s), same run", goal="~1 (linear)")
    for n in sizes:
        figs.add(f"scale replay, {n} romeos vs lxml parse of the file", costs[n]["replay"] * 1e3,
                 costs[n]["lxml"] * 1e3, "ms", anchor_is="lxml fromstring of the same restart file, same run",
                 goal="the same ratio at every size")
    figs.emit(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
