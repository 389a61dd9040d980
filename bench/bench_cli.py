"""Command-line start-up: ``robot-state-format --help`` and ``check`` on a bundled sample, wall time.

    .venv/bin/python bench/bench_cli.py [--repeat N]

Each command is run as a fresh process (the console script in this venv), the contenders in turn in
every round (so machine load hits all alike); the median wall time counts.  Anchors, same run:
* ``check_urdf`` (urdfdom, C++; installed with Pinocchio's wheels) on the same URDF, where present;
* the bare interpreter start-up of this venv (``python -c pass``), and ``python -c "import numpy"``
  (what reading a model needs at least: the model types are numpy arrays).
Goals (issue 17): check <= 0.25 s, --help <= 0.15 s.

Python's bytecode cache matters as much as the imports: where PYTHONDONTWRITEBYTECODE is set (it is on the
project's machines) nothing Python compiles is cached, and an installation without ``.pyc`` files compiles
numpy, lxml and this package from source in every process.  pip, apt and colcon install bytecode; so does
``./run setup`` (scripts/setup.py, its last stage).  The bench byte-compiles this package first (what
``./run setup`` leaves, after any later edit) and prints whether numpy's bytecode is there.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from figures import Figures
from machine import describe_machine

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "robot_state_format" / "samples" / "arm7_gripper.urdf"
SDF_WORLD = ROOT / "robot_state_format" / "samples" / "nested_world.sdf"  # reads the SDFormat descriptions


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--json", action="store_true", help="also print the figures as one BENCH_JSON line")
    ap.add_argument("--smoke", action="store_true", help="one round (checks the bench runs)")
    args = ap.parse_args()
    repeat = 1 if args.smoke else args.repeat
    bindir = Path(sys.executable).parent
    compileall.compile_dir(str(ROOT / "robot_state_format"), quiet=1)
    numpy_init = subprocess.run([sys.executable, "-c", "import numpy; print(numpy.__file__)"],
                                capture_output=True, text=True, check=True).stdout.strip()
    numpy_cached = Path(importlib.util.cache_from_source(numpy_init)).is_file()
    script = bindir / "robot-state-format"
    cli = [str(script)] if script.exists() else [sys.executable, "-m", "robot_state_format"]
    cases = {
        "help": [*cli, "--help"],
        "check": [*cli, "check", str(SAMPLE)],
        "check_sdf": [*cli, "check", str(SDF_WORLD)],
        "python": [sys.executable, "-c", "pass"],
        "numpy": [sys.executable, "-c", "import numpy"],
    }
    check_urdf = shutil.which("check_urdf", path=str(bindir)) or shutil.which("check_urdf")
    if check_urdf:
        cases["check_urdf"] = [check_urdf, str(SAMPLE)]
    times: dict[str, list[float]] = {k: [] for k in cases}
    for cmd in cases.values():  # warm the file cache
        if not args.smoke:
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    for _ in range(repeat):
        for k, cmd in cases.items():
            t0 = time.perf_counter()
            r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            times[k].append(time.perf_counter() - t0)
            if k in ("help", "check", "check_sdf") and r.returncode != 0:
                raise SystemExit(f"{' '.join(cmd)} exited {r.returncode}")
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"machine: {describe_machine()}")
    print(f"bytecode: numpy's cached: {'yes' if numpy_cached else 'NO (run ./run setup)'}; "
          f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '(unset)')}")
    for k, cmd in cases.items():
        print(f"  {k:12s} {med[k] * 1e3:8.1f} ms  (median of {repeat}; {' '.join(Path(c).name for c in cmd[:3])})")
    figs = Figures()
    figs.add("cli --help wall time", med["help"] * 1e3, med["python"] * 1e3, "ms",
             anchor_is="python -c pass (interpreter start-up)", goal="<= 150 ms")
    if "check_urdf" in med:
        figs.add("cli check sample wall time", med["check"] * 1e3, med["check_urdf"] * 1e3, "ms",
                 anchor_is="check_urdf (urdfdom, C++) on the same file", goal="<= 250 ms")
    figs.add("cli check sample wall time vs importing numpy", med["check"] * 1e3, med["numpy"] * 1e3, "ms",
             anchor_is='python -c "import numpy"')
    figs.add("cli check SDFormat world wall time", med["check_sdf"] * 1e3, med["check"] * 1e3, "ms",
             anchor_is="check of the URDF sample (no SDFormat descriptions read)")
    figs.emit(args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
