"""The demo's simulation part: saved mid-run, restarted, the two trajectories plotted; difference 0."""

from __future__ import annotations

from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

pytest.importorskip("mujoco", reason="the mujoco package is not installed")
pytest.importorskip("matplotlib", reason="matplotlib is not installed")

from robot_state_format.sim.demo_part import STEPS, demo_summary
from robot_state_format.usdf.reader import read_world_state_file
from robot_state_format.usdf.simulator_state import find_simulator_state

ARM = REPO_ROOT / "robot_state_format" / "samples" / "arm7_gripper.urdf"


def test_simulation_part_of_the_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    said: list[str] = []
    ok, line = demo_summary(ARM, tmp_path, say=said.append)
    assert ok, line
    assert "largest difference 0.0;" in line
    saved = tmp_path / "simulation" / f"step_{STEPS}.usdf"
    ext = find_simulator_state(read_world_state_file(saved).state, "mujoco")
    assert ext is not None and ext.step == STEPS
    png = tmp_path / "simulation" / "restart_trajectories.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert any("largest difference to the first run: 0.0" in s for s in said)
