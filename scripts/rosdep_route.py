#!/usr/bin/env python3
"""The README's rosdep + colcon route on ROS 2 Jazzy, emulated with PyPI (CI runs it: .ci/run).

On a clean clone, from nothing:

1. rosdep (from PyPI, in a tool venv) resolves this package's keys offline for Jazzy on Ubuntu 24.04, from the
   rosdistro snapshot in ``$RSF_ROSDISTRO`` (default ``../shared/rosdistro``), exactly as that folder's README says;
2. a Python 3.12 venv (pyenv's ``3.12.*``, or ``$RSF_PYTHON312``) gets the PyPI equivalent of each resolved key and
   nothing else: the ``ros-jazzy-*`` wheels (plus ``ros-jazzy-rmw-fastrtps-cpp``, the rmw an apt rclpy pulls),
   Ubuntu 24.04's versions of the ``python3-*`` packages, xacro at Jazzy's release, tf2_msgs built from upstream
   (``$RSF_ROS2_SRC/geometry2.tar.gz``); keys with no PyPI equivalent (launch, launch_ros, launch_testing,
   tf2_ros_py) are named and left out, as the suite must cope with their absence;
3. colcon (constrained to the venv's own versions, so pytest stays Ubuntu's) builds and tests a workspace holding
   a copy of the clone and nothing beside it: ``colcon build``, ``colcon test``, ``colcon test-result --verbose``.

Exit 0 when test-result is green and at least ``--min-tests`` (1000) tests ran (not skipped); 1 when red or
too few; 2 when the route could not be built. Work happens in ``--work`` (default a new temporary directory,
removed at the end unless ``--keep``); downloads are cached by uv and pip in their own caches, outside the clone.
Usage: ``python3 scripts/rosdep_route.py [--work DIR] [--keep] [--min-tests N]``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DISTRO, OS = "jazzy", "ubuntu:noble"
# apt python3-* packages -> the same release on PyPI (Ubuntu 24.04 "noble" versions).
APT_TO_PIP = {
    "python3-numpy": "numpy==1.26.4",
    "python3-lxml": "lxml==5.2.1",
    "python3-yaml": "PyYAML==6.0.1",
    "python3-pytest": "pytest==7.4.4",
    "python3-pytest-timeout": "pytest-timeout==2.2.0",
    "python3-pytest-xdist": "pytest-xdist==3.5.0",
    "python3-hypothesis": "hypothesis==6.98.15",
    "python3-setuptools": "setuptools==68.1.2",
    # jazzy/distribution.yaml: xacro 2.1.1 (PyPI has that release; no ros-jazzy-xacro wheel)
    "ros-jazzy-xacro": "xacro==2.1.1",
}
# ros-jazzy-* apt packages with no wheel on PyPI: left out (the suite skips what needs them, naming them).
NO_WHEEL = {"ros-jazzy-launch", "ros-jazzy-launch-ros", "ros-jazzy-launch-testing", "ros-jazzy-launch-testing-ros",
            "ros-jazzy-tf2-ros-py"}
BUILT = {"ros-jazzy-tf2-msgs"}  # built from upstream's source (../shared/ros2-src/geometry2.tar.gz)
# What building tf2_msgs needs (the build side of an apt ros-jazzy-tf2-msgs, pinned to Jazzy's releases): the
# "Build side" part of requirements/ros-jazzy.txt, which the set-up of .venv-jazzy uses for the same build.
def tf2_build_requirements() -> list[str]:
    lines = (ROOT / "requirements" / "ros-jazzy.txt").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("# Build side"))
    return [line.split("#")[0].strip() for line in lines[start:] if line.split("#")[0].strip()] + \
        ["ros-jazzy-action-msgs"]


WHEEL_PY_INCLUDE = re.compile(r"/opt/python/cp3\d+-cp3\d+/include/python3\.\d+")
WHEEL_NUMPY_INCLUDE = re.compile(r"/opt/python/cp3\d+-cp3\d+/lib/python3\.\d+/site-packages/numpy/(?:_core|core)/include")
_T0 = time.monotonic()


class RouteError(Exception):
    """The route could not be built (not a test failure)."""


def log(msg: str) -> None:
    print(f"[rosdep-route {time.monotonic() - _T0:6.1f}s] {msg}", file=sys.stderr, flush=True)


def run(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None, check: bool = True,
        capture: bool = False) -> subprocess.CompletedProcess[str]:
    log("$ " + " ".join(cmd))
    proc = subprocess.run(cmd, env=env, cwd=cwd, text=True, check=False,
                          stdout=subprocess.PIPE if capture else None, stderr=None)
    if check and proc.returncode != 0:
        raise RouteError(f"{cmd[0]} {' '.join(cmd[1:3])} ... failed (exit {proc.returncode})")
    return proc


def python312() -> str:
    given = os.environ.get("RSF_PYTHON312", "").strip()
    if given:
        return given
    pyenv = subprocess.run(["pyenv", "root"], capture_output=True, text=True, check=False).stdout.strip() \
        if shutil.which("pyenv") else os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    found = sorted(Path(pyenv or "/root/.pyenv").glob("versions/3.12.*/bin/python"),
                   key=lambda p: [int(x) if x.isdigit() else 0 for x in p.parent.parent.name.split(".")])
    if found:
        return str(found[-1])
    on_path = shutil.which("python3.12")
    if on_path:
        return on_path
    raise RouteError("no Python 3.12 (pyenv install 3.12, or set RSF_PYTHON312)")


def copy_clone(dest: Path) -> None:
    """The clone's files (tracked and untracked, not ignored: no venvs, no build output), nothing beside them."""
    listing = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listing):
        src = ROOT / rel
        if src.is_file() or src.is_symlink():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target, follow_symlinks=False)


def rosdep_resolve(tools: Path, work: Path, src: Path, rosdistro: Path) -> list[tuple[str, str, list[str]]]:
    """The README's offline rosdep block; returns (key, installer, packages) for every key of the package."""
    sources = work / "sources.list.d"
    sources.mkdir(parents=True, exist_ok=True)
    (sources / "20-default.list").write_text(f"yaml file://{rosdistro}/rosdep/base.yaml\n"
                                             f"yaml file://{rosdistro}/rosdep/python.yaml\n")
    env = dict(os.environ, ROSDEP_SOURCE_PATH=str(sources), ROSDISTRO_INDEX_URL=f"file://{rosdistro}/index-v4.yaml",
               ROS_HOME=str(work / "roshome"))
    rosdep = str(tools / "bin" / "rosdep")
    run([rosdep, "update", "--rosdistro", DISTRO], env=env)
    run([rosdep, "install", "--simulate", "--from-paths", str(src), "--os", OS, "--rosdistro", DISTRO, "-y"],
        env=env, check=False)  # for the log only: --simulate leaves out what the host already has
    keys = run([rosdep, "keys", "--from-paths", str(src), "--os", OS, "--rosdistro", DISTRO], env=env,
               capture=True).stdout.split()
    out = run([rosdep, "resolve", *sorted(set(keys)), "--os", OS, "--rosdistro", DISTRO], env=env,
              capture=True).stdout
    resolved: list[tuple[str, str, list[str]]] = []
    for line in out.splitlines():
        if line.startswith("#ROSDEP[") and line.endswith("]"):
            resolved.append((line[len("#ROSDEP["):-1], "", []))
        elif line.startswith("#") and resolved:
            resolved[-1] = (resolved[-1][0], line[1:].strip(), resolved[-1][2])
        elif line.strip() and resolved:
            resolved[-1][2].extend(line.split())
    if sorted(k for k, _i, _p in resolved) != sorted(set(keys)):
        raise RouteError(f"rosdep resolved {[k for k, _i, _p in resolved]}, not the keys {sorted(set(keys))}")
    return resolved


def pypi_equivalents(resolved: list[tuple[str, str, list[str]]]) -> tuple[list[str], list[str], list[str]]:
    """(pip requirements, packages to build, apt packages with no PyPI equivalent) for the resolved keys."""
    reqs, build, missing = [], [], []
    for key, installer, packages in resolved:
        for pkg in packages:
            if installer == "pip":
                reqs.append(pkg)
            elif installer != "apt":
                raise RouteError(f"key {key} resolved to installer {installer!r}: not emulated")
            elif pkg in APT_TO_PIP:
                reqs.append(APT_TO_PIP[pkg])
            elif pkg in BUILT:
                build.append(pkg)
            elif pkg in NO_WHEEL:
                missing.append(pkg)
            elif pkg.startswith(f"ros-{DISTRO}-"):
                reqs.append(pkg)  # the ros-jazzy-* wheel of the same name
            else:
                raise RouteError(f"key {key}: apt package {pkg} has no PyPI equivalent in {__file__}'s table")
    if any(r.startswith("ros-jazzy-rclpy") for r in reqs):
        reqs.append("ros-jazzy-rmw-fastrtps-cpp")  # apt's rclpy pulls the default rmw; the wheel does not
    return reqs, build, missing


def fix_wheel_cmake_exports(venv: Path, python: Path) -> None:
    """The wheels' rosidl_generator_py cmake exports name the wheel builder's include dirs; point them here."""
    probe = run([str(python), "-c", "import sysconfig, numpy; print(sysconfig.get_paths()['include']); "
                 "print(numpy.get_include())"], capture=True)
    py_inc, np_inc = probe.stdout.split("\n")[:2]
    for path in venv.glob("share/*/cmake/export_*__rosidl_generator_pyExport.cmake"):
        text = path.read_text()
        new = WHEEL_PY_INCLUDE.sub(lambda _m: py_inc, WHEEL_NUMPY_INCLUDE.sub(lambda _m: np_inc, text))
        if new != text:
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(new)
            os.replace(tmp, path)  # a new file: the installer may have hard-linked this one to its cache


def build_tf2_msgs(venv: Path, work: Path, ros2_src: Path) -> None:
    archive = ros2_src / "geometry2.tar.gz"
    if not archive.is_file():
        raise RouteError(f"{archive} not found (set RSF_ROS2_SRC to the folder holding geometry2.tar.gz)")
    with tarfile.open(archive) as tar:
        tar.extractall(work / "geometry2-src", filter="data") if sys.version_info >= (3, 12) \
            else tar.extractall(work / "geometry2-src")
    srcs = [p.parent for p in (work / "geometry2-src").rglob("tf2_msgs/package.xml")]
    if not srcs:
        raise RouteError(f"no tf2_msgs/package.xml in {archive}")
    python = venv / "bin" / "python"
    fix_wheel_cmake_exports(venv, python)
    env = dict(os.environ, CMAKE_PREFIX_PATH=str(venv), AMENT_PREFIX_PATH=str(venv))
    build = work / "tf2_msgs-build"
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    log(f"building tf2_msgs (upstream, {archive.name}) into {venv}")
    run(["cmake", "-S", str(srcs[0]), "-B", str(build), *generator, f"-DCMAKE_INSTALL_PREFIX={venv}",
         f"-DPython3_EXECUTABLE={python}", "-DBUILD_TESTING=OFF", "-DCMAKE_BUILD_TYPE=Release"], env=env)
    run(["cmake", "--build", str(build), "--parallel", str(os.cpu_count() or 1)], env=env)
    run(["cmake", "--install", str(build)], env=env)
    run([str(python), "-c", "from tf2_msgs.msg import TFMessage"])


def test_summary(text: str) -> tuple[int, int, int, int]:
    """(tests, errors, failures, skipped) from ``colcon test-result``'s summary line."""
    match = re.search(r"Summary: (\d+) tests?, (\d+) errors?, (\d+) failures?, (\d+) skipped", text)
    if not match:
        raise RouteError("colcon test-result printed no summary")
    tests, errors, failures, skipped = (int(g) for g in match.groups())
    return tests, errors, failures, skipped


def route(work: Path, min_tests: int) -> int:
    shared = ROOT.parent / "shared"
    rosdistro = Path(os.environ.get("RSF_ROSDISTRO", shared / "rosdistro")).resolve()
    ros2_src = Path(os.environ.get("RSF_ROS2_SRC", shared / "ros2-src")).resolve()
    if not (rosdistro / "index-v4.yaml").is_file():
        raise RouteError(f"no rosdistro snapshot at {rosdistro} (set RSF_ROSDISTRO)")
    ws = work / "ws"
    src = ws / "src" / "robot_state_format"
    log(f"copying the clone into {src}")
    copy_clone(src)

    tools = work / "tools"
    run([sys.executable, "-m", "venv", str(tools)])
    run([str(tools / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", "rosdep", "uv>=0.4"])
    uv = str(tools / "bin" / "uv")
    uv_env = dict(os.environ, UV_NO_PROGRESS="1")
    resolved = rosdep_resolve(tools, work, src, rosdistro)
    for key, installer, packages in resolved:
        log(f"rosdep: {key} -> {installer} {' '.join(packages)}")
    reqs, build, missing = pypi_equivalents(resolved)
    if missing:
        log("no PyPI equivalent (left out, as in a venv of wheels): " + ", ".join(missing))

    venv = work / "venv"
    python = venv / "bin" / "python"
    run([uv, "venv", "--python", python312(), "--seed", str(venv)], env=uv_env)
    ubuntu = work / "ubuntu-noble.txt"  # what apt's python3-setuptools would be
    ubuntu.write_text("setuptools==68.1.2\n")
    pins = ["-c", str(ROOT / "requirements" / "ros-jazzy.txt"), "-c", str(ubuntu)]
    run([uv, "pip", "install", "--python", str(python), "--native-tls", *pins, *reqs, "setuptools"], env=uv_env)
    if build:
        run([uv, "pip", "install", "--python", str(python), "--native-tls", *pins, "numpy==1.26.4", *tf2_build_requirements()],
            env=uv_env)
        build_tf2_msgs(venv, work, ros2_src)
    # colcon in the same venv (colcon test runs sys.executable -m pytest), held to what is installed.
    frozen = work / "frozen.txt"
    frozen.write_text(run([uv, "pip", "freeze", "--python", str(python)], env=uv_env, capture=True).stdout)
    run([uv, "pip", "install", "--python", str(python), "--native-tls", "-c", str(frozen),
         "colcon-common-extensions"], env=uv_env)
    pytest_version = run([str(python), "-m", "pytest", "--version"], capture=True, check=False)
    log(f"pytest in the venv: {(pytest_version.stdout or '').strip()}")

    env = dict(os.environ)
    for var in ("AMENT_PREFIX_PATH", "PYTHONPATH", "RSF_DISTRO", "VIRTUAL_ENV", "ROS_DISTRO"):
        env.pop(var, None)
    env["VIRTUAL_ENV"] = str(venv)
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    colcon = str(venv / "bin" / "colcon")
    start = time.monotonic()
    run([colcon, "build"], env=env, cwd=ws)
    log(f"colcon build: {time.monotonic() - start:.0f} s")
    start = time.monotonic()
    run([colcon, "test", "--event-handlers", "console_cohesion+"], env=env, cwd=ws, check=False)
    log(f"colcon test: {time.monotonic() - start:.0f} s")
    result = run([colcon, "test-result", "--verbose"], env=env, cwd=ws, check=False, capture=True)
    print(result.stdout, flush=True)
    tests, errors, failures, skipped = test_summary(result.stdout)
    ran = tests - skipped
    if result.returncode != 0 or errors or failures:
        log(f"RED: colcon test-result exit {result.returncode}: {tests} tests, {errors} errors, "
            f"{failures} failures, {skipped} skipped")
        return 1
    if ran < min_tests:
        log(f"RED: only {ran} tests ran (not skipped); at least {min_tests} are required")
        return 1
    log(f"green: {tests} tests, {ran} ran, {skipped} skipped")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, help="working directory (default: a new temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the working directory")
    parser.add_argument("--min-tests", type=int, default=1000)
    args = parser.parse_args(argv)
    work = (args.work or Path(tempfile.mkdtemp(prefix="rsf-rosdep-route-"))).resolve()
    if work.is_relative_to(ROOT):
        parser.error(f"--work {work} is inside the clone; give a directory outside it")
    if work.exists() and any(work.iterdir()):
        parser.error(f"--work {work} is not empty")
    work.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    try:
        code = route(work, args.min_tests)
    except RouteError as exc:
        print(f"rosdep_route: error: {exc}", file=sys.stderr)
        code = 2
    finally:
        log(f"took {time.monotonic() - start:.0f} s")
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
