"""`check` and `frames --json` on SDFormat files and worlds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

from robot_state_format.cli import main

SAMPLES = REPO_ROOT / "robot_state_format" / "samples"


def test_check_module_entry_point_on_sdf() -> None:
    r = subprocess.run([sys.executable, "-m", "robot_state_format", "check", str(SAMPLES / "nested_world.sdf")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "valid sdf world 'nested_world'" in r.stdout


def test_check_invalid_sdf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.sdf"
    bad.write_text('<sdf version="1.7">\n<model name="m">\n<link name="a"><pose relative_to="b"/></link>\n'
                   '<link name="b"><pose relative_to="a"/></link>\n</model>\n</sdf>\n')
    assert main(["check", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:3: error: [SDF_POSE_GRAPH_CYCLE]" in err or f"{bad}:4: error: [SDF_POSE_GRAPH_CYCLE]" in err


def test_frames_json_world(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frames", "--json", str(SAMPLES / "nested_world.sdf")]) == 0
    doc = json.loads(capsys.readouterr().out)
    frames = doc["frames"]
    # Hand-derived in test_sdf_nested: tool at (0.9, 0.2, 1.15), arm frame at (1, 0.2, 0.5).
    assert frames["robot::tool"]["position"] == pytest.approx([0.9, 0.2, 1.15], rel=0, abs=1e-12)
    assert frames["robot::arm"]["kind"] == "model"
    assert frames["robot::arm"]["position"] == pytest.approx([1, 0.2, 0.5], rel=0, abs=1e-12)
    assert frames["robot::arm::lower"]["kind"] == "link"
    assert doc["joints"]["robot::wrist"]["parent"] == "robot::arm::lower"
    assert doc["joints"]["robot::wrist"]["child"] == "robot::gripper::palm"


def test_frames_json_model_scoped_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frames", "--json", str(SAMPLES / "two_links_orthogonal_2.sdf")]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["frames"]["two_links_orthogonal_2::joint12"]["position"] == pytest.approx([0, 0, 0.1], rel=0, abs=1e-12)
    assert doc["frames"]["two_links_orthogonal_2::link2"]["position"] == pytest.approx([0.1, 0, 0.1], rel=0, abs=1e-12)
