"""The cost of expanding xacro in a bounded child process (issue 25), as ratios to the in-process expansion.

    .venv/bin/python bench/bench_xacro_child.py [--repeat N] [--segments K]

A generated arm of K segments (a macro per segment: properties, arguments, expressions) is expanded N
times each way, best time kept: in this process without bounds (``expand_in_process``, the anchor), in a
fork of this process (what the CLI does), in a new interpreter (what the nodes do for ``model_file``) and
in a confined new interpreter (an allowed ``robot_description`` text). Figures in docs/robustness.md.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "bench"))
from figures import Figures  # noqa: E402

from bench.machine import describe_machine  # noqa: E402
from robot_state_format.model.xacro.child_control import Confinement  # noqa: E402
from robot_state_format.model.xacro.expand import expand_in_process, expand_xacro_mapped  # noqa: E402


def arm(segments: int) -> str:
    parts = ['<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">',
             '<xacro:property name="L" value="0.3"/><xacro:arg name="prefix" default="a_"/>',
             '<xacro:macro name="seg" params="i parent"><link name="$(arg prefix)l${i}"><inertial>'
             '<mass value="${1.0/(i+1)}"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>'
             '</inertial><visual><geometry><cylinder radius="0.04" length="${L}"/></geometry></visual></link>'
             '<joint name="$(arg prefix)j${i}" type="revolute"><parent link="${parent}"/>'
             '<child link="$(arg prefix)l${i}"/><origin xyz="0 0 ${L}" rpy="0 ${pi/2 if i % 2 else 0} 0"/>'
             '<axis xyz="0 0 1"/><limit lower="${-pi}" upper="${pi}" effort="10" velocity="1"/></joint>'
             '</xacro:macro>', '<link name="base"/>']
    parent = "base"
    for i in range(segments):
        parts.append(f'<xacro:seg i="{i}" parent="{parent}"/>')
        parent = f"$(arg prefix)l{i}"
    return "\n".join([*parts, "</robot>\n"])


def best(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--segments", type=int, default=40)
    ap.add_argument("--json", action="store_true", help="also print the figures as one BENCH_JSON line")
    ap.add_argument("--smoke", action="store_true", help="tiny run (checks that the bench runs)")
    args = ap.parse_args()
    if args.smoke:
        args.repeat, args.segments = 1, 3
    text = arm(args.segments)
    print(f"machine: {describe_machine()}")
    anchor = best(lambda: expand_in_process(text, file="arm.urdf.xacro"), args.repeat)
    forked = best(lambda: expand_xacro_mapped(text, file="arm.urdf.xacro"), args.repeat)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)  # a second thread: the child is a new interpreter
    other.start()
    try:
        spawned = best(lambda: expand_xacro_mapped(text, file="arm.urdf.xacro"), args.repeat)
        confined = best(lambda: expand_xacro_mapped(text, file="<robot_description>", confinement=Confinement()),
                        args.repeat)
    finally:
        stop.set()
        other.join()
    print(f"{args.segments}-segment arm xacro, best of {args.repeat}:")
    print(f"  in process (anchor)       {anchor * 1e3:7.1f} ms  1.00x")
    for name, value in (("fork (CLI)", forked), ("new interpreter (nodes)", spawned),
                        ("confined (allowed text)", confined)):
        print(f"  {name:25s} {value * 1e3:7.1f} ms  {value / anchor:.2f}x")
    figs = Figures()
    for name, value in (("fork, CLI", forked), ("new interpreter, nodes' model_file", spawned),
                        ("confined, allowed robot_description", confined)):
        figs.add(f"xacro expansion {args.segments}-segment arm: {name}", value * 1e3, anchor * 1e3, "ms",
                 anchor_is="the same expansion in process, unbounded")
    figs.emit(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
