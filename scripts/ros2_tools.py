"""Set-up stage ``ros2tools``: the upstream ROS 2 tools that PyPI lacks, built into ``.venv``.

Only where no ROS 2 distro is sourced (wheels mode). Installs launch, launch_xml, launch_yaml,
launch_testing, launch_pytest, launch_ros, launch_testing_ros, ros2launch, ros2cli (ros2run, ros2pkg,
ros2topic, ros2node, ros2param, ros2service, ros2interface, ros2action), rosidl_runtime_py, and builds with
cmake composition_interfaces, the upstream tf2_msgs (replacing the project's TFMessage-only one), tf2 and
tf2_py, then tf2_ros_py and tf2_tools.

Sources, in this order:

1. the archives in ``$RSF_ROS2_SRC`` or, when unset, ``../shared/ros2-src`` beside the repository
   (unmodified exports of the upstream repositories at the commits of ``PINS``);
2. ``git`` at the same pinned commits, when the archives are absent and GitHub answers;
3. neither: nothing is installed, the set-up goes on, and the tests that need the tools skip naming
   what is missing (``RSF_ROS2_SRC`` or network).

NEVER install these by name from PyPI: an unrelated project called ``launch`` is published there.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tarfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ENV_VAR = "RSF_ROS2_SRC"
# archive (= repository directory) -> (git URL, commit); the commits the archives were exported from.
PINS: dict[str, tuple[str, str]] = {
    "launch": ("https://github.com/ros2/launch.git", "02595bafc7891d4d287667b6aa9161edf738e9f3"),
    "launch_ros": ("https://github.com/ros2/launch_ros.git", "f9ab9371824d470bca47602bc7d277eb2217c90d"),
    "ros2cli": ("https://github.com/ros2/ros2cli.git", "e20d2c664fc2981b0b80ebed534e5becc6fdbf34"),
    "rosidl_runtime_py": ("https://github.com/ros2/rosidl_runtime_py.git",
                          "3327b1dc488af514017c5446ffff12d102bbe94a"),
    "rcl_interfaces": ("https://github.com/ros2/rcl_interfaces.git", "f6b3741d921ef5414125091b2ccc74b863be3c24"),
    "geometry2": ("https://github.com/ros2/geometry2.git", "1b005c6556cf350d7670812ef30eefed8443a759"),
}
# Pure Python (ament_python) packages, as paths inside the repositories.
PYTHON_PACKAGES = (
    "launch/launch", "launch/launch_xml", "launch/launch_yaml", "launch/launch_testing", "launch/launch_pytest",
    "launch_ros/launch_ros", "launch_ros/launch_testing_ros", "launch_ros/ros2launch",
    "ros2cli/ros2cli", "ros2cli/ros2run", "ros2cli/ros2pkg", "ros2cli/ros2topic", "ros2cli/ros2node",
    "ros2cli/ros2param", "ros2cli/ros2service", "ros2cli/ros2interface", "ros2cli/ros2action",
    "rosidl_runtime_py",
)
# cmake packages: two chains that do not depend on each other, built side by side.
CMAKE_CHAINS = (
    ("rcl_interfaces/composition_interfaces",),
    ("geometry2/tf2_msgs", "geometry2/tf2", "geometry2/tf2_py"),
)
AFTER_CMAKE = ("geometry2/tf2_ros_py", "geometry2/tf2_tools")
# Imports that prove the stage complete.
PROBE = "import launch, launch_ros, launch_testing, launch_testing_ros, ros2cli, rosidl_runtime_py, " \
        "composition_interfaces.srv, tf2_msgs.srv, tf2_py, tf2_ros, tf2_tools"
HOW_TO_GET = (f"set {ENV_VAR} to a directory holding the archives of ../shared/ros2-src "
              "(launch, launch_ros, ros2cli, rosidl_runtime_py, rcl_interfaces, geometry2 .tar.gz), or give the "
              "machine access to github.com, then run `./run setup --force`")


def source_dir(root: Path) -> Path | None:
    """The archive directory: ``$RSF_ROS2_SRC``, else ``<root>/../shared/ros2-src`` if it exists."""
    given = os.environ.get(ENV_VAR, "").strip()
    path = Path(given).expanduser() if given else root.parent / "shared" / "ros2-src"
    if all((path / f"{name}.tar.gz").is_file() for name in PINS):
        return path.resolve()
    return None


def digest(root: Path) -> str:
    """Stage hash: the archives' content where they exist, else the pins (the git route)."""
    h = hashlib.sha256()
    src = source_dir(root)
    if src is None:
        h.update(b"git\0")
        for name, (url, commit) in sorted(PINS.items()):
            h.update(f"{name} {url} {commit}\n".encode())
        return "git:" + h.hexdigest()
    for name in sorted(PINS):
        h.update(name.encode() + b"\0")
        h.update(hashlib.sha256((src / f"{name}.tar.gz").read_bytes()).digest())
    return "archives:" + h.hexdigest()


def _git_fetch(dest: Path, url: str, commit: str, run: Callable[..., None], logfile: Path) -> None:
    dest.mkdir(parents=True)
    run(["git", "init", "-q", str(dest)], f"git init {dest.name}", logfile)
    run(["git", "-C", str(dest), "fetch", "-q", "--depth", "1", url, commit], f"git fetch {url} {commit}", logfile)
    run(["git", "-C", str(dest), "checkout", "-q", "FETCH_HEAD"], f"git checkout {commit}", logfile)


def _github_reachable() -> bool:
    if shutil.which("git") is None:
        return False
    url, _ = PINS["launch"]
    try:
        probe = subprocess.run(["git", "ls-remote", "--exit-code", url, "HEAD"], capture_output=True,
                               timeout=15, check=False, env=dict(os.environ, GIT_TERMINAL_PROMPT="0"))
    except subprocess.TimeoutExpired:
        return False
    return probe.returncode == 0


def fetch_sources(root: Path, work: Path, run: Callable[..., None], logfile: Path,
                  log: Callable[[str], None]) -> Path | None:
    """Unpack the archives (or git-fetch the pinned commits) into ``work``; None when neither is possible."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    src = source_dir(root)
    if src is not None:
        log(f"unpacking the ROS 2 tool sources from {src}")
        for name in PINS:
            with tarfile.open(src / f"{name}.tar.gz") as tar:
                tar.extractall(work, filter="data")
            if not (work / name).is_dir():
                raise RuntimeError(f"{src / (name + '.tar.gz')} does not hold a top directory {name}/")
        return work
    if not _github_reachable():
        return None
    log("fetching the ROS 2 tool sources from GitHub at the pinned commits")
    for name, (url, commit) in PINS.items():
        _git_fetch(work / name, url, commit, run, logfile)
    return work


def build_cmake_chains(srcs: Path, venv: Path, python: Path, run: Callable[..., None], logfile: Path,
                       log: Callable[[str], None], env: dict[str, str]) -> None:
    """Configure, build and install the cmake packages into ``venv`` (two independent chains in parallel)."""
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    jobs = str(max(1, os.cpu_count() or 1))

    def chain(packages: tuple[str, ...]) -> None:
        for rel in packages:
            name = Path(rel).name
            build = venv / "build" / "ros2" / name
            shutil.rmtree(build, ignore_errors=True)
            log(f"building {name} (cmake) into {venv.name}")
            run(["cmake", "-S", str(srcs / rel), "-B", str(build), *generator,
                 f"-DCMAKE_INSTALL_PREFIX={venv}", f"-DPython3_EXECUTABLE={python}",
                 "-DBUILD_TESTING=OFF", "-DCMAKE_BUILD_TYPE=Release"],
                f"configuring {name} (cmake)", logfile, env=env)
            run(["cmake", "--build", str(build), "--parallel", jobs], f"building {name} (cmake --build)",
                logfile, env=env)
            run(["cmake", "--install", str(build)], f"installing {name} (cmake --install)", logfile, env=env)

    with ThreadPoolExecutor(max_workers=len(CMAKE_CHAINS)) as pool:
        futures = [pool.submit(chain, packages) for packages in CMAKE_CHAINS]
        for future in futures:
            future.result()  # re-raises the first chain's failure
