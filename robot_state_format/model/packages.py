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
import stat
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from robot_state_format import limits
from robot_state_format.errors import Diagnostic, ModelError
from robot_state_format.limits import read_input_file

PACKAGE_URI = "package://"
_NAME_RE = re.compile(rb"<name>\s*([^<\s]+)\s*</name>")
_MAX_DEPTH = 8
_truncated: set[str] = set()  # ROS_PACKAGE_PATH entries whose scan stopped at the bound (named in errors)


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(p for p in (value or "").split(os.pathsep) if p)


def _package_name(directory: Path) -> str | None:
    try:
        head = read_input_file(directory / "package.xml", limit=1 << 20)[:65536]
    except OSError:
        return None
    m = _NAME_RE.search(head)
    return m.group(1).decode("utf-8", "replace") if m else directory.name


def _real_directory(path: str) -> tuple[int, int] | None:
    """``(device, inode)`` of the directory ``path`` (symlinks followed), None when it is none or
    cannot be reached (a symlink loop, no permission, a name too long): never raises."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


def _maybe_directory(entry: os.DirEntry[str]) -> bool:
    """A directory or a symlink (followed when popped): no ``stat`` for plain files (``d_type``)."""
    try:
        return entry.is_dir(follow_symlinks=False) or entry.is_symlink()
    except OSError:
        return False


def _ignored(path: str) -> bool:
    return any(os.path.lexists(os.path.join(path, marker)) for marker in ("CATKIN_IGNORE", "COLCON_IGNORE"))


def _scan(root: Path, found: dict[str, Path], seen: set[tuple[int, int]]) -> None:
    """Collect packages below ``root`` (first found wins, depth first in name order, as rospack
    crawls), not descending into packages nor below :data:`_MAX_DEPTH`.

    Each real directory is visited once (``seen``: symlinks to a directory already seen, loops
    included, are skipped), at most :data:`robot_state_format.limits.MAX_PACKAGE_SCAN_DIRECTORIES`
    in all; unreadable directories (``/proc``, no permission) are skipped. No recursion."""
    stack: list[tuple[str, int]] = [(str(root), 0)]
    while stack:
        directory, depth = stack.pop()
        key = _real_directory(directory)
        if key is None or key in seen or (depth > 0 and _ignored(directory)):
            continue
        if len(seen) >= limits.MAX_PACKAGE_SCAN_DIRECTORIES:
            _truncated.add(str(root))
            return
        seen.add(key)
        if os.path.lexists(os.path.join(directory, "package.xml")):
            name = _package_name(Path(directory))
            if name is not None:
                found.setdefault(name, Path(directory))
                found.setdefault(os.path.basename(directory), Path(directory))
                continue
        if depth >= _MAX_DEPTH:
            continue
        try:
            with os.scandir(directory) as it:
                names = sorted(e.name for e in it if not e.name.startswith(".") and _maybe_directory(e))
        except OSError:
            continue
        stack.extend((os.path.join(directory, n), depth + 1) for n in reversed(names))


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
            if _real_directory(str(share)) is not None:
                found.setdefault(name, share)
    seen: set[tuple[int, int]] = set()
    for directory in ros:
        _scan(Path(directory), found, seen)
    return found


def clear_cache() -> None:
    """Forget cached package locations (after installing packages or changing the environment)."""
    _index.cache_clear()
    _truncated.clear()


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
            f"package {name!r} {NOT_FOUND_HOW}" + (
                f" (the ROS_PACKAGE_PATH scan stopped after {limits.MAX_PACKAGE_SCAN_DIRECTORIES} directories, "
                "RSF_MAX_PACKAGE_SCAN_DIRECTORIES)" if _truncated else ""), file, line))
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
