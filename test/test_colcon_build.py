"""`colcon build` of this package into a temporary workspace puts things where ros2 run/launch look;
`colcon test` there runs the launch_testing test against the workspace's install space."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from ros_tools import skip_reason

ROOT = Path(__file__).resolve().parent.parent
PKG = "robot_state_format"
IGNORE = shutil.ignore_patterns(".venv", ".git", "build", "install", "log", "__pycache__", ".*_cache",
                                "*.egg-info", ".hypothesis")


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("colcon_core") is None or importlib.util.find_spec("colcon_ros") is None,
                    reason="colcon-core / colcon-ros are not installed")
def test_colcon_build_and_test(tmp_path: Path) -> None:
    src = tmp_path / "src" / PKG
    shutil.copytree(ROOT, src, symlinks=False, ignore=IGNORE)  # a plain copy: no symlinks into the repo
    env = dict(os.environ)
    result = subprocess.run(
        [sys.executable, "-m", "colcon", "--log-base", str(tmp_path / "log"), "build",
         "--base-paths", str(tmp_path / "src"), "--build-base", str(tmp_path / "build"),
         "--install-base", str(tmp_path / "install"), "--event-handlers", "console_direct-"],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=240, check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]

    prefix = tmp_path / "install" / PKG
    # Only this package is built (scripts/ with the tf2_msgs helper carries COLCON_IGNORE).
    assert sorted(p.name for p in (tmp_path / "install").iterdir() if p.is_dir()) == [PKG]
    libexec = prefix / "lib" / PKG
    for exe in ("state_publisher", "state_store", "robot-state-format"):
        assert (libexec / exe).is_file(), f"missing lib/{PKG}/{exe}"
        assert os.access(libexec / exe, os.X_OK)
    share = prefix / "share" / PKG
    assert (share / "package.xml").read_bytes() == (ROOT / "package.xml").read_bytes()
    launch_src = sorted(p.name for p in (ROOT / "launch").glob("*.launch.py"))
    assert sorted(p.name for p in (share / "launch").glob("*.launch.py")) == launch_src
    config_src = sorted(p.name for p in (ROOT / "config").glob("*.xml"))
    assert config_src and sorted(p.name for p in (share / "config").glob("*.xml")) == config_src
    samples_src = sorted(p.name for p in (ROOT / PKG / "samples").iterdir() if p.is_file())
    assert sorted(p.name for p in (share / "samples").iterdir() if p.is_file()) == samples_src
    assert (prefix / "share" / "ament_index" / "resource_index" / "packages" / PKG).is_file()

    # The installed CLI runs from the install space (not from the repo).
    site = next(prefix.glob("lib/python3*/site-packages"))
    run_env = dict(env, PYTHONPATH=str(site), PYTHONSAFEPATH="1")
    version = subprocess.run([str(libexec / "robot-state-format"), "--version"], cwd=tmp_path,
                             capture_output=True, text=True, env=run_env, timeout=60, check=False)
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip().endswith(_version())
    where = subprocess.run([sys.executable, "-c", f"import {PKG}; print({PKG}.__file__)"], cwd=tmp_path,
                           capture_output=True, text=True, env=run_env, timeout=60, check=True)
    assert Path(where.stdout.strip()).is_relative_to(site)


    # `colcon test` in the same workspace: the launch_testing test through colcon's pytest step, with the
    # workspace's install/ as the ament prefix (the launch file's Node finds lib/robot_state_format there).
    reason = skip_reason("launch_testing", "launch_ros")
    if reason is not None:
        pytest.skip(f"colcon build checked; colcon test not run: {reason}")
    tested = subprocess.run(
        [sys.executable, "-m", "colcon", "--log-base", str(tmp_path / "log"), "test",
         "--base-paths", str(tmp_path / "src"), "--build-base", str(tmp_path / "build"),
         "--install-base", str(tmp_path / "install"), "--event-handlers", "console_direct-",
         "--pytest-args", "test/test_launch_state_publisher.py"],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=240, check=False,
    )
    assert tested.returncode == 0, tested.stdout[-4000:] + tested.stderr[-4000:]
    junit = ElementTree.parse(tmp_path / "build" / PKG / "pytest.xml").getroot()
    suite = junit if junit.tag == "testsuite" else junit.find("testsuite")
    assert suite is not None
    counts = {k: int(suite.get(k, "0")) for k in ("tests", "failures", "errors", "skipped")}
    assert counts["tests"] >= 1 and counts["failures"] == counts["errors"] == counts["skipped"] == 0, counts
    result = subprocess.run(
        [sys.executable, "-m", "colcon", "test-result", "--test-result-base", str(tmp_path / "build")],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=60, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def _version() -> str:
    text = (ROOT / PKG / "__init__.py").read_text()
    return text.split('__version__ = "', 1)[1].split('"', 1)[0]
