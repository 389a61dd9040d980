"""Skips for tests that need the real ROS 2 tools (launch, launch_testing, ros2cli, tf2_ros).

A ROS 2 distro provides them; without one, ``./run setup`` builds them from the archives in
``$RSF_ROS2_SRC`` (default ``../shared/ros2-src``) or from GitHub at pinned commits (scripts/ros2_tools.py).
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

HOW_TO_GET = ("no ROS 2 distro is sourced and `./run setup` found no sources for the tools: set RSF_ROS2_SRC to a "
              "directory with the ros2-src archives (default ../shared/ros2-src) or give the machine access to "
              "github.com, then run `./run setup --force` (or source a ROS 2 distro)")


def missing(*modules: str) -> list[str]:
    """The modules of ``modules`` that do not import here."""
    out = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except ImportError:
            found = False
        if not found:
            out.append(name)
    return out


def skip_reason(*modules: str, executables: tuple[str, ...] = ()) -> str | None:
    """Why a test needing ``modules`` (and ``executables`` on PATH or beside this Python) cannot run, or None."""
    gone = missing(*modules)
    gone += [exe for exe in executables
             if shutil.which(exe) is None and not (Path(sys.executable).parent / exe).exists()]
    if not gone:
        return None
    return f"{', '.join(gone)} not installed: {HOW_TO_GET}"


def require(*modules: str, executables: tuple[str, ...] = ()) -> None:
    """Skip the calling module when ``modules`` / ``executables`` are missing, naming them and how to get them."""
    reason = skip_reason(*modules, executables=executables)
    if reason is not None:
        pytest.skip(reason, allow_module_level=True)
