"""numba's on-disk cache of the compiled kernels, keyed on every input that shapes them.

numba keys its cache index on the one source file of a function (``kernel.py``).  The kernels are also
shaped by :mod:`~robot_state_format.kinematics.kernel_codes` (the joint kind codes, compiled in as
constants) and by the numba and llvmlite versions.  :func:`attach` gives each kernel a cache whose
source stamp is :data:`DIGEST` (a hash of all of them) and whose files live in a directory named after
it: a change to any input starts a fresh directory, and never loads a stale kernel.

The directory is numba's usual one (``NUMBA_CACHE_DIR``; else ``__pycache__`` beside ``kernel.py``
when writable; else the user-wide cache, ``~/.cache/numba``), plus ``rsf_kernels_<DIGEST>``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numba
from numba.core import caching

from robot_state_format.kinematics import kernel_codes

HERE = Path(__file__).resolve().parent
SOURCES = (HERE / "kernel.py", Path(kernel_codes.__file__).resolve(), Path(__file__).resolve())
"""The files whose text shapes the compiled kernels (this one: it decides where they are cached)."""


VERSIONS = (str(numba.__version__), importlib.metadata.version("llvmlite"))


def digest(paths: Iterable[Path] = SOURCES, versions: Iterable[str] = VERSIONS) -> str:
    """16 hex digits of a SHA-256 over the files' names and bytes and the versions."""
    h = hashlib.sha256()
    for p in paths:
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    for v in versions:
        h.update(v.encode() + b"\0")
    return h.hexdigest()[:16]


DIGEST = digest()


def _locator(base: Any) -> Any:
    """``base`` (a numba cache locator class) with the stamp :data:`DIGEST` and a directory per digest."""

    class Locator(base):  # type: ignore[misc]
        def get_source_stamp(self) -> str:
            return DIGEST

        def get_cache_path(self) -> str:
            return os.path.join(str(super().get_cache_path()), f"rsf_kernels_{DIGEST}")

    Locator.__name__ = f"Digest{base.__name__.lstrip('_')}"
    return Locator


def _numba_locators() -> list[Any]:
    """numba's locators, in its order (names with or without a leading underscore, by numba version)."""
    out = []
    for name in ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator"):
        base = getattr(caching, name, None) or getattr(caching, "_" + name, None)
        if base is not None:
            out.append(_locator(base))
    return out


class _Impl(caching.CompileResultCacheImpl):
    _locator_classes = _numba_locators()


class DigestCache(caching.FunctionCache):
    """numba's function cache with :data:`DIGEST` as the source stamp and in the directory of the digest."""

    _impl_class = _Impl


def attach(*dispatchers: Any) -> None:
    """Cache each ``@njit`` dispatcher (compiled with ``cache=False``) in the digest's directory."""
    for d in dispatchers:
        d._cache = DigestCache(d.py_func)  # type: ignore[no-untyped-call]


def cache_dir(dispatcher: Any) -> str:
    """Where ``dispatcher``'s compiled code is cached."""
    return str(dispatcher._cache.cache_path)


__all__ = ["DIGEST", "SOURCES", "DigestCache", "attach", "cache_dir", "digest"]
