"""The real C++ robot_state_publisher as a performance and correctness anchor (built outside the repository).

The shared script ``../shared/anchors/robot_state_publisher_cpp/build.sh`` builds it (3.3.3, the node code of
Kilted's 3.4.3) against the ROS 2 wheels of a venv in about 3 minutes, cached afterwards (a re-run with nothing
changed takes under a second). Where:

* ``RSF_RSP_CPP``: the work folder (default ``../rsp_cpp`` beside the clone); the install prefix is its
  ``install/`` (the executable ``install/lib/robot_state_publisher/robot_state_publisher``);
* ``RSF_RSP_BUILD``: the build script (default ``../shared/anchors/robot_state_publisher_cpp/build.sh``).

:func:`find_anchor` only looks (the test suite never builds); :func:`build_anchor` runs the script when the
executable is missing or stale (the bench, and ``.ci/run`` through ``python bench/rsp_anchor.py build``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXE = Path("lib", "robot_state_publisher", "robot_state_publisher")


def work_dir() -> Path:
    return Path(os.environ.get("RSF_RSP_CPP") or ROOT.parent / "rsp_cpp").resolve()


def build_script() -> Path:
    default = ROOT.parent / "shared" / "anchors" / "robot_state_publisher_cpp" / "build.sh"
    return Path(os.environ.get("RSF_RSP_BUILD") or default).resolve()


@dataclass(frozen=True)
class Anchor:
    """The built C++ node: its executable and the environment ``rsp_env.sh`` sets."""

    exe: Path
    env: dict[str, str]

    def command(self) -> list[str]:
        return [str(self.exe)]


def _env_of(prefix: Path) -> dict[str, str] | None:
    """The variables ``PREFIX/rsp_env.sh`` sets, on top of this process's environment."""
    script = prefix / "rsp_env.sh"
    if not script.is_file():
        return None
    out = subprocess.run(["bash", "-c", f'. "{script}" && env -0'], capture_output=True, check=False)
    if out.returncode != 0:
        return None
    env = {}
    for item in out.stdout.split(b"\0"):
        if b"=" in item:
            k, v = item.split(b"=", 1)
            env[k.decode()] = v.decode()
    return env


def find_anchor() -> tuple[Anchor | None, str]:
    """The anchor when it is built (never builds), else None and why."""
    prefix = work_dir() / "install"
    exe = prefix / EXE
    if not exe.is_file():
        return None, (f"the C++ robot_state_publisher is not built ({exe} missing;"
                      " `python bench/rsp_anchor.py build` builds it)")
    env = _env_of(prefix)
    if env is None:
        return None, f"{prefix / 'rsp_env.sh'} missing or failing"
    return Anchor(exe, env), ""


def build_anchor(venv: Path | None = None, log: Path | None = None) -> tuple[Anchor | None, str]:
    """Build (or find cached) the anchor with the shared script; None and why when it cannot."""
    script = build_script()
    if not script.is_file():
        found, _ = find_anchor()
        return (found, "") if found is not None else (None, f"no build script at {script} (set RSF_RSP_BUILD)")
    prefix = work_dir() / "install"
    venv = venv or Path(sys.prefix)
    log = log or work_dir() / "bench_build.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as f:
        code = subprocess.run(["bash", str(script), str(venv), str(prefix)], stdout=f, stderr=subprocess.STDOUT,
                              check=False).returncode
    if code != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        return None, f"build.sh failed (exit {code}, log {log}): {' | '.join(tail)}"
    return find_anchor()


def start(ros: Any, command: list[str], params: dict[str, Any], ros_args: list[str], label: str,
          env: dict[str, str] | None = None, spawning: Callable[[], None] | None = None) -> Any:
    """Start ``command`` as a node process of the harness ``ros`` (test/ros_harness.py; stopped with the
    harness's others): its params file, ``ros_args``, the harness's DDS environment plus ``env``.
    ``spawning`` is called just before the process is spawned, after its params file is written (a start-up
    clock starts there: writing romeo's description as YAML takes the harness 60-80 ms)."""
    import subprocess

    from ros_harness import NodeProcess, configure_ros_environment, write_params_file

    params_path = write_params_file(ros.workdir / f"{label}.params.yaml", params)
    child_env = dict(os.environ)
    child_env.update(env or {})
    configure_ros_environment(child_env)
    cmd = [*command, "--ros-args", "--params-file", str(params_path), *ros_args]
    log = ros.workdir / f"{label}.log"
    with log.open("wb") as f:
        if spawning is not None:
            spawning()
        proc = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=child_env)
    node = NodeProcess(label, cmd, log, proc, params_path)
    ros.processes.append(node)
    return node


def our_command() -> list[str]:
    """The state_publisher console script beside this Python (or the module)."""
    exe = Path(sys.executable).parent / "state_publisher"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "robot_state_format.ros.state_publisher"]


def main(argv: list[str]) -> int:
    """``python bench/rsp_anchor.py build [VENV]``: build (or find cached) the anchor against VENV (default: this
    Python's venv); one line says where it is, or why not (exit 1). ``.ci/run`` calls it so that the tests against
    the C++ node run in CI."""
    if len(argv) not in (1, 2) or argv[0] != "build":
        print("usage: python bench/rsp_anchor.py build [VENV]", file=sys.stderr)
        return 2
    anchor, why = build_anchor(Path(argv[1]).resolve() if len(argv) == 2 else None)
    if anchor is None:
        print(f"rsp_anchor: the C++ robot_state_publisher is not built: {why}", file=sys.stderr)
        return 1
    print(f"rsp_anchor: the C++ robot_state_publisher is built: {anchor.exe}")
    return 0


__all__ = ["Anchor", "build_anchor", "build_script", "find_anchor", "main", "our_command", "start", "work_dir"]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
