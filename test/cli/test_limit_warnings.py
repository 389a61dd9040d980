"""Joint values outside the limits are used as given and named wherever they enter the command line
(``fk``, ``state from-model``, ``joint-states``): one warning line on stderr naming joint, value and
limits, exit 0. (JointState into state_publisher: test_state_publisher_cache.py / _ros.py.)"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from repo_paths import REPO_ROOT

from robot_state_format.cli import main
from robot_state_format.model.joint_limits import limit_warnings, position_ranges
from robot_state_format.model.loader import load_model
from robot_state_format.usdf.reader import read_world_state

ROOT = REPO_ROOT
ARM = str(ROOT / "robot_state_format" / "samples" / "arm7_gripper.urdf")  # joint1..7 limited to [-2.9, 2.9]
WANT = "joint 'joint1' = 3.5 is outside its limits [-2.9, 2.9]"

URDF = """<robot name="r"><link name="a"/><link name="b"/><link name="c"/><link name="d"/><link name="e"/>
  <joint name="cont" type="continuous"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
    <limit effort="1" velocity="1"/></joint>
  <joint name="slide" type="prismatic"><parent link="b"/><child link="c"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.04" effort="1" velocity="1"/></joint>
  <joint name="fol" type="prismatic"><parent link="c"/><child link="d"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.04" effort="1" velocity="1"/><mimic joint="slide"/></joint>
  <joint name="fix" type="fixed"><parent link="d"/><child link="e"/></joint>
</robot>"""


def test_ranges_and_lines() -> None:
    """Continuous and fixed joints have no limits; the line names the value exactly as given."""
    model = load_model(URDF)
    assert position_ranges(model.joints["cont"]) == ()
    assert position_ranges(model.joints["fix"]) == ()
    assert position_ranges(model.joints["slide"]) == ((0.0, 0.04),)
    assert limit_warnings(model, {"cont": 100.0, "slide": 0.04, "fol": 9.0}) == []  # follower: ignored anyway
    assert limit_warnings(model, {"slide": 0.0400001, "cont": -7}) == [
        "joint 'slide' = 0.0400001 is outside its limits [0, 0.04]"]
    assert limit_warnings(model, {"slide": -1e-9}) == ["joint 'slide' = -1e-09 is outside its limits [0, 0.04]"]


def test_fk_uses_the_value_and_warns(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fk", ARM, "--positions", '{"joint1": 3.5, "joint2": 2.9}', "--json"]) == 0
    out, err = capsys.readouterr()
    assert err.count("warning") == 1 and f"robot-state-format fk: warning: {WANT}" in err
    q = json.loads(out)["frames"]["arm7_gripper::link1"]["quaternion"]  # about z by 3.5, as given
    assert abs(abs(q[2] * math.sin(1.75) + q[3] * math.cos(1.75)) - 1) < 1e-12


def test_state_from_model_writes_the_value_and_warns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "s.usdf"
    assert main(["state", "from-model", ARM, "--positions", '{"joint1": 3.5}', "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"robot-state-format state from-model: warning: {WANT}" in err
    state = read_world_state(out.read_text()).state
    assert state.model_states[0].joint("joint1").positions == (3.5,)  # type: ignore[union-attr]


def test_joint_states_publishes_and_warns(ros_context: Any) -> None:
    r = subprocess.run([sys.executable, "-m", "robot_state_format", "joint-states", "--model", ARM, "--positions",
                        '{"joint1": 3.5, "joint2": -2.9}', "--duration", "0.2"], capture_output=True, text=True,
                       timeout=60, env=dict(os.environ), cwd=ROOT, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("outside its limits") == 1 and f"joint_state_source: warning: {WANT}" in r.stderr
