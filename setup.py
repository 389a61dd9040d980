"""ament_python packaging of robot_state_format (colcon), beside pyproject.toml (pip, uv, build).

The metadata lives in pyproject.toml. This file adds what that table cannot hold: the ``data_files`` of a ROS
package (the ament index marker, package.xml, launch files, config, samples) and, when colcon installs the
package (``setup.py install``/``develop``, not a wheel), ``bin/robot-state-format`` (scripts/robot-state-format), so the
command is on PATH after sourcing the workspace (console scripts go to ``lib/robot_state_format`` for
``ros2 run``, setup.cfg). setuptools older than 61 (Ubuntu 22.04's, what colcon uses on Humble) does not read
pyproject.toml: it gets the same metadata from :data:`LEGACY_METADATA` (test/project/test_packaging.py checks both agree).
"""

from __future__ import annotations

import re
import sys
from glob import glob
from pathlib import Path

import setuptools
from setuptools import setup

PACKAGE = "robot_state_format"
HERE = Path(__file__).resolve().parent


def _version() -> str:
    text = (HERE / PACKAGE / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"', text, flags=re.M)
    if found is None:
        raise RuntimeError(f"no __version__ in {PACKAGE}/__init__.py")
    return found.group(1)


def _sample_data_files() -> list[tuple[str, list[str]]]:
    """Every file under robot_state_format/samples/, mirrored into share/<pkg>/samples/."""
    groups: dict[str, list[str]] = {}
    for path in sorted(glob(f"{PACKAGE}/samples/**/*", recursive=True)):
        p = Path(path)
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc":
            rel = p.parent.relative_to(PACKAGE)
            groups.setdefault(f"share/{PACKAGE}/{rel.as_posix()}", []).append(path)
    return sorted(groups.items())


# What pyproject.toml says, for setuptools < 61 (which ignores it); newer setuptools takes pyproject.toml's.
LEGACY_METADATA = {
    "name": PACKAGE,
    "version": _version(),
    "description": "Share a robot's state: URDF/xacro/SDFormat readers, kinematics, the USDF world_state format, "
                   "ROS 2 nodes",
    "license": "Apache-2.0",
    "packages": setuptools.find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    "package_data": {PACKAGE: ["samples/*", "samples/**/*", "usdf/schema/*", "model/sdf/spec/*", "py.typed"]},
    "install_requires": ["lxml>=4.8.0", "numpy>=1.21.5", "xacro>=2.0", "PyYAML>=5.4.1"],
    "extras_require": {
        "record": ["mcap>=1.5", "mcap-ros2-support>=0.5", "orjson>=3.9"],
        "fast": ["numba>=0.60"],
        "sim": ["mujoco>=4.0.0", "drake>=1.51.1"],
        "plot": ["matplotlib>=3.5"],
        "view": ["viser>=1.1.1", "pycollada>=0.9"],
        "test": ["pytest>=8.0,<9", "hypothesis>=6.100", "pytest-timeout>=2.2"],
    },
    "zip_safe": False,
    "entry_points": {
        "console_scripts": [
            f"robot-state-format = {PACKAGE}.cli:entry_point",
            f"state_publisher = {PACKAGE}.ros.entry:state_publisher",
            f"state_store = {PACKAGE}.ros.entry:state_store",
            f"joint_state_source = {PACKAGE}.ros.entry:joint_state_source",
            f"sim_bridge = {PACKAGE}.ros.entry:sim_bridge",
        ],
    },
}
READS_PYPROJECT = int(setuptools.__version__.split(".")[0]) >= 61
# colcon (ament_python) reads the data files with `setup.py --dry-run`, then runs `install` or `develop`
# (--symlink-install); pip/uv/build go through PEP 517 (bdist_wheel, editable_wheel, sdist ...), whose wheels
# already get the console script in bin/ (the same name there would clash).
PEP517 = {"bdist_wheel", "editable_wheel", "sdist", "dist_info", "bdist_egg"}  # (colcon runs egg_info too)
COLCON_INSTALL = not PEP517 & set(sys.argv[1:])

setup(
    **({} if READS_PYPROJECT else LEGACY_METADATA),
    python_requires=">=3.10",  # here, not in pyproject.toml (see its `dynamic`): the oldest tested, Humble's 3.10
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", sorted(glob("launch/*.launch.py"))),
        (f"share/{PACKAGE}/config", sorted(glob("config/*.xml"))),
        *_sample_data_files(),
        *([("bin", ["scripts/robot-state-format"])] if COLCON_INSTALL else []),
    ],
)
