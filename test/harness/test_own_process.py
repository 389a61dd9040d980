"""test/own_process.py: a native-heavy module's tests run in a child process; a test whose child dies
fails with the signal, the module's other tests go on in a new child; a SIGSEGV inside Drake in the
Drake modules runs the test once more, and only a second crash fails it (RETRY_DRAKE_CRASH).

Each case is a small project in tmp_path whose conftest registers own_process as the suite's does, run
by a real ``python -m pytest`` (plain, and with xdist, whose controller prints the summary, where installed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from optional import require
from repo_paths import TEST_DIR

HERE = TEST_DIR

CONFTEST = f"""
import sys
sys.path.insert(0, {str(HERE)!r})
from own_process import register


def pytest_configure(config):
    register(config)
"""

# a module whose name says "Drake": its frame is the crashing one, as pydrake's is in a real crash
PYDRAKE_CRASH = """
import os
import signal


def crash():
    os.kill(os.getpid(), signal.SIGSEGV)
"""

MODULE = """
from pathlib import Path
import os
import signal

import pydrake_crash

MARK = Path(__file__).with_name("crashed.{kind}")


def test_a():
    if {kind!r} == "drake_once" and not MARK.exists():
        MARK.write_text("1")
        pydrake_crash.crash()
    if {kind!r} == "drake_always":
        pydrake_crash.crash()
    if {kind!r} == "elsewhere":
        os.kill(os.getpid(), signal.SIGSEGV)
    assert os.environ.get("RSF_TEST_CHILD_REPORTS")  # it ran in the child


def test_b():
    assert os.environ.get("RSF_TEST_CHILD_REPORTS")
"""


def _run(tmp_path: Path, kind: str, module: str, workers: str | None) -> subprocess.CompletedProcess[str]:
    """``workers``: pytest-xdist's ``-n`` (None: plain pytest, as a rosdep install without xdist runs it)."""
    if workers is not None:
        require("xdist")
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "pydrake_crash.py").write_text(PYDRAKE_CRASH)
    (tmp_path / module).write_text(MODULE.format(kind=kind))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:launch_testing",
                           "-p", "no:launch_ros", *(["-n", workers] if workers is not None else []), "-q", "-rA",
                           module], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("workers", [None, "0", "1"])
def test_a_drake_crash_runs_the_test_again(tmp_path: Path, workers: str | None) -> None:
    out = _run(tmp_path, "drake_once", "test_sim_drake.py", workers)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed" in out.stdout
    assert "Drake crashes, each test run again in a new process" in out.stdout
    assert "test_sim_drake.py::test_a: first run: the test's process died with signal 11 (SIGSEGV)" in out.stdout


def test_a_second_drake_crash_fails(tmp_path: Path) -> None:
    out = _run(tmp_path, "drake_always", "test_sim_drake.py", None)
    assert out.returncode == 1
    assert "1 failed, 1 passed" in out.stdout
    assert "FAILED test_sim_drake.py::test_a" in out.stdout
    assert "the test's process died with signal 11 (SIGSEGV)" in out.stdout


@pytest.mark.parametrize("kind,module", [("elsewhere", "test_sim_drake.py"), ("drake_once", "test_sim_mujoco.py")])
def test_other_crashes_fail_at_once(tmp_path: Path, kind: str, module: str) -> None:
    """A crash outside Drake, or in a module not of RETRY_DRAKE_CRASH, fails the test the first time;
    the module's next test runs in a new child."""
    out = _run(tmp_path, kind, module, None)
    assert out.returncode == 1
    assert "1 failed, 1 passed" in out.stdout
    assert f"FAILED {module}::test_a" in out.stdout
    assert "Drake crashes" not in out.stdout


def test_the_next_folder_sets_up_after_an_own_process_module(tmp_path: Path) -> None:
    """An in-process module, then an own-process one in the same folder, then a module in another folder:
    the folder the first two share is closed before the third is set up (before the fix, the third failed at
    setup with pytest's "previous item was not torn down properly", as test/model/urdf/ did after
    test/model/mjcf/ in CI)."""
    (tmp_path / "conftest.py").write_text(CONFTEST)
    for folder, module in (("a", "test_first.py"), ("a", "test_sim_mujoco.py"), ("b", "test_next.py")):
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / module).write_text("def test_it():\n    pass\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:launch_testing",
                          "-p", "no:launch_ros", "-p", "no:xdist", "-q", "a/test_first.py", "a/test_sim_mujoco.py",
                          "b/test_next.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 passed" in out.stdout, out.stdout
