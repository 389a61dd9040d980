"""Every optional native library in one process, in every order, then Drake stepped
(issue 25: a worker that had loaded Pinocchio/coal, numba, scipy, tf2_py and MuJoCo crashed in
Drake's Simulator).

The product loads its native libraries in these groups: ``ros`` (rclpy, the message types,
tf2_ros/tf2_py: the nodes), ``numba`` (the compiled kinematics kernels, with scipy: the nodes and
library users), ``mujoco`` (MuJoCo simulations: CLI, sim_bridge, library) and ``drake`` (Drake
simulations: in its own process, as make_sim runs it for the CLI, sim_bridge and library users; a
library user's ``isolate=False`` puts Drake in the caller's process, where drake 1.51.1 itself
crashes now and then, with or without other libraries: docs/simulation.md).  Each order of the four groups runs in a fresh process
(test/helpers/native_orders.py), which uses each library as it loads it, then builds and steps
Drake and MuJoCo once more with everything loaded; Pinocchio and coal (loaded by the tests, not
the product) join the set first and last.  A crash is this test's failure, naming the order.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from repo_paths import TEST_DIR

for _module in ("pydrake", "mujoco", "numba", "rclpy", "tf2_ros"):
    pytest.importorskip(_module, reason=f"{_module} is not installed")

SCRIPT = TEST_DIR / "helpers" / "native_orders.py"
GROUPS = ("ros", "numba", "mujoco", "drake")
ORDERS = [list(p) for p in itertools.permutations(GROUPS)]
if importlib.util.find_spec("pinocchio") is not None:  # with the tests' Pinocchio, first and last
    ORDERS += [["pinocchio", *GROUPS], [*GROUPS[::-1], "pinocchio"]]


def _run(order: list[str]) -> tuple[list[str], int, str]:
    out = subprocess.run([sys.executable, str(SCRIPT), ",".join(order)], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "ROBOT_STATE_FORMAT_KERNEL": "numba"})
    return order, out.returncode, out.stdout + "\n".join(
        line for line in out.stderr.splitlines() if not line.startswith("WARNING:drake:"))


@pytest.mark.timeout(1200)
def test_every_load_order_steps_drake() -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(_run, ORDERS))
    failed = [(order, rc, text) for order, rc, text in results if rc != 0 or text.splitlines()[-1:] != ["ok"]]
    assert not failed, "\n\n".join(f"order {' → '.join(o)}: exit {rc}\n{t[-3000:]}" for o, rc, t in failed)
    assert len(results) == len(ORDERS) >= 24
