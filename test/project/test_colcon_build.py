"""`colcon build` of this package into a temporary workspace puts things where ros2 run/launch look;
`colcon test` there runs the launch_testing test against the workspace's install space."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from repo_paths import REPO_ROOT
from ros_tools import skip_reason

ROOT = REPO_ROOT
PKG = "robot_state_format"
IGNORE = shutil.ignore_patterns(".venv", ".git", "build", "install", "log", "__pycache__", ".*_cache",
                                "*.egg-info", ".hypothesis")


@pytest.mark.slow
@pytest.mark.timeout(1200)  # a colcon build and two collections of the whole suite, on a loaded machine too
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
    # and on PATH after sourcing the workspace (colcon puts <prefix>/bin there), as xacro is
    on_path = prefix / "bin" / "robot-state-format"
    assert os.access(on_path, os.X_OK) and on_path.read_text().startswith("#!/usr/bin/env python3\n")
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
    version = subprocess.run([sys.executable, str(on_path), "--version"], cwd=tmp_path, capture_output=True,
                             text=True, env=run_env, timeout=60, check=False)
    assert version.returncode == 0 and version.stdout.strip().endswith(_version()), version.stderr
    where = subprocess.run([sys.executable, "-c", f"import {PKG}; print({PKG}.__file__)"], cwd=tmp_path,
                           capture_output=True, text=True, env=run_env, timeout=60, check=True)
    assert Path(where.stdout.strip()).is_relative_to(site)


    # `colcon test` collects the whole suite (launch_testing's plugin included), and without the optional
    # packages (hypothesis, numba, mcap, orjson made unimportable) only the modules importing them fail to
    # import, each on its own: never the folder (issue 26: "1 skipped" for ~1700 tests).
    counts = _colcon_collected(tmp_path, env)
    assert counts["tests"] > 1000 and counts["errors"] == [], counts
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(BLOCKER)
    # (--assert=plain: pytest marks the packages of its entry-point plugins, hypothesis's among them, for assertion
    # rewriting, and its import hook, ahead of the blocker, would then find hypothesis; an install without
    # hypothesis has no such plugin)
    blocked = _colcon_collected(tmp_path, dict(env, PYTHONPATH=os.pathsep.join(
        p for p in (str(blocker), env.get("PYTHONPATH", "")) if p)), "--assert=plain", "-p", "no:hypothesispytest")
    assert blocked["tests"] > 1000, blocked
    assert blocked["errors"] == _importers_of("hypothesis"), blocked  # a test_depend: those error, alone

    # `colcon test` in the same workspace: the launch_testing test through colcon's pytest step, with the
    # workspace's install/ as the ament prefix (the launch file's Node finds lib/robot_state_format there).
    reason = skip_reason("launch_testing", "launch_ros")
    if reason is not None:
        pytest.skip(f"colcon build checked; colcon test not run: {reason}")
    tested = subprocess.run(
        [sys.executable, "-m", "colcon", "--log-base", str(tmp_path / "log"), "test",
         "--base-paths", str(tmp_path / "src"), "--build-base", str(tmp_path / "build"),
         "--install-base", str(tmp_path / "install"), "--event-handlers", "console_direct-",
         "--pytest-args", "test/ros/test_launch_state_publisher.py"],
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


BLOCKER = """import sys

class _NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"hypothesis", "numba", "llvmlite", "mcap", "mcap_ros2", "orjson"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, _NotInstalled())
"""


def _importers_of(module: str) -> list[str]:
    """The test modules importing ``module`` at their top, directly or through another test module."""
    texts = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "test").rglob("test_*.py")}
    users = {n for n, t in texts.items() if re.search(rf"^(from|import) {module}\b", t, flags=re.M)}
    grew = True
    while grew:
        more = {n for n, t in texts.items() if n not in users
                and any(re.search(rf"^from {u[:-3]} import", t, flags=re.M) for u in users)}
        users |= more
        grew = bool(more)
    return sorted(users)


def _colcon_collected(ws: Path, env: dict[str, str], *pytest_args: str) -> dict[str, Any]:
    """``colcon test --pytest-args --collect-only -qq`` in the workspace: tests collected, modules in error."""
    result = subprocess.run(
        [sys.executable, "-m", "colcon", "--log-base", str(ws / "log"), "test",
         "--base-paths", str(ws / "src"), "--build-base", str(ws / "build"), "--install-base", str(ws / "install"),
         "--event-handlers", "console_direct+", "--pytest-args", "--collect-only", "-qq", "-p", "no:cacheprovider", *pytest_args],
        cwd=ws, capture_output=True, text=True, env=env, timeout=300, check=False)
    out = result.stdout + result.stderr
    per_file = re.findall(r"^test/(?:\w+/)*(test_\w+\.py): (\d+)$", out, flags=re.M)  # test/<room>/test_x.py
    # "ERROR collecting test/x.py" (its section), or the summary's "ERROR test/x.py" (pytest 7.4, Ubuntu 24.04's)
    errors = sorted(set(re.findall(r"ERROR (?:collecting )?test/(?:\w+/)*(test_\w+\.py)", out)))
    return {"tests": sum(int(n) for _f, n in per_file), "files": len(per_file), "errors": errors,
            "returncode": result.returncode, "tail": out[-1500:] if not per_file else ""}


def _version() -> str:
    text = (ROOT / PKG / "__init__.py").read_text()
    return text.split('__version__ = "', 1)[1].split('"', 1)[0]
