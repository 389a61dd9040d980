"""Heavy dependencies loaded where they are first used, declared at the top of the module that uses them.

``xacro`` (with the ``yaml`` it imports) costs about 60 ms to import, which every ``robot-state-format check`` of a
plain URDF or SDFormat file, and every node start on a URDF, would pay.  :func:`lazy_package` and
:func:`lazy_module` return stand-ins at once, which import the real module on the first attribute access
(reads, writes and deletions are passed on to it), so the dependency stays visible at module top and costs
nothing until it is used.

The stand-ins are not entered in ``sys.modules`` (the real module is, when it is imported): a walk over
``sys.modules`` touching every module's ``__file__`` (``inspect.getmodule``, which rclpy's logger runs on its
first call) does not import them.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

__all__ = ["lazy_module", "lazy_package"]

_LOCK = threading.Lock()


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
