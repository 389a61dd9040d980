"""``robot-state-format sim run`` through a real subprocess: the restart-file determinism check.

Run 2N steps saving at N; run N steps from the saved file; the trajectory rows of the second run
are the last N rows of the first, digit for digit (repr floats).  Exit codes 0/1/2 as documented.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mujoco", reason="the mujoco package is not installed")

from sim_helpers import ROBOTS, load

from robot_state_format.cli import main
from robot_state_format.usdf.build import state_from_model
from robot_state_format.usdf.writer import write_world_state_file

N = 60


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "robot_state_format", "sim", "run", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300, env=os.environ.copy())


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="") as f:
        return list(csv.reader(f))


def _start(robot: str, tmp_path: Path) -> list[str]:
    """arm7_gripper stands balanced at zero: start it bent, from a restart file of the package."""
    if robot != "arm7_gripper":
        return []
    model, _ = load(robot)
    state = state_from_model(model, {"joint2": 0.9, "joint4": -0.6, "joint6": 0.4, "finger_left_joint": 0.01})
    write_world_state_file(state, tmp_path / "start.usdf")
    return ["--restart", "start.usdf"]


@pytest.mark.parametrize("robot", ["arm7_gripper", "legged_world"])
def test_cli_restart_continues_the_trajectory(robot: str, tmp_path: Path) -> None:
    model = str(ROBOTS[robot][0])
    # legged_world: a time step of its own, which the restart (without --dt) takes from the file
    dt = ["--dt", "0.001"] if robot == "legged_world" else []
    first = _cli(model, "--engine", "mujoco", "--steps", str(2 * N), "--save-at", str(N), "--output", "out",
                 "--trajectory", "a.csv", *dt, *_start(robot, tmp_path), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    saved = tmp_path / "out" / f"step_{N}.usdf"
    assert saved.is_file() and str(saved.relative_to(tmp_path)) in first.stdout
    second = _cli(model, "--engine", "mujoco", "--steps", str(N), "--restart", str(saved), "--trajectory", "b.csv",
                  cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    a, b = _rows(tmp_path / "a.csv"), _rows(tmp_path / "b.csv")
    assert a[0] == b[0] and a[0][:2] == ["step", "time"]
    assert len(a) == 2 * N + 1 and len(b) == N + 1
    assert [r[0] for r in b[1:]] == [str(k) for k in range(N + 1, 2 * N + 1)]
    assert b[1:] == a[N + 1:]
    assert float(a[1][1]) == (0.001 if dt else 0.002)
    moved = max(abs(float(x) - float(y)) for x, y in zip(a[1][2:], a[-1][2:], strict=True))
    assert moved > 1e-3


def test_cli_trajectory_columns(tmp_path: Path) -> None:
    assert main(["sim", "run", str(ROBOTS["legged_world"][0]), "--engine", "mujoco", "--steps", "2",
                 "--trajectory", str(tmp_path / "t.csv")]) == 0
    head = _rows(tmp_path / "t.csv")[0]
    assert "pendulum::swing" in head
    assert [c for c in head if c.startswith("quadruped::tail_joint.")] == [
        f"quadruped::tail_joint.{s}" for s in ("qx", "qy", "qz", "qw")]
    assert [c for c in head if c.startswith("quadruped::torso__free.")] == [
        f"quadruped::torso__free.{s}" for s in ("x", "y", "z", "qx", "qy", "qz", "qw")]
    rows = _rows(tmp_path / "t.csv")
    assert rows[1][:2] == ["1", repr(0.002)] and rows[2][:2] == ["2", repr(0.004)]
    assert main(["sim", "run", str(ROBOTS["arm7_gripper"][0]), "--engine", "mujoco", "--steps", "1",
                 "--trajectory", str(tmp_path / "arm.csv")]) == 0
    arm = _rows(tmp_path / "arm.csv")[0]
    # mimic followers are not independent coordinates; the fixed base has no free joint
    assert arm == ["step", "time", *[f"joint{i}" for i in range(1, 8)], "finger_left_joint"]


def test_cli_exit_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # in-process (cli.main): the contract, without a process per case
    arm, cart = str(ROBOTS["arm7_gripper"][0]), str(ROBOTS["planar_cart"][0])
    run = ["sim", "run"]
    assert main([*run, cart, "--engine", "mujoco", "--steps", "3", "--save-at", "3", "--output", "."]) == 0
    capsys.readouterr()
    assert main([*run, arm, "--engine", "mujoco", "--steps", "3", "--restart", "step_3.usdf"]) == 1
    err = capsys.readouterr().err
    assert "USDF_MISSING_JOINT" in err and "joint1" in err
    (tmp_path / "bad.usdf").write_text("<world_state name='w' version='1.0'><nonsense/></world_state>")
    assert main([*run, arm, "--engine", "mujoco", "--steps", "1", "--restart", "bad.usdf"]) == 1
    assert main([*run, arm, "--engine", "mujoco", "--steps", "1", "--restart", "missing.usdf"]) == 2
    assert main([*run, arm, "--engine", "bullet", "--steps", "1"]) == 2
    assert main([*run, arm, "--engine", "mujoco"]) == 2
    assert main([*run, arm, "--engine", "mujoco", "--steps", "2", "--save-at", "5"]) == 2
    assert main([*run, arm, "--engine", "mujoco", "--steps", "1", "--dt", "0"]) == 2
    assert main([*run, "missing.urdf", "--engine", "mujoco", "--steps", "1"]) == 2


def test_cli_drake_engine_restarts_exactly(tmp_path: Path) -> None:
    pytest.importorskip("pydrake", reason="the drake package is not installed")
    model = str(ROBOTS["floating_mimic"][0])
    first = _cli(model, "--engine", "drake", "--steps", "40", "--save-at", "20", "--output", "o", "--trajectory", "a.csv",
                 cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    second = _cli(model, "--engine", "drake", "--steps", "20", "--restart", "o/step_20.usdf", "--trajectory",
                  "b.csv", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    a, b = _rows(tmp_path / "a.csv"), _rows(tmp_path / "b.csv")
    assert b[1:] == a[21:]
    assert float(a[-1][a[0].index("base_joint.z")]) < 1.0 - 0.01  # it fell
