"""URDF load benchmark: read (+ compile) a large real URDF against yourdfpy and Pinocchio, same run.

    python3 bench/bench_urdf_load.py [--urdf PATH] [--repeat N]

Default model: romeo.urdf from example-robot-data (82 links, 81 joints).  Measured, best of N:

* lxml parse     ``parse_bytes(bytes)``: the document parsed by lxml alone, the part of our read no
  Python code of ours can shorten (for the breakdown; not a contender)
* ours read      ``read_urdf(bytes)``  (parse + validate + zero-configuration poses)
* ours read+compile  ``compile_model(read_urdf(bytes))`` (kinematics tree, when available)
* yourdfpy       ``URDF.load(..., load_meshes=False)`` with and without its scene graph
* Pinocchio      ``pin.buildModelFromXML(text)`` (urdfdom parse + model build, C++)

The contenders run in turn in each of N rounds (best round counts), so machine load hits all alike.

Ratios are ours / theirs (below 1 = we are faster).  Goal: faster than yourdfpy, within 2x of Pinocchio.
Needs example-robot-data, yourdfpy and pin (requirements/test.txt); missing ones are reported and skipped.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))

from figures import Figures  # noqa: E402  (bench/ is on sys.path)
from machine import describe_machine  # noqa: E402

from robot_state_format.model.urdf.reader import read_urdf  # noqa: E402
from robot_state_format.model.xml import parse_bytes  # noqa: E402


def interleaved(contenders: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Best seconds per call of each contender, timing them in turn each round, so that a busy
    machine slows all of them alike rather than whichever happened to run at a bad moment."""
    for fn in contenders.values():
        fn()  # warm-up
    bests = {name: float("inf") for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            t0 = time.perf_counter()
            fn()
            bests[name] = min(bests[name], time.perf_counter() - t0)
    return bests


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--urdf", type=Path, help="URDF file (default: romeo from example-robot-data)")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--json", action="store_true", help="also print the figures as one BENCH_JSON line")
    ap.add_argument("--smoke", action="store_true", help="two rounds only (checks the bench runs)")
    args = ap.parse_args()
    if args.smoke:
        args.repeat = 2
    path = args.urdf
    if path is None:
        from real_robots import romeo_urdf

        path = romeo_urdf()
        if path is None:
            print("example-robot-data is not installed (pip install example-robot-data); pass --urdf")
            return 2
    data = path.read_bytes()
    text = data.decode("utf-8")
    model = read_urdf(data, file=str(path))
    print(f"machine: {describe_machine()}")
    print(f"model: {path.name}: {len(model.links)} links, {len(model.joints)} joints, "
          f"{sum(1 for _ in model.moving_joints())} moving, {len(data)} bytes")

    contenders: dict[str, Callable[[], object]] = {}
    contenders["lxml parse alone (our floor)"] = lambda: parse_bytes(data)
    contenders["ours read"] = lambda: read_urdf(data, file=str(path))
    try:
        from robot_state_format.kinematics.tree import compile_model
    except ImportError:
        compile_model = None  # type: ignore[assignment]
        print("compile: robot_state_format.kinematics.tree.compile_model not available; load only")
    if compile_model is not None:
        contenders["ours compile"] = lambda: compile_model(model)
        contenders["ours read+compile"] = lambda: compile_model(read_urdf(data, file=str(path)))
    try:
        if args.smoke:  # its import (trimesh, networkx) is most of a smoke run
            raise ImportError("skipped in --smoke")
        import yourdfpy

        contenders["yourdfpy"] = lambda: yourdfpy.URDF.load(io.StringIO(text), load_meshes=False,
                                                             load_collision_meshes=False)
        contenders["yourdfpy (no scene graph)"] = lambda: yourdfpy.URDF.load(
            io.StringIO(text), load_meshes=False, load_collision_meshes=False, build_scene_graph=False)
    except ImportError as exc:
        print(f"yourdfpy: not measured ({exc or 'pip install yourdfpy'})")
    try:
        import pinocchio as pin

        contenders["pinocchio buildModelFromXML"] = lambda: pin.buildModelFromXML(text)
        contenders["pinocchio buildModelFromUrdf"] = lambda: pin.buildModelFromUrdf(str(path))
    except ImportError:
        print("pinocchio: not installed (pip install pin)")
    results = interleaved(contenders, args.repeat)

    for name, seconds in results.items():
        print(f"  {name:32s} {seconds * 1e3:8.3f} ms")
    ours = results.get("ours read+compile", results["ours read"])
    label = "read+compile" if "ours read+compile" in results else "read"
    for ref in ("yourdfpy", "yourdfpy (no scene graph)", "pinocchio buildModelFromXML"):
        if ref in results:
            ratio = ours / results[ref]
            print(f"ratio ours {label} / {ref}: {ratio:.2f}")
    parse = results["lxml parse alone (our floor)"]
    print(f"breakdown: lxml parse {parse * 1e3:.3f} ms, the rest of our read {(results['ours read'] - parse) * 1e3:.3f} ms"
          + (f", compile {results['ours compile'] * 1e3:.3f} ms" if "ours compile" in results else ""))
    if "pinocchio buildModelFromXML" in results and label != "read":
        print(f"ratio ours read / pinocchio buildModelFromXML: "
              f"{results['ours read'] / results['pinocchio buildModelFromXML']:.2f}")
    if "yourdfpy" in results:
        print(f"goal faster than yourdfpy: {'met' if ours < results['yourdfpy'] else 'NOT met'}")
    if "pinocchio buildModelFromXML" in results:
        ok = ours <= 2.0 * results["pinocchio buildModelFromXML"]
        print(f"goal within 2x of Pinocchio: {'met' if ok else 'NOT met'}")
    figs = Figures()
    for ref, key in (("pinocchio buildModelFromXML", "pinocchio"), ("yourdfpy", "yourdfpy")):
        if ref in results:
            figs.add(f"urdf load romeo ({label}) vs {key}", ours * 1e3, results[ref] * 1e3, "ms", anchor_is=ref,
                     goal="<= 1.0" if key == "pinocchio" else "< 1")
    figs.emit(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
