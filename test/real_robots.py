"""Locate real robot descriptions shipped by installed PyPI packages (not copied into the repo).

``example-robot-data`` (requirements/test.txt) installs its robots under
``<site-packages>/cmeel.prefix/share/example-robot-data/robots``.  Every function returns an
empty result when the package is not installed, so callers skip with that reason.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path

SKIP_REASON = "example-robot-data is not installed (pip install example-robot-data)"
_REL = Path("cmeel.prefix") / "share" / "example-robot-data" / "robots"


@lru_cache(maxsize=1)
def robots_dir() -> Path | None:
    """The ``robots`` directory of example-robot-data, or ``None``."""
    candidates: list[str] = []
    for key in ("purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            candidates.append(p)
    candidates += [p for p in sys.path if p]
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) + [os.environ.get("CMAKE_PREFIX_PATH", "")]:
        if prefix:
            d = Path(prefix) / "share" / "example-robot-data" / "robots"
            if d.is_dir():
                return d
    for base in candidates:
        d = Path(base) / _REL
        if d.is_dir():
            return d
    return None


def real_urdfs() -> list[Path]:
    """Every ``.urdf`` file of the installed example-robot-data, sorted (``[]`` if not installed)."""
    d = robots_dir()
    if d is None:
        return []
    return sorted(d.rglob("*.urdf"))


def real_urdf(relative: str) -> Path | None:
    """One robot file by its path under ``robots/`` (e.g. ``"pr2_description/urdf/pr2.urdf"``)."""
    d = robots_dir()
    if d is None:
        return None
    p = d / relative
    return p if p.is_file() else None


def romeo_urdf() -> Path | None:
    """romeo.urdf (82 links, 81 joints, 31 moving): the large model for benchmarks and comparisons."""
    return real_urdf("romeo_description/urdf/romeo.urdf")


def package_dir() -> Path | None:
    """Directory to put on ROS_PACKAGE_PATH so ``package://example-robot-data/...`` resolves."""
    d = robots_dir()
    return None if d is None else d.parent.parent
