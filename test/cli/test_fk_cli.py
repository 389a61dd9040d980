"""``robot-state-format fk``: hand-derived poses and twists of the bundled samples."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from repo_paths import REPO_ROOT

from robot_state_format.cli import main

SAMPLES = REPO_ROOT / "robot_state_format" / "samples"
S45 = math.sqrt(0.5)


def run_fk(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    code = main(["fk", *argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 and "--json" in argv else {}), err


def pos(doc: dict, name: str) -> list[float]:  # type: ignore[type-arg]
    return doc["frames"][name]["position"]


def quat(doc: dict, name: str) -> list[float]:  # type: ignore[type-arg]
    return doc["frames"][name]["quaternion"]


def test_two_links_orthogonal_seed_examples_differ_at_078(capsys: pytest.CaptureFixture[str]) -> None:
    q = 0.78
    # _1: joint frame at (0.1,0,0) (pose (0,0,-0.1) in linkB at (0.1,0,0.1)); linkB = joint + Ry(q)(0,0,0.1)
    #     = (0.1 + 0.1 sin q, 0, 0.1 cos q)
    code, doc, _ = run_fk(capsys, str(SAMPLES / "two_links_orthogonal_1.sdf"), "--positions",
                          json.dumps({"jointAB": q}), "--json")
    assert code == 0
    np.testing.assert_allclose(pos(doc, "two_links_orthogonal_1::linkB"),
                               [0.1 + 0.1 * math.sin(q), 0, 0.1 * math.cos(q)], atol=1e-12, rtol=0)
    # rotation about y by q: quaternion (0, sin(q/2), 0, cos(q/2))
    np.testing.assert_allclose(quat(doc, "two_links_orthogonal_1::linkB"),
                               [0, math.sin(q / 2), 0, math.cos(q / 2)], atol=1e-12, rtol=0)
    # _2: joint frame at (0,0,0.1) (pose (-0.1,0,0) in link2); link2 = joint + Ry(q)(0.1,0,0)
    #     = (0.1 cos q, 0, 0.1 - 0.1 sin q)
    code, doc2, _ = run_fk(capsys, str(SAMPLES / "two_links_orthogonal_2.sdf"), "--positions",
                           json.dumps({"two_links_orthogonal_2::joint12": q}), "--json")
    assert code == 0
    np.testing.assert_allclose(pos(doc2, "two_links_orthogonal_2::link2"),
                               [0.1 * math.cos(q), 0, 0.1 - 0.1 * math.sin(q)], atol=1e-12, rtol=0)


def test_double_pendulum_poses_and_twists(capsys: pytest.CaptureFixture[str]) -> None:
    # joint A: origin (0,0,-0.05), axis y; joint B: origin (0,0,-1) in link B, axis y.
    # qA = pi/2, qB = -pi/2: link B at (0,0,-0.05) rotated Ry(90) -> quaternion (0, s45, 0, s45);
    # link C = (0,0,-0.05) + Ry(90)(0,0,-1) = (0,0,-0.05) + (-1,0,0) = (-1, 0, -0.05), rotation Ry(0) = I.
    # velocities vA = 1, vB = 0: omega_C = (0,1,0); v_C = omega x (C - A_joint) = (0,1,0) x (-1,0,0)
    #   = (1*0 - 0*0, 0*(-1) - 0*0, 0*0 - 1*(-1)) = (0, 0, 1)
    code, doc, _ = run_fk(capsys, str(SAMPLES / "double_pendulum.urdf"), "--positions",
                          json.dumps({"joint A": math.pi / 2, "joint B": [-math.pi / 2]}),
                          "--velocities", json.dumps({"joint A": 1.0}), "--json")
    assert code == 0
    np.testing.assert_allclose(pos(doc, "linkage::link B"), [0, 0, -0.05], atol=1e-12, rtol=0)
    np.testing.assert_allclose(quat(doc, "linkage::link B"), [0, S45, 0, S45], atol=1e-12, rtol=0)
    np.testing.assert_allclose(pos(doc, "linkage::link C"), [-1, 0, -0.05], atol=1e-12, rtol=0)
    np.testing.assert_allclose(quat(doc, "linkage::link C"), [0, 0, 0, 1], atol=1e-12, rtol=0)
    np.testing.assert_allclose(doc["twists"]["linkage::link C"]["linear"], [0, 0, 1], atol=1e-12, rtol=0)
    np.testing.assert_allclose(doc["twists"]["linkage::link C"]["angular"], [0, 1, 0], atol=1e-12, rtol=0)
    np.testing.assert_allclose(doc["twists"]["linkage::link A"]["linear"], [0, 0, 0], atol=0, rtol=0)
    # the joint frames move with the links: joint B sits at link C's origin
    np.testing.assert_allclose(pos(doc, "linkage::joint B"), [-1, 0, -0.05], atol=1e-12, rtol=0)


def test_arm7_gripper_with_mimic_finger(capsys: pytest.CaptureFixture[str]) -> None:
    # joint1 = pi/2 about z (at (0,0,0.1)), others 0, finger_left = 0.02 (finger_right mimics, x1):
    # chain at zero (then everything turned by Rz90 about the z axis through the origin):
    #  link2 (0,0,0.3); link3 = link2 + Rx(-90)(0,-0.4,0) = (0,0,0.7); link4 (0,0,1.0);
    #  link5 = link4 + Rx(90)(0,0.35,0) = (0,0,1.35); link6 (0,0,1.45) with yaw +90 (total Rz180);
    #  link7 = (0,0,1.45) + Rz180 (0.1,0,0.05) = (-0.1, 0, 1.5); hand (-0.1, 0, 1.58) yaw 180-45 = 135;
    #  finger_left = hand + Rz135 (0, 0.02+0.02, 0.05) = (-0.1 - 0.04 s45, -0.04 s45, 1.63);
    #  finger_right = hand + Rz135 ((0,-0.02,0.05) + Rz180 (0,0.02,0)) = (-0.1 + 0.04 s45, 0.04 s45, 1.63)
    #  with yaw 135 + 180 = 315 -> quaternion (0,0,sin(157.5), cos(157.5))
    #  tool_frame = hand + (0,0,0.12) = (-0.1, 0, 1.70)
    # twist with joint1 rate 1: omega z; link7 v = z x (-0.1,0,1.5) = (0,-0.1,0)
    code, doc, err = run_fk(capsys, str(SAMPLES / "arm7_gripper.urdf"), "--positions",
                            json.dumps({"joint1": math.pi / 2, "finger_left_joint": 0.02,
                                        "finger_right_joint": 0.5}),
                            "--velocities", json.dumps({"arm7_gripper::joint1": 1}), "--json")
    assert code == 0
    assert "finger_right_joint" in err and "ignored" in err
    np.testing.assert_allclose(pos(doc, "arm7_gripper::link7"), [-0.1, 0, 1.5], atol=1e-12, rtol=0)
    np.testing.assert_allclose(quat(doc, "arm7_gripper::hand"),
                               [0, 0, math.sin(math.radians(67.5)), math.cos(math.radians(67.5))], atol=1e-12, rtol=0)
    np.testing.assert_allclose(pos(doc, "arm7_gripper::finger_left"), [-0.1 - 0.04 * S45, -0.04 * S45, 1.63],
                               atol=1e-12, rtol=0)
    np.testing.assert_allclose(pos(doc, "arm7_gripper::finger_right"), [-0.1 + 0.04 * S45, 0.04 * S45, 1.63],
                               atol=1e-12, rtol=0)
    q = quat(doc, "arm7_gripper::finger_right")
    expect = np.array([0, 0, math.sin(math.radians(157.5)), math.cos(math.radians(157.5))])
    assert np.allclose(q, expect, atol=1e-12, rtol=0) or np.allclose(q, -expect, atol=1e-12, rtol=0)
    np.testing.assert_allclose(pos(doc, "arm7_gripper::tool_frame"), [-0.1, 0, 1.7], atol=1e-12, rtol=0)
    np.testing.assert_allclose(doc["twists"]["arm7_gripper::link7"]["linear"], [0, -0.1, 0], atol=1e-12, rtol=0)
    np.testing.assert_allclose(doc["twists"]["arm7_gripper::link7"]["angular"], [0, 0, 1], atol=1e-12, rtol=0)


def test_nested_world_shoulder_quarter_turn(capsys: pytest.CaptureFixture[str]) -> None:
    # zero configuration (see the sample's comment): arm::upper (1,0.2,0.6) yaw 180 (robot yaw 90 +
    # nothing), lower (1,0.2,1.1) yaw 270, palm (1,0.2,1.15), tool = palm + (-0.1,0,0) in world.
    # shoulder: joint frame at (1,0.2,0.5), axis z; q = pi/2 turns everything above it about the
    # vertical line x=1, y=0.2: upper/lower/palm keep their positions, yaw += 90;
    # tool offset (-0.1,0,0) -> (0,-0.1,0): tool at (1, 0.1, 1.15).  box::body stays at (2,0,0).
    code, doc, _ = run_fk(capsys, str(SAMPLES / "nested_world.sdf"), "--positions",
                          json.dumps({"shoulder": math.pi / 2}), "--json")
    assert code == 0
    np.testing.assert_allclose(pos(doc, "robot::arm::upper"), [1, 0.2, 0.6], atol=1e-12, rtol=0)
    np.testing.assert_allclose(quat(doc, "robot::arm::upper"), [0, 0, 1, 0], atol=1e-12, rtol=0)  # yaw 180
    np.testing.assert_allclose(pos(doc, "robot::gripper::palm"), [1, 0.2, 1.15], atol=1e-12, rtol=0)
    np.testing.assert_allclose(quat(doc, "robot::gripper::palm"), [0, 0, -S45, S45], atol=1e-12, rtol=0)  # yaw 270
    np.testing.assert_allclose(pos(doc, "robot::tool"), [1, 0.1, 1.15], atol=1e-12, rtol=0)
    np.testing.assert_allclose(pos(doc, "box::body"), [2, 0, 0], atol=1e-12, rtol=0)


def test_zero_configuration_matches_frames(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(SAMPLES / "nested_world.sdf")
    assert main(["frames", path, "--json"]) == 0
    frames = json.loads(capsys.readouterr().out)
    code, doc, _ = run_fk(capsys, path, "--json")
    assert code == 0
    assert doc.keys() == {"frames", "joints"}
    for name, entry in frames["frames"].items():
        np.testing.assert_allclose(doc["frames"][name]["position"], entry["position"], atol=1e-12, rtol=0)
    assert doc["joints"] == frames["joints"]


def test_positions_from_file_and_tree_output(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    f = tmp_path / "q.json"
    f.write_text(json.dumps({"joint A": 0.5}))
    code = main(["fk", str(SAMPLES / "double_pendulum.urdf"), "--positions", f"@{f}",
                 "--velocities", '{"joint B": 2}'])
    out = capsys.readouterr().out
    assert code == 0 and "link C" in out and "twists" in out


@pytest.mark.parametrize(("positions", "code", "message"), [
    ('{"joint A": [1, 2]}', 1, "expected 1"),
    ('{"no such joint": 1}', 1, "unknown joint"),
    ('{"joint A": "x"}', 1, "number"),
    ('{"joint A": NaN}', 1, "finite"),
    ('[1, 2]', 2, "JSON object"),
    ('{"joint A": ', 2, "not valid JSON"),
    ("@/nonexistent/q.json", 2, "cannot read"),
])
def test_bad_positions_exit_codes(capsys: pytest.CaptureFixture[str], positions: str, code: int,
                                  message: str) -> None:
    got = main(["fk", str(SAMPLES / "double_pendulum.urdf"), "--positions", positions, "--json"])
    err = capsys.readouterr().err
    assert got == code
    assert message in err


def test_missing_model_and_invalid_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["fk", str(tmp_path / "missing.urdf"), "--json"]) == 2
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="r"><link name="a"/><joint name="j" type="revolute"><parent link="a"/>'
                   '<child link="zz"/></joint></robot>')
    assert main(["fk", str(bad), "--json"]) == 1
    capsys.readouterr()
