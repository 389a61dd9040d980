"""The two reference implementations the readers are measured against, run as programs.

* urdfdom: ``check_urdf`` (installed in the venv by ``pin``/``cmeel-urdfdom``); a file it loads
  exits 0.
* libsdformat: ``sdf_ref`` (``conformance/sdf_ref.cc``), built here with g++ and pkg-config against
  Debian's ``libsdformat-dev`` (12.x); it prints the errors and the world pose of every model, link,
  joint and frame as JSON.

Nothing here is imported by the package or by the normal tests' set-up; tests that use a reference
call :func:`check_urdf_path` / :func:`sdf_ref_path` and skip when it is ``None``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "sdf_ref.cc"
BUILD_DIR = HERE / "build"
PKG = "sdformat12"
APT_PACKAGES = ("libsdformat-dev", "g++", "pkg-config")


def check_urdf_path() -> str | None:
    """``check_urdf`` next to the running Python (the venv), else on PATH."""
    local = Path(sys.executable).parent / "check_urdf"
    if local.is_file():
        return str(local)
    return shutil.which("check_urdf")


def _pkg_config_flags() -> list[str] | None:
    if shutil.which("pkg-config") is None or shutil.which("g++") is None:
        return None
    r = subprocess.run(["pkg-config", "--cflags", "--libs", PKG], capture_output=True, text=True)
    return r.stdout.split() if r.returncode == 0 else None


def install_libsdformat() -> bool:
    """apt-get install libsdformat-dev (and a compiler) when running as root; True if it worked."""
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return False
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True)
    r = subprocess.run(["apt-get", "install", "-y", "-q", *APT_PACKAGES], env=env, capture_output=True)
    return r.returncode == 0


def sdf_ref_path(build: bool = True, install: bool = False) -> str | None:
    """Path of the built ``sdf_ref`` (building it when the source is newer), or ``None`` when
    libsdformat-dev or a C++ compiler is missing (with ``install``, apt-get installs them as root)."""
    exe = BUILD_DIR / "sdf_ref"
    if exe.is_file() and exe.stat().st_mtime >= SOURCE.stat().st_mtime:
        return str(exe)
    if not build:
        return None
    flags = _pkg_config_flags()
    if flags is None and install and install_libsdformat():
        flags = _pkg_config_flags()
    if flags is None:
        return None
    BUILD_DIR.mkdir(exist_ok=True)
    tmp = exe.with_name(f"sdf_ref.{os.getpid()}.tmp")  # parallel test workers each build, one rename wins
    r = subprocess.run(["g++", "-O1", "-o", str(tmp), str(SOURCE), *flags], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"building sdf_ref failed:\n{r.stderr}")
    tmp.replace(exe)
    return str(exe)


@dataclass
class UrdfVerdict:
    loads: bool
    log: str


def run_check_urdf(exe: str, path: str | Path, timeout: float = 30.0) -> UrdfVerdict:
    r = subprocess.run([exe, str(path)], capture_output=True, text=True, timeout=timeout,
                       errors="replace")
    return UrdfVerdict(r.returncode == 0, (r.stdout + r.stderr).strip())


@dataclass
class SdfVerdict:
    loads: bool
    errors: list[dict[str, Any]]
    entities: list[dict[str, Any]] = field(default_factory=list)
    version: str = ""
    resolve_errors: list[str] = field(default_factory=list)


def run_sdf_ref(exe: str, path: str | Path, search_paths: list[str] = (), timeout: float = 60.0) -> SdfVerdict:
    r = subprocess.run([exe, str(path), *search_paths], capture_output=True, text=True, timeout=timeout,
                       errors="replace")
    if r.returncode not in (0, 1):
        return SdfVerdict(False, [{"code": -1, "message": f"sdf_ref crashed ({r.returncode}): {r.stderr[-300:]}"}])
    doc = json.loads(r.stdout)
    return SdfVerdict(r.returncode == 0 and not doc["errors"], doc["errors"], doc["entities"], doc["version"],
                      doc["resolve_errors"])
