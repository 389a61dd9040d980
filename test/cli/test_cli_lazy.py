"""The command line loads lazily: ``--help`` imports no command module, a command only its own; the
command table names every command module with the help line the module registers; commands that compute
kinematics do it with numpy (numba never loaded) and give the process its default back."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

import robot_state_format.cli as cli
from robot_state_format.lazy_modules import MissingDependencyError

ROOT = REPO_ROOT
SAMPLE = ROOT / "robot_state_format" / "samples" / "arm7_gripper.urdf"

PROBE = """
import json, sys
from robot_state_format.cli import main
code = main(sys.argv[1:])
heavy = ("numpy", "lxml", "rclpy", "robot_state_format.kinematics", "robot_state_format.usdf",
         "robot_state_format.ros", "matplotlib", "mujoco", "mcap")
print(json.dumps({"code": code, "loaded": sorted({m.split(".")[0] if not m.startswith("robot_state_format")
                                                   else m for m in sys.modules if m.startswith(heavy)})}))
"""


def _probe(*argv: str) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, cwd=ROOT, check=False,
                         timeout=60)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_help_imports_nothing_heavy() -> None:
    r = _probe("--help")
    assert r == {"code": 0, "loaded": []}


def test_check_imports_only_what_reading_a_model_needs() -> None:
    r = _probe("check", "-q", str(SAMPLE))
    assert r["code"] == 0
    loaded = set(r["loaded"])  # type: ignore[arg-type]
    assert {"numpy", "lxml"} <= loaded  # the model reader's own needs
    assert not loaded & {"rclpy", "matplotlib", "mujoco", "mcap"}
    assert not any(m.startswith(("robot_state_format.kinematics", "robot_state_format.usdf", "robot_state_format.ros"))
                   for m in loaded), loaded


KERNEL_PROBE = """
import json, sys
from robot_state_format.cli import main
from robot_state_format.kinematics import compiled
seen = []
real = compiled.kernel
compiled.kernel = lambda: seen[-1].add(compiled._default["kernel"]) or real()
codes = []
for argv in json.loads(sys.argv[1]):
    seen.append(set())
    codes.append(main(argv))
print(json.dumps({"codes": codes, "numba": "numba" in sys.modules, "defaults_seen": [sorted(s) for s in seen],
                  "restored": compiled._default["kernel"]}))
"""


def test_commands_that_compute_kinematics_use_numpy_and_restore_the_default(tmp_path: Path) -> None:
    """One-shot commands never load numba (1-3 s); the process's default is back afterwards."""
    out = tmp_path / "s.usdf"
    runs = [["state", "from-model", str(SAMPLE), "--positions", '{"joint1": 0.5}', "--velocities", "{}",
             "-o", str(out)],
            ["state", "validate", str(out), "--model", str(SAMPLE), "--check-poses", "-q"],
            ["fk", str(SAMPLE), "--positions", '{"joint1": 0.5}', "--velocities", "{}", "--json"]]
    env = {k: v for k, v in os.environ.items() if k != "ROBOT_STATE_FORMAT_KERNEL"}
    proc = subprocess.run([sys.executable, "-c", KERNEL_PROBE, json.dumps(runs)], capture_output=True, text=True,
                          cwd=ROOT, env=env, check=False, timeout=120)
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    # each command ran and computed kinematics (asked for the kernels) with numpy as the default; numba never
    # loaded; the process's default (numpy too, since issue 27) unchanged
    assert r == {"codes": [0] * len(runs), "numba": False, "defaults_seen": [[False]] * len(runs),
                 "restored": False}, proc.stderr


def test_command_table_names_every_module_and_its_help_lines() -> None:
    modules = sorted(i.name for i in pkgutil.iter_modules(cli.__path__) if not i.name.startswith("_"))
    listed = {m for m, _ in cli.COMMANDS.values()}
    assert set(modules) == listed, "add each new command module to robot_state_format.cli.COMMANDS (one line)"
    missing: dict[str, str] = {}
    for module in modules:
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        try:
            importlib.import_module(f"robot_state_format.cli.{module}").register(sub)
        except MissingDependencyError as exc:  # e.g. joint-states without ROS 2 (Humble here): said in one line
            missing[module] = str(exc)
            continue
        registered = {a.dest: a.help for a in sub._choices_actions}
        table = {name: help_line for name, (m, help_line) in cli.COMMANDS.items() if m == module}
        assert registered == table, module
    if missing:
        pytest.skip(f"every other command checked; not {', '.join(missing)}: {next(iter(missing.values()))}")


def test_every_command_still_parses_its_own_options(capsys) -> None:  # type: ignore[no-untyped-def]
    assert cli.main(["check", "-q", str(SAMPLE)]) == 0
    assert cli.main(["frames", str(SAMPLE), "--json"]) == 0
    assert "link" in capsys.readouterr().out
    assert cli.main(["nonsense"]) == 2
    assert cli.main([]) == 2
