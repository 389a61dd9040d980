"""Heavy required dependencies loaded where they are first used, declared at the top of the module that uses them.

``xacro`` (with the ``yaml`` it imports) costs about 60 ms to import, which every ``robot-state-format check`` of a
plain URDF or SDFormat file would pay.  :func:`lazy_package` returns module objects at once and runs their code on
the first attribute access (:class:`importlib.util.LazyLoader`), so the dependency stays visible at module top and
costs nothing until a xacro document is actually read.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

__all__ = ["lazy_package"]


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
