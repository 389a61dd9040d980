"""``//include`` URI resolution: ``model://``, relative paths, ``file://`` and ``package://``.

Search order for ``model://NAME/...`` and relative URIs that are not next to the including
file: the explicit search paths, then ``GZ_SIM_RESOURCE_PATH``, ``IGN_GAZEBO_RESOURCE_PATH``,
``SDF_PATH`` and ``GAZEBO_MODEL_PATH`` (each ``os.pathsep``-separated).  A directory is a
model directory: its ``model.config`` names the SDFormat file (the highest ``<sdf version>``
this reader supports wins); without one the include is refused, as libsdformat 12 refuses it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from robot_state_format.errors import RobotStateFormatError
from robot_state_format.limits import read_input_file
from robot_state_format.model.packages import find_package
from robot_state_format.model.sdf.elements import children, parse_version, tag
from robot_state_format.model.xml import parse_xml

ENV_VARS = ("GZ_SIM_RESOURCE_PATH", "IGN_GAZEBO_RESOURCE_PATH", "SDF_PATH", "GAZEBO_MODEL_PATH")
MAX_VERSION = (1, 11)


def search_dirs(search_paths: Sequence[str]) -> list[Path]:
    dirs = [Path(p) for p in search_paths if p]
    for var in ENV_VARS:
        for p in os.environ.get(var, "").split(os.pathsep):
            if p:
                dirs.append(Path(p))
    return dirs


def _shown(p: Path) -> str:
    text = str(p)
    return text if len(text) <= 80 else text[:38] + "..." + text[-38:]


def _check(p: Path, test: str, problems: list[str] | None) -> bool:
    """``p.exists()`` / ``p.is_file()``, treating a lookup the OS refuses (name too long,
    permission denied...) as "not there" and noting why in ``problems``."""
    try:
        return p.is_file() if test == "file" else p.exists()
    except (OSError, ValueError) as exc:
        if problems is not None:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            problems.append(f"{_shown(p)}: {why}")
        return False


def package_share(package: str, search_paths: Sequence[str] = (),
                  problems: list[str] | None = None) -> Path | None:
    """The share directory of a ROS package (ament index, then ``ROS_PACKAGE_PATH``-style dirs)."""
    try:  # the project-wide resolver (ament index and ROS_PACKAGE_PATH)
        found = find_package(package, tuple(search_paths))
        if found is not None:
            return Path(found)
    except (RobotStateFormatError, OSError, ValueError):
        pass
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if prefix and _check(Path(prefix) / "share" / "ament_index" / "resource_index" / "packages" / package,
                             "exists", problems):
            return Path(prefix) / "share" / package
    for base in [*search_paths, *os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep)]:
        if base and _check(Path(base) / package / "package.xml", "file", problems):
            return Path(base) / package
    return None


def resolve_uri(uri: str, base_dir: Path | None, search_paths: Sequence[str],
                problems: list[str] | None = None) -> Path | None:
    """Resolve an include URI to an existing file or directory, or ``None``.

    Lookups the operating system refuses (``ENAMETOOLONG``, ``EACCES``...) count as not found;
    their reasons are appended to ``problems``."""
    uri = uri.strip()

    def there(p: Path) -> bool:
        return _check(p, "exists", problems)

    if uri.startswith("file://"):
        p = Path(uri[len("file://"):])
        return p if there(p) else None
    if uri.startswith("model://"):
        rest = uri[len("model://"):].strip("/")
        for d in search_dirs(search_paths):
            cand = d / rest
            if there(cand):
                return cand
        return None
    if uri.startswith("package://"):
        pkg, _, rest = uri[len("package://"):].partition("/")
        share = package_share(pkg, search_paths, problems)
        if share is None:
            return None
        cand = share / rest
        return cand if there(cand) else None
    if "://" in uri:
        return None
    p = Path(uri)
    if p.is_absolute():
        return p if there(p) else None
    if base_dir is not None and there(base_dir / p):
        return base_dir / p
    for d in search_dirs(search_paths):
        if there(d / p):
            return d / p
    return None


def model_file(path: Path) -> tuple[Path | None, str | None]:
    """The description file of a model directory (or ``path`` itself); second item: why not found."""
    if path.is_file():
        return path, None
    config = path / "model.config"
    if config.is_file():
        try:
            root, _ = parse_xml(read_input_file(config), str(config))
        except (RobotStateFormatError, OSError) as exc:
            return None, f"cannot read {config}: {exc}"
        best: tuple[tuple[int, int], str] | None = None
        for el in children(root):
            if tag(el) != "sdf":
                continue
            ver = parse_version(el.get("version")) or (0, 0)
            name = (el.text or "").strip()
            if not name or ver > MAX_VERSION:
                continue
            if best is None or ver > best[0]:
                best = (ver, name)
        if best is not None:
            cand = path / best[1]
            return (cand, None) if cand.is_file() else (None, f"{cand} (named in {config}) does not exist")
        return None, f"{config} names no SDFormat file"
    # libsdformat 12 refuses a model directory without model.config, even one holding model.sdf
    has_sdf = " (it holds model.sdf, but libsdformat reads a directory through its model.config)" if (
        path / "model.sdf").is_file() else ""
    return None, f"{path} has no model.config{has_sdf}"
