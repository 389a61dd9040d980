"""Find ROS packages without ROS: ``$(find pkg)`` and ``package://pkg/path`` resolution.

A package is looked up, in order, in

1. the ament index of every prefix in ``AMENT_PREFIX_PATH``
   (``PREFIX/share/ament_index/resource_index/packages/PKG`` marks ``PREFIX/share/PKG``);
2. every directory of ``ROS_PACKAGE_PATH`` (and any ``extra`` directories given): a directory
   named ``PKG`` that holds a ``package.xml``, or whose ``package.xml`` declares ``<name>PKG</name>``,
   searched recursively (ROS 1 style) but not below a found package;
3. this package itself (``robot_state_format``) when neither lists it: its installed files (``samples/`` are
   package data), so ``package://robot_state_format/samples/...`` resolves from a wheel or a venv as from a
   colcon workspace.

Results are cached per (environment, extra) tuple; :func:`clear_cache` forgets them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from robot_state_format.errors import Diagnostic, ModelError
from robot_state_format.limits import read_input_file

PACKAGE_URI = "package://"
_NAME_RE = re.compile(rb"<name>\s*([^<\s]+)\s*</name>")
_MAX_DEPTH = 8


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(p for p in (value or "").split(os.pathsep) if p)


def _package_name(directory: Path) -> str | None:
    try:
        head = read_input_file(directory / "package.xml", limit=1 << 20)[:65536]
    except OSError:
        return None
    m = _NAME_RE.search(head)
    return m.group(1).decode("utf-8", "replace") if m else directory.name


def _scan(root: Path, found: dict[str, Path], depth: int = 0) -> None:
    """Collect packages below ``root`` (first found wins), not descending into packages."""
    if depth > _MAX_DEPTH:
        return
    name = _package_name(root)
    if name is not None:
        found.setdefault(name, root)
        found.setdefault(root.name, root)
        return
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=True):
            continue
        if (Path(entry.path) / "CATKIN_IGNORE").exists() or (Path(entry.path) / "COLCON_IGNORE").exists():
            continue
        _scan(Path(entry.path), found, depth + 1)


@lru_cache(maxsize=32)
def _index(ament: tuple[str, ...], ros: tuple[str, ...]) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for prefix in ament:
        marker_dir = Path(prefix) / "share" / "ament_index" / "resource_index" / "packages"
        try:
            names = sorted(os.listdir(marker_dir))
        except OSError:
            continue
        for name in names:
            share = Path(prefix) / "share" / name
            if share.is_dir():
                found.setdefault(name, share)
    for directory in ros:
        _scan(Path(directory), found)
    return found


def clear_cache() -> None:
    """Forget cached package locations (after installing packages or changing the environment)."""
    _index.cache_clear()


OWN_PACKAGE = "robot_state_format"
NOT_FOUND_HOW = ("not found in AMENT_PREFIX_PATH (source the workspace that installs it), ROS_PACKAGE_PATH (set it to "
                 "a directory holding the package) or --search-path DIR (search_paths= in Python)")
"""What every MODEL_PACKAGE_NOT_FOUND says after the package's name: where packages are looked for."""


def own_package_dir() -> Path:
    """This package's installed directory: what ``package://robot_state_format/...`` means where no ament index
    nor ROS_PACKAGE_PATH lists the package (a wheel, a venv). It holds the same ``samples/`` as a colcon
    install's ``share/robot_state_format/``."""
    return Path(__file__).resolve().parent.parent


def package_paths(extra: Sequence[str] = ()) -> dict[str, Path]:
    """Every package visible from the environment (and ``extra`` directories): name → share dir."""
    found = dict(_index(_split(os.environ.get("AMENT_PREFIX_PATH")),
                        _split(os.environ.get("ROS_PACKAGE_PATH")) + tuple(extra)))
    found.setdefault(OWN_PACKAGE, own_package_dir())
    return found


def find_package(name: str, extra: Sequence[str] = ()) -> Path | None:
    """The share directory of package ``name``, or ``None`` when it is not found."""
    return package_paths(extra).get(name)


def require_package(name: str, extra: Sequence[str] = (), *, file: str = "<string>",
                    line: int | None = None) -> Path:
    """Like :func:`find_package` but raise ``ModelError`` (``MODEL_PACKAGE_NOT_FOUND``)."""
    path = find_package(name, extra)
    if path is None:
        raise ModelError(Diagnostic(
            "MODEL_PACKAGE_NOT_FOUND",
            f"package {name!r} {NOT_FOUND_HOW}", file, line))
    return path


def resolve_package_uri(uri: str, extra: Sequence[str] = ()) -> Path | None:
    """``package://pkg/rel/path`` → ``<share of pkg>/rel/path`` (``None`` if pkg is unknown).

    ``file://`` URIs and plain paths are returned as paths; the file need not exist.
    """
    if uri.startswith(PACKAGE_URI):
        rest = uri[len(PACKAGE_URI):]
        name, _, rel = rest.partition("/")
        share = find_package(name, extra)
        return None if share is None else share / rel
    if uri.startswith("file://"):
        return Path(uri[len("file://"):])
    return Path(uri)
