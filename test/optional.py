"""Optional packages of the test suite: what is absent is a skip that names it and how to install it.

A rosdep install (`rosdep install --from-paths src`, then `colcon test`) has only what package.xml's keys name;
mcap, orjson, matplotlib, rosbags, example-robot-data, mujoco, drake, pin, yourdfpy, pytest-xdist ... are extras
or test-only helpers. ``needs("mcap", ...)`` is a ``skipif`` mark (module: ``pytestmark = needs(...)``);
``require("mcap", ...)`` skips from inside a test or fixture. Both look the modules up without importing them.
"""

from __future__ import annotations

import importlib.util

import pytest

# import name -> (pip name, apt package or "") — what the skip reason tells to install
PACKAGES: dict[str, tuple[str, str]] = {
    "mcap": ("mcap", ""),
    "mcap_ros2": ("mcap-ros2-support", ""),
    "orjson": ("orjson", ""),
    "matplotlib": ("matplotlib", "python3-matplotlib"),
    "rosbags": ("rosbags", ""),
    "example_robot_data": ("example-robot-data", ""),
    "mujoco": ("mujoco", ""),
    "pydrake": ("drake", ""),
    "pinocchio": ("pin", ""),
    "yourdfpy": ("yourdfpy", ""),
    "xdist": ("pytest-xdist", "python3-pytest-xdist"),
    "numba": ("numba", "python3-numba"),
    "hypothesis": ("hypothesis", "python3-hypothesis"),
    "rosdep2": ("rosdep", "python3-rosdep"),
    "launch": ("", "ros-<distro>-launch"),
    "launch_ros": ("", "ros-<distro>-launch-ros"),
    "launch_testing": ("", "ros-<distro>-launch-testing"),
    "tf2_ros": ("", "ros-<distro>-tf2-ros-py"),
}


def absent(*modules: str) -> list[str]:
    """Those of ``modules`` (top-level import names) that are not installed."""
    out = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out.append(name)
    return out


def reason(missing: list[str]) -> str:
    """``mcap, mcap_ros2 not installed (pip install mcap mcap-ros2-support)``."""
    pip = [PACKAGES.get(m, (m, ""))[0] for m in missing]
    apt = [PACKAGES.get(m, ("", ""))[1] for m in missing]
    how = []
    if any(pip):
        how.append("pip install " + " ".join(p for p in pip if p))
    if any(apt):
        how.append("apt install " + " ".join(a for a in apt if a))
    return f"{', '.join(missing)} not installed ({' or '.join(how)})"


def needs(*modules: str) -> pytest.MarkDecorator:
    """A ``skipif`` mark: skip, naming them, when any of ``modules`` is not installed."""
    missing = absent(*modules)
    return pytest.mark.skipif(bool(missing), reason=reason(missing) if missing else "")


def require(*modules: str) -> None:
    """Skip the running test, naming them, when any of ``modules`` is not installed."""
    missing = absent(*modules)
    if missing:
        pytest.skip(reason(missing))


MCAP = ("mcap", "mcap_ros2")
"""MCAP recording and reading (the ``record`` extra)."""
