"""Heavy or optional dependencies, declared at the top of the module that uses them.

``xacro`` (with the ``yaml`` it imports) costs about 60 ms to import, which every ``robot-state-format check`` of a
plain URDF or SDFormat file would pay.  :func:`lazy_package` returns module objects at once and runs their code on
the first attribute access (:class:`importlib.util.LazyLoader`), so the dependency stays visible at module top and
costs nothing until a xacro document is actually read.

Optional dependencies (the extras of pyproject.toml, with no rosdep key on some distro): :func:`optional_module`
returns the module when it imports, else a stand-in whose first attribute access raises
:class:`MissingDependencyError`, one line naming what needs it and how to install it (:data:`OPTIONAL`).  So a
module that needs ``mcap`` for recording still imports, and everything else in it works, without ``mcap``.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from types import ModuleType
from typing import NamedTuple

from robot_state_format.errors import RobotStateFormatError

__all__ = ["OPTIONAL", "MissingDependencyError", "lazy_package", "missing_dependency_text", "optional_module"]


class Extra(NamedTuple):
    """An optional part: what it enables, its PyPI names, its apt (rosdep) names, the pip extra."""

    feature: str
    pip: tuple[str, ...]
    apt: tuple[str, ...]
    extra: str


RECORD = Extra("MCAP recording and replay of recordings", ("mcap", "mcap-ros2-support"), (), "record")
FAST = Extra("the compiled kinematics kernels", ("numba",), ("python3-numba",), "fast")
OPTIONAL: dict[str, Extra] = {"mcap": RECORD, "mcap_ros2": RECORD, "numba": FAST}
"""Top-level module name -> the optional part it belongs to."""
ROS = frozenset({"rclpy", "rcl_interfaces", "builtin_interfaces", "std_msgs", "std_srvs", "sensor_msgs",
                 "geometry_msgs", "tf2_msgs", "tf2_ros", "rosgraph_msgs", "launch", "launch_ros"})
"""ROS 2 packages: from a ROS 2 installation (apt, rosdep), not from pip."""


class MissingDependencyError(RobotStateFormatError):
    """An optional dependency is not installed; the message is one line: what needs it, how to install it."""


def missing_dependency_text(module: str) -> str:
    """One line: which optional part needs ``module`` and how to install it (apt and pip names)."""
    top = module.split(".", 1)[0]
    if top in ROS:
        return (f"this needs ROS 2's {top} (not installed): source a ROS 2 Humble, Jazzy or Kilted installation "
                f"(apt install ros-<distro>-{top.replace('_', '-')}; `rosdep install --from-paths <src>` installs "
                "every dependency of robot_state_format)")
    part = OPTIONAL.get(top, Extra("this feature", (top,), (), ""))
    needs = "needs" if len(part.pip) == 1 or part.feature == "this feature" else "need"
    pip = f"pip install {' '.join(part.pip)}" + (f" (or pip install 'robot_state_format[{part.extra}]')"
                                                   if part.extra else "")
    how = f"apt install {' '.join(part.apt)} or {pip}" if part.apt else f"{pip}; there is no apt/rosdep package"
    return f"{part.feature} {needs} {' and '.join(part.pip)} (not installed): {how}"


class _Missing(ModuleType):
    """Stands for an optional module that does not import: any attribute raises MissingDependencyError."""

    def __init__(self, name: str, missing: str) -> None:
        super().__init__(name)
        self._rsf_missing = missing

    def __getattr__(self, attr: str) -> object:
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise MissingDependencyError(missing_dependency_text(self._rsf_missing))


def optional_module(name: str) -> ModuleType:
    """``name`` imported, or (it or a module it imports is not installed) a stand-in raising
    :class:`MissingDependencyError`, naming the module that is missing, on first use."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        return _Missing(name, exc.name or name)


def _lazy(spec: importlib.machinery.ModuleSpec) -> ModuleType:
    if spec.loader is None:
        raise ModuleNotFoundError(f"no loader for {spec.name!r}", name=spec.name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    loader.exec_module(module)  # defers the module's code to its first attribute access
    return module


def lazy_package(name: str, *submodules: str) -> tuple[ModuleType, ...]:
    """``(package, package.sub1, ...)``, each loaded on first use (already imported ones are returned as they are).

    ``ModuleNotFoundError`` at once when the package is not installed (a missing dependency is not deferred).
    """
    if name in sys.modules:
        return (sys.modules[name], *(importlib.import_module(f"{name}.{s}") for s in submodules))
    spec = importlib.util.find_spec(name)
    if spec is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    locations = spec.submodule_search_locations
    sub_specs = []
    for sub in submodules:
        full = f"{name}.{sub}"
        sub_spec = importlib.machinery.PathFinder.find_spec(full, list(locations or []))
        if sub_spec is None:
            raise ModuleNotFoundError(f"No module named {full!r}", name=full)
        sub_specs.append(sub_spec)
    return (_lazy(spec), *(_lazy(s) for s in sub_specs))
