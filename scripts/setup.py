#!/usr/bin/env python3
"""Idempotent set-up of the project's virtual environment (.venv, or .venv-<distro> with RSF_DISTRO).

``RSF_DISTRO`` picks the ROS 2 distro the venv stands for (:data:`DISTROS`): unset or ``kilted``: ``.venv`` as
described below; ``jazzy``: ``.venv-jazzy`` on Python 3.12 with the ``ros-jazzy-*`` wheels and Ubuntu 24.04's
numpy/lxml (requirements/jazzy.txt); ``humble``: ``.venv-humble`` on Python 3.10 with Ubuntu 22.04's
numpy/lxml/PyYAML (requirements/humble.txt) and no ROS (PyPI has no Humble wheels: the ROS-free core).
The interpreter is found under pyenv (``/root/.pyenv/versions/3.12.*``), on PATH (``python3.12``), or given
with ``RSF_PYTHON``.

Kilted, two modes:

* ``distro``: a ROS 2 distro is sourced (``ROS_DISTRO`` set and this Python imports rclpy). The venv is
  created with ``--system-site-packages`` on this Python so the distro's rclpy and messages are used;
  only our pip requirements go into it.
* ``wheels``: no distro. The venv gets the pinned ROS 2 kilted wheels from PyPI (requirements/ros.txt)
  and, because PyPI has no tf2_msgs, a wire-compatible tf2_msgs (TFMessage only) is built with cmake
  into the venv from scripts/tf2_msgs.

* ``ros2tools`` (wheels mode only, scripts/ros2_tools.py): launch, launch_ros, launch_testing, ros2cli,
  rosidl_runtime_py, composition_interfaces and geometry2's tf2 packages (the upstream tf2_msgs replaces the
  TFMessage-only one) from the archives in ``$RSF_ROS2_SRC`` (default ``../shared/ros2-src``) or from git at
  the pinned commits; with neither, set-up goes on without them.

Then the requirements of the distro (core, record, fast, test; test-extra on kilted) and this package (editable)
are installed.
A stamp (hash of the requirement files, setup.py, setup.cfg, package.xml and this script) makes a
re-run with nothing to do return at once. Usage: ``python3 scripts/setup.py [--force] [--quiet]``.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))  # also when loaded by path (test_harness_setup.py)
import ros2_tools

ROOT = Path(__file__).resolve().parent.parent


class Distro(NamedTuple):
    """What the venv of one ROS 2 distro holds."""

    venv: str  # directory under ROOT
    python: str  # "X.Y" wanted ("" = the Python running this script)
    ros: str  # requirements file of the ROS wheels ("" = none: the ROS-free core)
    pins: str  # constraints file (the distro's Ubuntu library versions), "" = none
    reqs: tuple[str, ...]  # requirement files installed
    tools: bool  # the ros2tools stage (launch, ros2cli, tf2_ros built from source)


DISTROS = {
    "kilted": Distro(".venv", "", "ros.txt", "", ("core.txt", "record.txt", "fast.txt", "test.txt", "test-extra.txt",
                                                  "view.txt"),
                     True),
    "jazzy": Distro(".venv-jazzy", "3.12", "ros-jazzy.txt", "jazzy.txt",
                    ("core.txt", "record.txt", "fast.txt", "test.txt"), False),
    "humble": Distro(".venv-humble", "3.10", "", "humble.txt", ("core.txt", "record.txt", "test.txt"), False),
}
DISTRO_NAME = os.environ.get("RSF_DISTRO", "").strip().lower() or "kilted"
DISTRO = DISTROS.get(DISTRO_NAME, DISTROS["kilted"])
VENV = ROOT / DISTRO.venv
STAMP = VENV / ".rsf-setup-stamp.json"
REQ_DIR = ROOT / "requirements"
TF2_SRC = ROOT / "scripts" / "tf2_msgs"
# Hard-coded paths of the wheel builder, found in the wheels' rosidl_generator_py export files
# (cp311 in the kilted wheels, cp312 in the jazzy ones).
WHEEL_PY_INCLUDE = re.compile(r"/opt/python/cp3\d+-cp3\d+/include/python3\.\d+")
WHEEL_NUMPY_INCLUDE = re.compile(r"/opt/python/cp3\d+-cp3\d+/lib/python3\.\d+/site-packages/numpy/(?:_core|core)/include")


class SetupError(Exception):
    """A set-up step failed; the message says what to do."""


_T0 = time.monotonic()


def log(msg: str) -> None:
    sys.stderr.write(f"[setup {time.monotonic() - _T0:5.1f}s] {msg}\n")  # one write: stages log from threads
    sys.stderr.flush()


def venv_python() -> Path:
    return VENV / "bin" / "python"


BOOTSTRAP_GUARD = "_ROS_WHEELS_BOOTSTRAP_COMPLETE"


def _bootstrapper_entry(entry: str) -> bool:
    """A library folder the bootstrapper adds: a venv's ``lib`` or a ``site-packages/ros_*.libs``."""
    path = Path(entry)
    if path.name == "lib" and (path.parent / "pyvenv.cfg").is_file():
        return True
    return path.name.startswith("ros_") and path.name.endswith(".libs") and path.parent.name == "site-packages"


def without_other_venvs(environ: dict[str, str]) -> dict[str, str]:
    """``environ`` without what a venv's ros_wheels_bootstrapper leaves for its own children.

    When this script runs on a venv's python (``./run`` takes ``python3`` from PATH, so an activated .venv),
    that venv's bootstrapper has re-executed it with ``_ROS_WHEELS_BOOTSTRAP_COMPLETE=1`` and its own
    libraries on ``LD_LIBRARY_PATH``. Another venv's python inheriting both skips its own bootstrap and loads
    (or fails to find) the wrong distro's libraries: ``import rclpy`` in .venv-jazzy then fails with
    ``libfastrtps.so.2.14: cannot open shared object file``. The folders a bootstrapper adds are dropped (a
    sourced distro's are kept); the target venv's bootstrapper puts its own back."""
    env = {key: value for key, value in environ.items() if key != BOOTSTRAP_GUARD}
    kept = [entry for entry in env.get("LD_LIBRARY_PATH", "").split(os.pathsep)
            if entry and not _bootstrapper_entry(entry)]
    if kept:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(kept)
    else:
        env.pop("LD_LIBRARY_PATH", None)
    return env


def base_python() -> str:
    """The interpreter the venv is made with: ``RSF_PYTHON``, else (a distro wanting another Python) the newest
    ``/root/.pyenv/versions/X.Y.*`` or ``pythonX.Y`` on PATH, else the one running this script."""
    given = os.environ.get("RSF_PYTHON", "").strip()
    if given:
        return given
    want = DISTRO.python
    if not want or sysconfig.get_python_version() == want:
        return sys.executable
    pyenv = Path(os.environ.get("PYENV_ROOT", "/root/.pyenv")) / "versions"
    found = sorted(pyenv.glob(f"{want}.*/bin/python"), key=lambda p: [int(x) if x.isdigit() else 0
                                                                        for x in p.parent.parent.name.split(".")])
    if found:
        return str(found[-1])
    on_path = shutil.which(f"python{want}")
    if on_path:
        return on_path
    raise SetupError(f"RSF_DISTRO={DISTRO_NAME} needs Python {want}: none found under {pyenv}/{want}.* nor "
                     f"python{want} on PATH (install it, e.g. pyenv install {want}, or set RSF_PYTHON)")


def detect_mode() -> str:
    """``distro`` when a sourced ROS 2 distro's rclpy imports in this Python, else ``wheels`` (``core`` for
    RSF_DISTRO=humble: no ROS at all)."""
    if DISTRO_NAME != "kilted":
        return "wheels" if DISTRO.ros else "core"
    if os.environ.get("ROS_DISTRO"):
        probe = subprocess.run(
            [sys.executable, "-c", "import rclpy"], capture_output=True, text=True, check=False
        )
        if probe.returncode == 0:
            return "distro"
        log(f"ROS_DISTRO={os.environ['ROS_DISTRO']} is set but {sys.executable} cannot import rclpy; "
            "using the PyPI kilted wheels instead")
    return "wheels"


def _hash_files(*paths: Path) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(str(path.relative_to(ROOT)).encode() + b"\0")
        h.update(path.read_bytes() if path.exists() else b"<missing>")
        h.update(b"\0")
    return h.hexdigest()


def stage_digests(mode: str) -> dict[str, str]:
    """One hash per set-up stage; a stage is redone when its hash (or the ``base`` one) changed."""
    base = hashlib.sha256(f"{mode}\n{DISTRO_NAME}\n{sys.version}\n{sys.executable}\n".encode())
    base.update(Path(__file__).resolve().read_bytes())
    pins = [REQ_DIR / DISTRO.pins] if DISTRO.pins else []
    stages = {
        "base": base.hexdigest(),
        "ros": _hash_files(REQ_DIR / DISTRO.ros, *pins) if mode == "wheels" and DISTRO.ros else "",
        # Not redone when only this script changed (a minute or more of building): its own inputs only.
        "ros2tools": hashlib.sha256(f"{sys.version}\n".encode()).hexdigest()[:16]
        + _hash_files(REQ_DIR / "ros.txt", REQ_DIR / "ros-tools.txt", ROOT / "scripts" / "ros2_tools.py")
        + ros2_tools.digest(ROOT) if mode == "wheels" and DISTRO.tools else "",
        "tf2": _hash_files(*sorted(p for p in TF2_SRC.rglob("*") if p.is_file())),
        "reqs": _hash_files(*(REQ_DIR / name for name in DISTRO.reqs), *pins),
        "pkg": _hash_files(*(ROOT / f for f in ("setup.py", "setup.cfg", "package.xml")))
        + ",".join(sorted(f.name for f in (ROOT / "launch").glob("*.launch.py"))),  # linked into the index
    }
    # Redone whenever anything was (re)installed: it byte-compiles what the stages above put into .venv.
    stages["bytecode"] = hashlib.sha256(json.dumps(stages, sort_keys=True).encode()).hexdigest()
    return stages


def read_stamp() -> dict[str, str]:
    try:
        data = json.loads(STAMP.read_text())
    except (OSError, ValueError):
        return {}
    stages = data.get("stages") if isinstance(data, dict) else None
    return stages if isinstance(stages, dict) else {}


def write_stamp(stages: dict[str, str], mode: str) -> None:
    STAMP.write_text(json.dumps({"stages": stages, "mode": mode, "time": time.time()}, indent=1))


def stamp_ok(stages: dict[str, str]) -> bool:
    return read_stamp() == stages and venv_python().exists()


def run(cmd: list[str], what: str, logfile: Path, env: dict[str, str] | None = None,
        cwd: Path | None = None) -> None:
    """Run ``cmd``, appending its output to ``logfile``; on failure show the tail and raise."""
    with logfile.open("a") as out:
        out.write(f"\n$ {' '.join(cmd)}\n")
        out.flush()
        proc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd, check=False)
    if proc.returncode != 0:
        lines = logfile.read_text(errors="replace").splitlines()
        tail = "\n".join(line for line in lines[-40:] if "is ignored: it is neither" not in line)
        raise SetupError(f"{what} failed (exit {proc.returncode}); full log: {logfile}\n{tail}")


def require_tools(mode: str, need_build: bool) -> None:
    """Fail early, naming the missing tool."""
    try:
        import ensurepip  # noqa: F401
        import venv  # noqa: F401
    except ImportError as exc:
        raise SetupError(
            f"{sys.executable} lacks the venv/ensurepip modules ({exc}); install python3-venv "
            "(Debian/Ubuntu: apt-get install python3-venv)"
        ) from exc
    if need_build:
        missing = [tool for tool in ("cmake",) if shutil.which(tool) is None]
        if not any(shutil.which(c) for c in ("cc", "gcc", "clang")):
            missing.append("a C compiler (cc)")
        if not any(shutil.which(c) for c in ("c++", "g++", "clang++")):
            missing.append("a C++ compiler (c++)")
        if missing:
            raise SetupError(
                "building tf2_msgs needs " + ", ".join(missing)
                + " (Debian/Ubuntu: apt-get install cmake build-essential)"
            )
    if mode == "wheels" and DISTRO_NAME == "kilted" and sys.version_info[:2] != (3, 11):
        log(f"warning: the kilted wheels are built for CPython 3.11; this is {sys.version.split()[0]}")


def create_venv(mode: str, logfile: Path) -> None:
    py = venv_python()
    if py.exists():
        probe = subprocess.run([str(py), "-c", "import sys"], capture_output=True, check=False)
        if probe.returncode == 0:
            return
        log(f"existing {VENV.name} is broken; recreating it")
        shutil.rmtree(VENV)
    python = base_python()
    log(f"creating {VENV.name} ({mode}, RSF_DISTRO={DISTRO_NAME}) with {python}")
    cmd = [python, "-m", "venv"]
    if mode == "distro":
        cmd.append("--system-site-packages")
    elif host_pip():
        # uv installs everything in wheels mode: skip ensurepip (several seconds); pip comes later via uv
        cmd.append("--without-pip")
    run(cmd + [str(VENV)], "creating the virtual environment (python3 -m venv)", logfile)


def host_pip() -> bool:
    """Whether this (outer) Python has pip, to fetch uv with before the venv has a pip of its own."""
    probe = subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True, check=False)
    return probe.returncode == 0


def ensure_venv_pip(logfile: Path) -> None:
    """pip inside the venv (a venv made --without-pip gets it here, through uv or ensurepip)."""
    if (VENV / "bin" / "pip").exists():
        return
    uv = VENV / "bin" / "uv"
    if uv.exists():
        try:
            run([str(uv), "pip", "install", "--python", str(venv_python()), "pip"], "installing pip with uv",
                logfile, env=dict(os.environ, UV_NO_PROGRESS="1"))
            return
        except SetupError:
            pass
    run([str(venv_python()), "-m", "ensurepip", "--default-pip"], "installing pip (ensurepip)", logfile)


def pip_install(args: list[str], what: str, logfile: Path) -> None:
    ensure_venv_pip(logfile)
    log(what)
    # --no-compile: byte-compiling the ~1.7 GB of wheels costs minutes; Python compiles what it imports.
    cmd = [str(venv_python()), "-m", "pip", "install", "--disable-pip-version-check",
           "--no-input", "--no-compile", "-q", *args]
    run(cmd, what, logfile)


_UV_UNAVAILABLE: list[str] = []  # why uv could not be had (tried once per run, said once)


def _why(exc: SetupError) -> str:
    """The most telling line of a failed step: the last error-like line of its output."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower() or "no matching" in ln.lower()]
    return (errors or lines or ["unknown reason"])[-1][:200]


def ensure_uv(logfile: Path) -> Path | None:
    """uv in the venv (installed with pip on first use), or None where it cannot be had: then said once,
    with the reason and the cost (pip is several times slower on the ~1.7 GB of wheels)."""
    uv = VENV / "bin" / "uv"
    if _UV_UNAVAILABLE:
        return None
    why = ""
    if not uv.exists() and not (VENV / "bin" / "pip").exists() and host_pip():
        # a venv made --without-pip: fetch uv with the outer Python's pip, straight into the venv
        try:
            log("installing uv (parallel installer)")
            run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                 "--no-compile", "-q", "--no-deps", "--prefix", str(VENV), "uv>=0.4"],
                "installing uv with the outer pip", logfile)
        except SetupError as exc:
            why = f"the outer pip could not install it: {_why(exc)}"
    if not uv.exists():
        try:
            pip_install(["uv>=0.4"], "installing uv (parallel installer)" if not why else "installing uv with the "
                        "venv's pip", logfile)
        except SetupError as exc:
            why = f"{why + '; ' if why else ''}pip could not install it: {_why(exc)}"
    if uv.exists():
        return uv
    _UV_UNAVAILABLE.append(why or "uv was installed but is not in .venv/bin")
    log(f"uv is not available ({_UV_UNAVAILABLE[0]}); installing with pip instead, which takes about "
        f"20-30 s longer on a fresh set-up (full log: {logfile})")
    return None


def install_requirements(args: list[str], what: str, logfile: Path, mode: str) -> None:
    """Install with uv in wheels mode (5-10x faster than pip on the ~1.7 GB of wheels), else with pip.

    Distro mode keeps pip, whose view of --system-site-packages is the one ROS users expect. Set
    RSF_SETUP_NO_UV=1 to force pip. A uv failure falls back to pip.
    """
    uv = ensure_uv(logfile) if mode != "distro" and not os.environ.get("RSF_SETUP_NO_UV") else None
    if uv is not None:
        log(what + " with uv")
        env = dict(os.environ, UV_NO_PROGRESS="1")
        try:
            run([str(uv), "pip", "install", "--python", str(venv_python()), "--native-tls", *args],
                what, logfile, env=env)
            return
        except SetupError as exc:
            log(f"uv failed ({str(exc).splitlines()[0]}); retrying with pip")
    pip_install(args, what, logfile)


def install_editable(mode: str, logfile: Path) -> None:
    """This package, editable: with uv in wheels mode (about 1 s), else (or if uv fails) with pip."""
    what = "installing robot_state_format (editable)"
    uv = VENV / "bin" / "uv"
    if mode != "distro" and uv.exists() and not os.environ.get("RSF_SETUP_NO_UV"):
        log(what + " with uv")
        try:
            run([str(uv), "pip", "install", "--python", str(venv_python()), "--no-deps", "--no-build-isolation",
                 "-e", str(ROOT)], what, logfile, env=dict(os.environ, UV_NO_PROGRESS="1"))
            return
        except SetupError as exc:
            log(f"uv failed ({str(exc).splitlines()[0]}); retrying with pip")
    pip_install(["--no-deps", "--no-build-isolation", "--use-pep517", "-e", str(ROOT)], what, logfile)


def imports_all(statement: str) -> bool:
    proc = subprocess.run([str(venv_python()), "-c", statement], capture_output=True, check=False)
    return proc.returncode == 0


def imports(module: str) -> bool:
    proc = subprocess.run([str(venv_python()), "-c", f"import {module}"], capture_output=True, check=False)
    return proc.returncode == 0


EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception): ")


def import_failure(output: str) -> str:
    """The line of ``output`` that says why an import failed: the last exception line (rpyutils adds a
    generic paragraph after it), else the last non-empty line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if EXCEPTION_LINE.match(line)]
    return errors[-1] if errors else (lines[-1] if lines else "")


def check_rclpy_imports(logfile: Path) -> None:
    """rclpy imports in the venv just installed, or a SetupError naming why (the exception's line, see
    :func:`import_failure`).

    Once (CI, 2026-11-29) the check failed right after a successful install and passed when run again, and why
    was lost: each attempt's output now goes to ``logfile``, and a failure is tried once more after 2 s (the
    log keeps both) before set-up gives up."""
    why = ""
    for attempt in (1, 2):
        proc = subprocess.run([str(venv_python()), "-c", "import rclpy"], capture_output=True, text=True,
                              check=False)
        if proc.returncode == 0:
            return
        with logfile.open("a") as out:
            out.write(f"\n$ {venv_python()} -c 'import rclpy'  (attempt {attempt}: exit {proc.returncode})\n"
                      f"{proc.stdout}{proc.stderr}")
        why = import_failure(proc.stderr or proc.stdout) or f"exit {proc.returncode}"
        log(f"rclpy does not import in {VENV.name} (attempt {attempt}): {why}")
        if attempt == 1:
            time.sleep(2.0)
    raise SetupError(f"rclpy does not import in {VENV.name} after installing: {why}; see {logfile}")


def fix_wheel_cmake_exports() -> int:
    """Point the wheels' rosidl_generator_py export files at this Python's and numpy's include dirs."""
    probe = subprocess.run(
        [str(venv_python()), "-c",
         "import sysconfig, numpy; print(sysconfig.get_paths()['include']); print(numpy.get_include())"],
        capture_output=True, text=True, check=False,
    )
    if probe.returncode != 0:
        raise SetupError(f"cannot query the venv's include dirs: {probe.stderr.strip()}")
    py_inc, np_inc = probe.stdout.split("\n")[:2]
    fixed = 0
    for path in (VENV / "share").glob("*/cmake/export_*__rosidl_generator_pyExport.cmake"):
        text = path.read_text()
        new = WHEEL_PY_INCLUDE.sub(lambda _m: py_inc, WHEEL_NUMPY_INCLUDE.sub(lambda _m: np_inc, text))
        if new != text:
            # Write a new file rather than in place: an installer may have hard-linked this one to its cache.
            tmp = path.with_name(path.name + ".rsf-tmp")
            tmp.write_text(new)
            os.replace(tmp, path)
            fixed += 1
    return fixed


def build_tf2_msgs(mode: str, logfile: Path) -> None:
    """Build and install the TFMessage-only tf2_msgs into the venv (wheels) or a venv prefix (distro)."""
    log(f"building tf2_msgs (TFMessage) into {VENV.name}")
    fixed = fix_wheel_cmake_exports() if mode == "wheels" else 0
    if fixed:
        log(f"fixed {fixed} wheel cmake export files")
    build_dir = VENV / "build" / "tf2_msgs"
    shutil.rmtree(build_dir, ignore_errors=True)
    env = dict(os.environ)
    prefixes = [str(VENV)]
    if mode == "distro":
        prefixes += [p for p in env.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    env["CMAKE_PREFIX_PATH"] = os.pathsep.join(prefixes)
    env["AMENT_PREFIX_PATH"] = os.pathsep.join(prefixes)
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    configure = [
        "cmake", "-S", str(TF2_SRC), "-B", str(build_dir), *generator,
        f"-DCMAKE_INSTALL_PREFIX={VENV}", f"-DPython3_EXECUTABLE={venv_python()}",
        "-DBUILD_TESTING=OFF", "-DCMAKE_BUILD_TYPE=Release",
    ]
    run(configure, "configuring tf2_msgs (cmake)", logfile, env=env)
    run(["cmake", "--build", str(build_dir), "--parallel", "2"], "building tf2_msgs (cmake --build)",
        logfile, env=env)
    run(["cmake", "--install", str(build_dir)], "installing tf2_msgs (cmake --install)", logfile, env=env)
    if not imports("tf2_msgs.msg"):
        raise SetupError(f"tf2_msgs was built but does not import in {VENV.name}; see {logfile}")


def install_ros2_tools(logfile: Path, mode: str) -> bool:
    """The ``ros2tools`` stage (see scripts/ros2_tools.py); set-up goes on when no source can be had."""
    work = VENV / "build" / "ros2-src"
    srcs = ros2_tools.fetch_sources(ROOT, work, run, logfile, log)
    if srcs is None:
        log("ROS 2 tools (launch, launch_testing, ros2cli, tf2_ros) NOT installed: no archives in "
            f"${ros2_tools.ENV_VAR} or ../shared/ros2-src and github.com is not reachable; the tests needing them "
            f"will skip. To get them: {ros2_tools.HOW_TO_GET}")
        return False
    require_tools(mode, need_build=True)
    install_requirements(["-r", str(REQ_DIR / "ros-tools.txt"), "setuptools>=68", "wheel"],
                         "installing the ROS 2 tools' PyPI dependencies (requirements/ros-tools.txt)", logfile, mode)
    fixed = fix_wheel_cmake_exports()
    if fixed:
        log(f"fixed {fixed} wheel cmake export files")
    python_dirs = [str(srcs / rel) for rel in ros2_tools.PYTHON_PACKAGES]
    env = dict(os.environ, CMAKE_PREFIX_PATH=str(VENV), AMENT_PREFIX_PATH=str(VENV))
    # The pure-Python packages install while the cmake packages build (neither needs the other).
    with ThreadPoolExecutor(max_workers=1) as pool:
        python_done = pool.submit(
            install_requirements, ["--no-deps", "--no-build-isolation", *python_dirs],
            "installing launch, launch_ros, launch_testing, ros2cli, rosidl_runtime_py (from source)", logfile, mode)
        ros2_tools.build_cmake_chains(srcs, VENV, venv_python(), run, logfile, log, env)
        python_done.result()
    install_requirements(["--no-deps", "--no-build-isolation", *(str(srcs / rel) for rel in ros2_tools.AFTER_CMAKE)],
                         "installing tf2_ros_py, tf2_tools (from source)", logfile, mode)
    link_executables("tf2_tools", ["view_frames"])
    probe = subprocess.run([str(venv_python()), "-c", ros2_tools.PROBE], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        raise SetupError(f"the ROS 2 tools were built but do not import: {probe.stderr.strip()[-800:]}; see {logfile}")
    shutil.rmtree(work, ignore_errors=True)
    return True


def link_executables(package: str, names: list[str]) -> None:
    """``<venv>/lib/<package>/<name>`` -> ``<venv>/bin/<name>``: where ``ros2 run`` looks for executables."""
    libexec = VENV / "lib" / package
    libexec.mkdir(parents=True, exist_ok=True)
    for name in names:
        link = libexec / name
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(Path("..") / ".." / "bin" / name)


def ament_index_entry() -> None:
    """Put this package in the ament index of the ``.venv`` prefix, so ``ros2 run/launch/pkg`` find it.

    The smallest entry those tools accept: the marker ``share/ament_index/resource_index/packages/<pkg>``,
    ``share/<pkg>/package.xml``, the launch files and samples (symlinks into the checkout, so edits are
    live) and the executables in ``lib/<pkg>/``. ``./run`` puts ``.venv`` on ``AMENT_PREFIX_PATH``.
    """
    pkg = "robot_state_format"
    marker = VENV / "share" / "ament_index" / "resource_index" / "packages" / pkg
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text("")
    share = VENV / "share" / pkg
    share.mkdir(parents=True, exist_ok=True)
    # launch/ is a real directory of file links: `ros2 launch` looks for the file with os.walk, which
    # does not enter a symlinked directory.
    launch = share / "launch"
    if launch.is_symlink() or launch.is_file():
        launch.unlink()
    shutil.rmtree(launch, ignore_errors=True)
    links = [("package.xml", ROOT / "package.xml"), ("samples", ROOT / pkg / "samples")]
    links += [(f"launch/{f.name}", f) for f in sorted((ROOT / "launch").glob("*.launch.py"))]
    launch.mkdir()
    for name, target in links:
        link = share / name
        if link.is_symlink() or link.is_file():
            link.unlink()
        elif link.is_dir():
            shutil.rmtree(link)
        link.symlink_to(target)
    link_executables(pkg, console_scripts())


def console_scripts() -> list[str]:
    """The console scripts setup.py declares (``NAME = robot_state_format.module:function``): what
    ``ros2 run robot_state_format NAME`` runs, as colcon installs them into ``lib/<pkg>``."""
    text = (ROOT / "setup.py").read_text(encoding="utf-8")
    return re.findall(r'^\s*f?"([\w.-]+) = \{PACKAGE\}[\w.]+:\w+",\s*$', text, flags=re.M)


def requirement_files() -> list[str]:
    args: list[str] = []
    for name in DISTRO.reqs:
        path = REQ_DIR / name
        if path.exists():
            args += ["-r", str(path)]
    return args + constraints()


def constraints() -> list[str]:
    """``-c`` the distro's pins (its Ubuntu release's numpy, lxml, PyYAML), when it has some."""
    return ["-c", str(REQ_DIR / DISTRO.pins)] if DISTRO.pins else []


def install_old_pyyaml(logfile: Path, mode: str) -> None:
    """PyYAML 5.4.1 (Ubuntu 22.04's) has no wheel for Python 3.10 and its sdist needs Cython < 3 without build
    isolation; installed first so that the requirements' resolution keeps it (the pins name it)."""
    pins = (REQ_DIR / DISTRO.pins).read_text() if DISTRO.pins else ""
    if "PyYAML==5." not in pins or imports_all("import yaml, sys; sys.exit(not yaml.__version__.startswith('5.'))"):
        return
    install_requirements(["setuptools>=68", "wheel", "cython<3"], "installing cython<3 (for PyYAML 5.4.1)", logfile,
                         mode)
    pin = next(line.strip() for line in pins.splitlines() if line.startswith("PyYAML=="))
    install_requirements(["--no-build-isolation", pin], f"building {pin} (Ubuntu 22.04's)", logfile, mode)


def set_up(mode: str, stages: dict[str, str], force: bool) -> None:
    VENV.parent.mkdir(parents=True, exist_ok=True)
    logfile = Path(tempfile.gettempdir()) / f"rsf-setup-{os.getpid()}.log"
    logfile.write_text(f"robot_state_format set-up, mode {mode}\n")
    have_tf2 = mode == "core" or (venv_python().exists() and imports("tf2_msgs.msg"))
    require_tools(mode, need_build=not have_tf2)
    create_venv(mode, logfile)
    previous = {} if force else read_stamp()
    old = previous if previous.get("base") == stages["base"] else {}
    done: dict[str, str] = {"base": stages["base"]}

    def fresh(stage: str) -> bool:
        return old.get(stage) == stages[stage]

    reqs = requirement_files() if not fresh("reqs") else []
    installed = False  # whether this run put anything into the venv (then its bytecode is due)
    if mode == "wheels" and not fresh("ros"):
        installed = True
        # One pip run (one resolve) for the wheels and our requirements when both are due.
        install_requirements(["-r", str(REQ_DIR / DISTRO.ros), *(reqs or constraints())],
                             f"installing the ROS 2 {DISTRO_NAME} wheels (requirements/{DISTRO.ros})"
                             + (f" and requirements/{', '.join(DISTRO.reqs)}" if reqs else ""), logfile, mode)
        reqs = []
    done["ros"] = stages["ros"]
    write_stamp(done, mode)  # a stage-by-stage stamp: an interrupted set-up resumes where it stopped
    if reqs:
        installed = True
        install_old_pyyaml(logfile, mode)
        install_requirements(reqs, f"installing requirements/{', '.join(DISTRO.reqs)}", logfile, mode)
    done["reqs"] = stages["reqs"]
    write_stamp(done, mode)
    if mode != "core":
        check_rclpy_imports(logfile)
    # Kept across a change of this script (the "base" stage) when its own inputs are unchanged and it imports;
    # kept too when the archives went away (e.g. RSF_ROS2_SRC unset) but the tools built from them import.
    marker = VENV / ".rsf-ros2-tools"  # the digest of the last completed tools install (survives partial stamps)
    same = (marker.is_file() and marker.read_text() == stages["ros2tools"]) \
        or previous.get("ros2tools") == stages["ros2tools"]
    tools_kept = not force and mode == "wheels" and (
        (same and "archives:" not in stages["ros2tools"])
        or ((same or "git:" in stages["ros2tools"]) and imports_all(ros2_tools.PROBE)))
    if mode == "wheels" and DISTRO.tools and not fresh("ros2tools") and not tools_kept:
        marker.unlink(missing_ok=True)
        installed = True
        if install_ros2_tools(logfile, mode):
            marker.write_text(stages["ros2tools"])
    elif tools_kept and not marker.is_file():
        marker.write_text(stages["ros2tools"])
    done["ros2tools"] = stages["ros2tools"]
    write_stamp(done, mode)
    # Build where tf2_msgs is missing, or rebuild our own build when scripts/tf2_msgs changed; never over
    # the upstream tf2_msgs (it has srv/action too: the TFMessage-only one would break tf2_ros).
    tf2_changed = previous.get("tf2") != stages["tf2"]
    if mode != "core" and (not imports("tf2_msgs.msg") or (tf2_changed and (VENV / "build" / "tf2_msgs").exists()
                                                            and not imports("tf2_msgs.srv"))):
        require_tools(mode, need_build=True)
        installed = True
        build_tf2_msgs(mode, logfile)
    done["tf2"] = stages["tf2"]
    write_stamp(done, mode)
    if not fresh("pkg"):
        installed = True
        install_requirements(["setuptools>=68", "wheel"], "installing build tools (setuptools, wheel)", logfile,
                             mode)
        install_editable(mode, logfile)
        ensure_venv_pip(logfile)  # users and tools expect .venv/bin/pip
        if mode != "core":
            ament_index_entry()
        if imports("numba"):
            # compile the numba kinematics kernels into numba's on-disk cache (5-10 s once, not in a test)
            run([str(venv_python()), "-c", "from robot_state_format.kinematics.compiled import warm; warm()"],
                "compiling the kinematics kernels (numba cache)", logfile)
    done["pkg"] = stages["pkg"]
    write_stamp(done, mode)
    if bytecode_due(old, installed):
        byte_compile(logfile)
    done["bytecode"] = stages["bytecode"]
    write_stamp(done, mode)
    logfile.unlink(missing_ok=True)


def bytecode_due(old: dict[str, str], installed: bool) -> bool:
    """Byte-compile when this run installed something, or the venv was never compiled (by this script as it
    is: ``old`` is empty when the ``base`` stage changed). Not because another stage's digest alone changed:
    a copy of the checkout sharing this venv (test/project/test_readme.py's clone) sees other tool sources, keeps the
    tools, and must not make the next ``./run`` here compile again (issue 25: 8 s after every ``./run test``)."""
    return installed or "bytecode" not in old


def byte_compile(logfile: Path) -> None:
    """Byte-compile .venv's site-packages and this package (about 15 s on 2 cores), as pip, apt and colcon do.

    The wheels are installed with ``--no-compile`` (uv's default too), and where PYTHONDONTWRITEBYTECODE is
    set (it is on the project's machines) Python never caches what it compiles: every process would compile
    numpy, lxml, rclpy and this package from source again (``robot-state-format check`` 0.32 s instead of
    0.17 s, numpy's import alone 0.23 s instead of 0.11 s). Best effort: a file that does not compile (a
    Python 2 example shipped in some wheel) is skipped, logged, and the set-up goes on.
    """
    site = subprocess.run([str(venv_python()), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=False).stdout.strip()
    targets = [t for t in (site, str(ROOT / "robot_state_format")) if t and Path(t).is_dir()]
    if not targets:
        return
    log(f"byte-compiling {VENV.name} and the package (Python caches nothing where PYTHONDONTWRITEBYTECODE is set)")
    report = VENV / ".rsf-bytecode.log"
    with report.open("w") as out:
        proc = subprocess.run([str(venv_python()), "-m", "compileall", "-q", "-j", "0", *targets],
                              stdout=out, stderr=subprocess.STDOUT, check=False)
    if proc.returncode != 0:
        log(f"byte-compiling: some files did not compile (exit {proc.returncode}, listed in {report}); going on")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="redo every step even if the stamp matches")
    args = parser.parse_args(argv)
    if DISTRO_NAME not in DISTROS:
        log(f"error: RSF_DISTRO={DISTRO_NAME!r} is not one of {', '.join(DISTROS)} (unset = kilted)")
        return 2
    clean = without_other_venvs(dict(os.environ))
    os.environ.clear()  # every process started from here on (the target venv's python, uv, pip, cmake)
    os.environ.update(clean)
    mode = detect_mode()
    stages = stage_digests(mode)
    if not args.force and stamp_ok(stages):
        return 0
    lock_path = Path(tempfile.gettempdir()) / (
        "rsf-setup-" + hashlib.sha256(str(VENV).encode()).hexdigest()[:16] + ".lock")
    with lock_path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another set-up of this tree may be running: wait for it
        if not args.force and stamp_ok(stages):
            return 0
        start = time.monotonic()
        try:
            set_up(mode, stages, args.force)
        except SetupError as exc:
            log(f"error: {exc}")
            return 1
        log(f"done in {time.monotonic() - start:.1f} s ({VENV.name}, {mode} mode)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
