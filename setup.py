"""ament_python packaging of robot_state_format (works with colcon and with plain pip)."""

from __future__ import annotations

from glob import glob
from pathlib import Path

from setuptools import find_packages, setup

PACKAGE = "robot_state_format"
HERE = Path(__file__).resolve().parent


def _requirements() -> list[str]:
    """Runtime requirements, read from requirements/core.txt (one per line, # comments)."""
    path = HERE / "requirements" / "core.txt"
    if not path.exists():
        return []
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("-")]


def _sample_data_files() -> list[tuple[str, list[str]]]:
    """Every file under robot_state_format/samples/, mirrored into share/<pkg>/samples/."""
    groups: dict[str, list[str]] = {}
    for path in sorted(glob(f"{PACKAGE}/samples/**/*", recursive=True)):
        p = Path(path)
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc":
            rel = p.parent.relative_to(PACKAGE)
            groups.setdefault(f"share/{PACKAGE}/{rel.as_posix()}", []).append(path)
    return sorted(groups.items())


setup(
    name=PACKAGE,
    version="0.1.0",
    description="Share a robot's state: URDF/xacro/SDFormat readers, kinematics, USDF, ROS 2 nodes",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    include_package_data=False,
    package_data={PACKAGE: ["samples/*", "samples/**/*", "usdf/schema/*", "model/sdf/spec/*", "py.typed"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", sorted(glob("launch/*.launch.py"))),
        (f"share/{PACKAGE}/config", sorted(glob("config/*.xml"))),
        *_sample_data_files(),
    ],
    install_requires=_requirements(),
    extras_require={"test": ["pytest"]},  # makes `colcon test` run pytest (else it falls back to unittest)
    zip_safe=False,
    entry_points={
        "console_scripts": [
            f"robot-state-format = {PACKAGE}.cli:entry_point",
            f"state_publisher = {PACKAGE}.ros.state_publisher:main",
            f"state_store = {PACKAGE}.ros.state_store:main",
            f"joint_state_source = {PACKAGE}.ros.trajectory_source:entry_point",
            f"sim_bridge = {PACKAGE}.ros.sim_bridge:main",
        ],
    },
)
