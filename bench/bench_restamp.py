"""Looping playback restamps every world_state through the USDF types (read, change the stamp, write):
its cost per message, against the regex substitution it replaced, in the same run.

    python3 bench/bench_restamp.py [--repeat N] [--smoke] [--json]

Snapshots as state_publisher publishes them (link poses and twists, joint positions and velocities)
for the bundled 7-joint arm and an 82-link humanoid (bench_usdf.py's model). Anchor: a regex
substitution of the ``<stamp>`` element on the same text (the way loops were restamped before: no
parse, no write). The playback budget at 1 kHz is 1000 us per message; restamping runs only from the
second pass of a loop on.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_usdf import load_humanoid  # noqa: E402
from figures import Figures  # noqa: E402
from machine import describe_machine  # noqa: E402

from robot_state_format.kinematics.tree import compile_model  # noqa: E402
from robot_state_format.model.loader import load_model_file  # noqa: E402
from robot_state_format.model.types import Model  # noqa: E402
from robot_state_format.playback.restamp import restamp_usdf, usdf_stamp_ns  # noqa: E402
from robot_state_format.usdf.build import SnapshotBuilder  # noqa: E402
from robot_state_format.usdf.types import Stamp  # noqa: E402
from robot_state_format.usdf.writer import write_world_state  # noqa: E402

NS = 1_000_000_000
SHIFT_NS = 1_234_567_890
_STAMP = re.compile(r'<stamp\s+sec="(\d+)"\s+nanosec="(\d+)"\s*/>')


def regex_restamp(text: str, shift_ns: int) -> str:
    """The anchor: the stamp element substituted in the text."""
    def repl(m: re.Match[str]) -> str:
        s, n = divmod(int(m.group(1)) * NS + int(m.group(2)) + shift_ns, NS)
        return f'<stamp sec="{s}" nanosec="{n}"/>'

    return _STAMP.sub(repl, text, count=1)


def snapshot(model: Model) -> str:
    tree = compile_model(model)
    rng = np.random.default_rng(1)
    q = np.zeros(tree.nq)
    q[:] = rng.uniform(-0.5, 0.5, tree.nq)
    v = rng.uniform(-1, 1, tree.nv)
    state = SnapshotBuilder(model, tree).state(q, v, None, stamp=Stamp(1_700_000_000, 123_456_789))
    return write_world_state(state)


def per_call_us(fn: Callable[[], object], repeat: int) -> float:
    """Median over 5 rounds of the mean time per call."""
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        rounds.append((time.perf_counter() - t0) / repeat * 1e6)
    return statistics.median(rounds)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--smoke", action="store_true", help="a few iterations (checks that it runs)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.smoke:
        args.repeat = 2
    print(describe_machine())
    figs = Figures()
    humanoid, label = load_humanoid()
    for name, model in (("arm7_gripper", load_model_file(ROOT / "robot_state_format" / "samples" / "arm7_gripper.urdf")),
                        (label, humanoid)):
        text = snapshot(model)
        ours = restamp_usdf(text, SHIFT_NS)
        assert usdf_stamp_ns(ours) == 1_700_000_000 * NS + 123_456_789 + SHIFT_NS
        assert ours == regex_restamp(text, SHIFT_NS), "the writer's text differs from the substituted one"
        t_ours = per_call_us(lambda text=text: restamp_usdf(text, SHIFT_NS), args.repeat)
        t_anchor = per_call_us(lambda text=text: regex_restamp(text, SHIFT_NS), args.repeat)
        figs.add(f"restamp world_state {name} ({len(text)} B)", t_ours, t_anchor, "us",
                 anchor_is="regex substitution of <stamp>", goal="< 1000 us (1 kHz budget)")
    figs.emit(args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
