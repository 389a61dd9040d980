"""Heavy dependencies loaded where they are first used, declared at the top of the module that uses them.

``xacro`` (with the ``yaml`` it imports) costs about 60 ms to import, which every ``robot-state-format check`` of a
plain URDF or SDFormat file, and every node start on a URDF, would pay.  :func:`lazy_package` and
:func:`lazy_module` return stand-ins at once, which import the real module on the first attribute access
(reads, writes and deletions are passed on to it), so the dependency stays visible at module top and costs
nothing until it is used.

The stand-ins are not entered in ``sys.modules`` (the real module is, when it is imported): a walk over
``sys.modules`` touching every module's ``__file__`` (``inspect.getmodule``, which rclpy's logger runs on its
first call) does not import them.

Optional dependencies (the extras of pyproject.toml, with no rosdep key on some distro): :func:`optional_module`
returns the module when it imports, else a stand-in whose first attribute access raises
:class:`MissingDependencyError`, one line naming what needs it and how to install it (:data:`OPTIONAL`).  So a
module that needs ``mcap`` for recording still imports, and everything else in it works, without ``mcap``.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
import threading
from types import ModuleType
from typing import Any, NamedTuple

from robot_state_format.errors import RobotStateFormatError

__all__ = ["OPTIONAL", "MissingDependencyError", "first_missing", "lazy_module", "lazy_package",
           "missing_dependency_text", "optional_module"]

_LOCK = threading.Lock()


class Extra(NamedTuple):
    """An optional part: what it enables, its PyPI names, its apt (rosdep) names, the pip extra."""

    feature: str
    pip: tuple[str, ...]
    apt: tuple[str, ...]
    extra: str


RECORD = Extra("MCAP recording and replay of recordings", ("mcap", "mcap-ros2-support"), (), "record")
FAST = Extra("the compiled kinematics kernels", ("numba",), ("python3-numba",), "fast")
PLOT = Extra("the picture (PNG)", ("matplotlib",), ("python3-matplotlib",), "plot")
SIM = Extra("MuJoCo (simulation, mujoco-keyframe export)", ("mujoco",), (), "sim")
DRAKE = Extra("Drake simulation", ("drake",), (), "sim")
XACRO = Extra("reading xacro files", ("xacro",), ("ros-{distro}-xacro",), "")
VIEW = Extra("the browser view", ("viser",), (), "view")
OPTIONAL: dict[str, Extra] = {"mcap": RECORD, "mcap_ros2": RECORD, "orjson": RECORD, "numba": FAST,
                              "matplotlib": PLOT, "mujoco": SIM, "pydrake": DRAKE, "xacro": XACRO,
                              "viser": VIEW, "trimesh": VIEW}
"""Top-level module name -> the optional part it belongs to (``{distro}`` in an apt name: the user's ROS 2 distro)."""
ROS = frozenset({"rclpy", "rcl_interfaces", "builtin_interfaces", "std_msgs", "std_srvs", "sensor_msgs",
                 "geometry_msgs", "tf2_msgs", "tf2_ros", "rosgraph_msgs", "launch", "launch_ros", "rpyutils",
                 "rosidl_parser", "rosidl_runtime_py", "action_msgs", "unique_identifier_msgs",
                 "service_msgs", "type_description_interfaces"})
"""ROS 2 packages: from a ROS 2 installation (apt, rosdep), not from pip."""
_ROS_APT = {"tf2_ros": "tf2-ros-py"}  # module -> its apt package's name when not the module's
_WHEELS_FOR_PYTHON = {(3, 11): "kilted", (3, 12): "jazzy"}  # the ROS 2 wheels on PyPI for this Python
_NO_WHEEL = frozenset({"tf2_ros", "tf2_msgs", "launch", "launch_ros"})  # no ros-<distro>-* wheel on PyPI


def ros_distro() -> str:
    """The user's ROS 2 distro (``ROS_DISTRO``, set by sourcing a ROS 2 installation), or ``<distro>``."""
    distro = os.environ.get("ROS_DISTRO", "").strip().lower()
    return distro if distro.isalnum() else "<distro>"


class MissingDependencyError(RobotStateFormatError):
    """An optional dependency is not installed; the message is one line: what needs it, how to install it.
    ``module``: the top-level module that is missing ("" when not known)."""

    def __init__(self, message: str, module: str = "") -> None:
        super().__init__(message)
        self.module = module

    @classmethod
    def of(cls, module: str) -> MissingDependencyError:
        """The error for ``module`` (any module name; its top level is the one named) not being installed."""
        return cls(missing_dependency_text(module), module.split(".", 1)[0])


def missing_dependency_text(module: str) -> str:
    """One line: which optional part needs ``module`` and how to install it (apt and pip names)."""
    top = module.split(".", 1)[0]
    distro = ros_distro()
    if top in ROS:
        apt = f"ros-{distro}-{_ROS_APT.get(top, top.replace('_', '-'))}"
        wheels = distro if distro != "<distro>" else _WHEELS_FOR_PYTHON.get(sys.version_info[:2], "")
        pip = "" if top in _NO_WHEEL or wheels not in ("jazzy", "kilted") else \
            f" or pip install {'ros' if wheels == 'kilted' else 'ros-' + wheels}-{top.replace('_', '-')}"
        return (f"this needs ROS 2's {top} (not installed): apt install {apt}{pip}, or source a ROS 2 installation "
                "that has it (`rosdep install --from-paths <src>`: every dependency)")
    part = OPTIONAL.get(top, Extra("this feature", (top,), (), ""))
    needs = "needs" if len(part.pip) == 1 or part.feature == "this feature" else "need"
    pip = f"pip install {' '.join(part.pip)}" + (f" (or pip install 'robot_state_format[{part.extra}]')"
                                                   if part.extra else "")
    apt = " ".join(name.format(distro=distro) for name in part.apt)
    how = f"apt install {apt} or {pip}" if part.apt else f"{pip}; there is no apt/rosdep package"
    return f"{part.feature} {needs} {' and '.join(part.pip)} (not installed): {how}"


def first_missing(*modules: str) -> str | None:
    """:func:`missing_dependency_text` for the first of ``modules`` that is not installed (None: all are), found
    without importing anything: to refuse a command before it does anything (creates a folder, starts a node)."""
    for name in modules:
        try:
            if _find_sub(name) is None:
                return missing_dependency_text(name)
        except ImportError as exc:  # a finder that refuses the name
            return missing_dependency_text(exc.name or name)
    return None


class _Missing(ModuleType):
    """Stands for an optional module that does not import: any attribute raises MissingDependencyError."""

    def __init__(self, name: str, missing: str) -> None:
        super().__init__(name)
        self._rsf_missing = missing

    def __getattr__(self, attr: str) -> object:
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise MissingDependencyError.of(self._rsf_missing)


def optional_module(name: str) -> ModuleType:
    """``name``, imported on its first use (at once if already imported); when it, or a module it imports, is
    not installed, that use raises :class:`MissingDependencyError` naming the module that is missing.

    Nothing is imported here (``mcap`` and the ``importlib.metadata`` it pulls in cost ~25 ms at every
    ``state_store`` start that records nothing): only the module's file is looked for.
    """
    if name in sys.modules:
        return sys.modules[name]
    top = name.split(".", 1)[0]
    try:
        if importlib.util.find_spec(top) is None:
            return _Missing(name, top)
        if _find_sub(name) is None:
            return _Missing(name, name)
    except ImportError as exc:  # a finder that refuses the name
        return _Missing(name, exc.name or top)
    return _DeferredOptional(name)


class _Deferred(ModuleType):
    """Stands for module ``__name__`` until its first use, then passes every attribute access on to it."""

    def _rsf_real(self) -> ModuleType:
        real = self.__dict__.get("_rsf_real_module")
        if real is None:
            with _LOCK:
                real = self.__dict__.get("_rsf_real_module")
                if real is None:
                    real = importlib.import_module(self.__name__)
                    self.__dict__["_rsf_real_module"] = real
        assert isinstance(real, ModuleType)
        return real

    def __getattr__(self, attr: str) -> Any:  # only for names the stand-in does not hold itself
        if attr.startswith("__") and attr.endswith("__") and attr not in ("__file__", "__path__", "__version__",
                                                                           "__all__"):
            raise AttributeError(attr)
        return getattr(self._rsf_real(), attr)

    def __setattr__(self, attr: str, value: Any) -> None:
        setattr(self._rsf_real(), attr, value)

    def __delattr__(self, attr: str) -> None:
        delattr(self._rsf_real(), attr)


class _DeferredOptional(_Deferred):
    """:class:`_Deferred` for an optional module: a failed import raises :class:`MissingDependencyError`."""

    def _rsf_real(self) -> ModuleType:
        try:
            return super()._rsf_real()
        except ImportError as exc:
            raise MissingDependencyError.of(exc.name or self.__name__) from exc


def _stand_in(name: str) -> ModuleType:
    return sys.modules.get(name) or _Deferred(name)


def lazy_module(name: str) -> ModuleType:
    """Module ``name`` (e.g. one of this package's), imported on first use; at once if already imported.

    ``ModuleNotFoundError`` at once when it does not exist (a missing module is not deferred).
    """
    if name not in sys.modules:
        parent, _, _ = name.rpartition(".")
        spec = _find_sub(name) if parent and parent not in sys.modules else importlib.util.find_spec(name)
        if spec is None:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    return _stand_in(name)


def _find_sub(name: str) -> importlib.machinery.ModuleSpec | None:
    """The spec of ``name`` without importing its parent packages (their search locations are found by spec)."""
    parts = name.split(".")
    spec = importlib.util.find_spec(parts[0])
    for i in range(1, len(parts)):
        if spec is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:i + 1]),
                                                        list(spec.submodule_search_locations or []))
    return spec


def lazy_package(name: str, *submodules: str) -> tuple[ModuleType, ...]:
    """``(package, package.sub1, ...)``, each imported on first use (already imported ones are returned as they are).

    ``ModuleNotFoundError`` at once when the package or a submodule is not installed (a missing dependency is
    not deferred).
    """
    for full in (name, *(f"{name}.{s}" for s in submodules)):
        if full not in sys.modules and _find_sub(full) is None:
            raise ModuleNotFoundError(f"No module named {full!r}", name=full)
    return (_stand_in(name), *(_stand_in(f"{name}.{s}") for s in submodules))
