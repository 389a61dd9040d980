"""The node executables (console scripts ``state_publisher``, ``state_store``, ``joint_state_source``,
``sim_bridge``): each imports its node module only here, so that a missing dependency (rclpy, a message package,
xacro, mcap, mujoco, drake ...) is one line, ``PROG: error: ...`` naming what to install, and exit code 2 (the
command line's code for a missing dependency), never a traceback.

Nothing here imports rclpy: this module loads on any install, with or without ROS 2.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from types import ModuleType

from robot_state_format.lazy_modules import MissingDependencyError, missing_dependency_text

__all__ = ["demo", "joint_state_source", "sim_bridge", "state_publisher", "state_store"]

MISSING_DEPENDENCY_EXIT = 2


def _load(prog: str, module: str) -> ModuleType:
    """``robot_state_format.ros.<module>``, or one line and exit 2 when a package it imports is missing."""
    try:
        return importlib.import_module(f"robot_state_format.ros.{module}")
    except MissingDependencyError as exc:
        _fail(prog, str(exc))
    except ImportError as exc:
        missing = exc.name or ""
        if missing.startswith("robot_state_format"):
            raise  # this package's own module: a bug, not a missing dependency
        if missing:
            _fail(prog, missing_dependency_text(missing))
        # a package that is there but does not load (e.g. rclpy without its rmw library)
        _fail(prog, f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}: ROS 2 is installed "
              f"incompletely ({missing_dependency_text('rclpy').split(': ', 1)[1]})")
    raise AssertionError("unreachable")


def _fail(prog: str, text: str) -> None:
    print(f"{prog}: error: {text}", file=sys.stderr)
    sys.exit(MISSING_DEPENDENCY_EXIT)


def _run(prog: str, module: str, func: str = "main") -> None:
    main: Callable[[], int] = getattr(_load(prog, module), func)
    try:
        code = main()
    except MissingDependencyError as exc:  # needed only on this path (e.g. xacro for a .xacro model)
        _fail(prog, str(exc))
        return
    sys.exit(code)


def state_publisher() -> None:
    """Console script ``state_publisher`` (robot_state_format.ros.state_publisher)."""
    _run("state_publisher", "state_publisher")


def state_store() -> None:
    """Console script ``state_store`` (robot_state_format.ros.state_store)."""
    _run("state_store", "state_store")


def joint_state_source() -> None:
    """Console script ``joint_state_source`` (robot_state_format.ros.trajectory_source)."""
    _run("joint_state_source", "trajectory_source")


def sim_bridge() -> None:
    """Console script ``sim_bridge`` (robot_state_format.ros.sim_bridge)."""
    _run("sim_bridge", "sim_bridge")


def demo() -> None:
    """``python -m robot_state_format.demo`` / ``./run demo`` (robot_state_format.ros.demo)."""
    _run("demo", "demo")
