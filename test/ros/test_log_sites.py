"""ros/log_sites.py: the entries put in inspect's file -> module cache are the ones inspect computes itself."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

PROBE = """
import inspect, os, sys
import rclpy.impl.rcutils_logger
import robot_state_format.ros.state_store
from robot_state_format.ros import log_sites
before = dict(inspect.modulesbyfile)
log_sites.prime()
added = {k: v for k, v in inspect.modulesbyfile.items() if k not in before}
assert added, "nothing primed"
for path, name in added.items():
    assert name.startswith(("rclpy", "robot_state_format")), name
    assert os.path.normcase(inspect.getabsfile(sys.modules[name])) == path, (path, name)
needed = [os.path.normcase(os.path.abspath(m.__file__)) for m in (
    rclpy.impl.rcutils_logger, robot_state_format.ros.state_store)]
assert all(p in inspect.modulesbyfile for p in needed)
# the walk over sys.modules is what priming saves: the modules a log line looks at are found without it
modules = sys.modules
class NoWalk(dict):
    def copy(self):
        raise AssertionError("inspect walked sys.modules")
sys.modules = NoWalk(modules)
try:
    state_store = modules["robot_state_format.ros.state_store"]
    logger = modules["rclpy.impl.rcutils_logger"]
    # code objects, as the frames rclpy inspects: found by their file, not by a __module__
    assert inspect.getmodule(state_store.main.__code__) is state_store
    assert inspect.getmodule(logger._find_caller.__code__) is logger
finally:
    sys.modules = modules
print("ok", len(added))
"""


def test_primed_entries_are_inspects_own() -> None:
    r = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0 and r.stdout.startswith("ok"), r.stdout + r.stderr
