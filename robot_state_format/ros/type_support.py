"""Message type support without ``rosidl_generator_py``'s code generator: a node starts ~50-110 ms sooner.

Every generated message class imports its C type support through ``rosidl_generator_py.import_type_support``
the first time a publisher or subscription of it is made. That package's ``__init__`` also imports its code
generator (``generate_py``: ``rosidl_parser`` with the ``lark`` grammar, ``rosidl_pycommon``, ``em``), which a
running node never calls, and which costs more than half of the state_publisher's start to its first /tf
beyond the C++ robot_state_publisher's (docs/performance.md "Against robot_state_publisher").

:func:`light_rosidl_generator_py` enters the package in ``sys.modules`` with only ``import_type_support`` (its
own module, imported as the package would) before any node exists; any other name read from it (``generate_py``)
runs the package's real ``__init__`` first, so every caller still gets what it asked for. It does nothing when
the package is already imported, or not laid out as expected (any distro: the real one is then imported as
usual).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any

PACKAGE = "rosidl_generator_py"


def light_rosidl_generator_py() -> bool:
    """Install the light package (see the module text); whether it did."""
    if PACKAGE in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return False
    loader = spec.loader if spec is not None else None
    if spec is None or loader is None or not spec.submodule_search_locations:
        return False
    pkg = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = pkg
    try:
        impl = importlib.import_module(f"{PACKAGE}.import_type_support_impl")
        setattr(pkg, "import_type_support", impl.import_type_support)  # noqa: B010 (what the real one holds)
    except (ImportError, AttributeError):
        sys.modules.pop(PACKAGE, None)
        sys.modules.pop(f"{PACKAGE}.import_type_support_impl", None)
        return False

    def whole(name: str) -> Any:  # a name the light package lacks: the real __init__, then the name
        delattr(pkg, "__getattr__")
        loader.exec_module(pkg)
        return getattr(pkg, name)

    setattr(pkg, "__getattr__", whole)  # noqa: B010 (a module's __getattr__: PEP 562)
    return True


__all__ = ["light_rosidl_generator_py"]
