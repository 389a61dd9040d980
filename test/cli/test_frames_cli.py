"""``frames --json`` and frames_document: world poses derived by hand, on paper, from the files.

Notation: p = position, q = quaternion (x, y, z, w), Rx(a) = rotation about x by a, c45 = cos 45deg
= sqrt(1/2).  A URDF child link sits at X_parent @ [R(rpy) | xyz]; the joint frame is the child link
frame; a joint axis in the world is R_child @ axis."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from repo_paths import REPO_ROOT, TEST_DIR

from robot_state_format.cli import main
from robot_state_format.model.frames import format_frames_tree, frames_document
from robot_state_format.model.types import WORLD, Frame, Joint, JointType, Link, Model, ModelFrame
from robot_state_format.model.urdf.reader import read_urdf
from robot_state_format.spatial import pose_to_transform

SAMPLES = REPO_ROOT / "robot_state_format" / "samples"
C45 = math.sqrt(0.5)
S225, C225 = math.sin(math.radians(22.5)), math.cos(math.radians(22.5))
IDQ = [0.0, 0.0, 0.0, 1.0]


def _frames_json(path: Path, capsys: pytest.CaptureFixture[str]) -> dict:
    assert main(["frames", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _same_rotation(q1: list[float], q2: list[float]) -> bool:
    return abs(abs(float(np.dot(q1, q2))) - 1.0) < 1e-9


def _assert_frame(doc: dict, name: str, kind: str, p: list[float], q: list[float]) -> None:
    f = doc["frames"][name]
    assert f["kind"] == kind, name
    assert f["position"] == pytest.approx(p, abs=1e-9, rel=0), name
    assert _same_rotation(f["quaternion"], q), (name, f["quaternion"], q)


def test_double_pendulum_by_hand(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _frames_json(SAMPLES / "double_pendulum.urdf", capsys)
    # link A is the root: identity. joint A origin (0 0 -0.05): link B at z = -0.05.
    # joint B origin (0 0 -1) from link B: link C at z = -0.05 - 1 = -1.05. No rotations anywhere.
    expected = {
        "linkage": ("model", [0, 0, 0]),
        "linkage::link A": ("link", [0, 0, 0]),
        "linkage::link B": ("link", [0, 0, -0.05]),
        "linkage::link C": ("link", [0, 0, -1.05]),
        "linkage::joint A": ("joint", [0, 0, -0.05]),
        "linkage::joint B": ("joint", [0, 0, -1.05]),
    }
    assert set(doc["frames"]) == set(expected)
    for name, (kind, p) in expected.items():
        _assert_frame(doc, name, kind, p, IDQ)
    # both axes are +y of frames that are not rotated
    assert doc["joints"] == {
        "linkage::joint A": {"type": "continuous", "parent": "linkage::link A", "child": "linkage::link B",
                             "axis": [0.0, 1.0, 0.0], "axis2": None},
        "linkage::joint B": {"type": "continuous", "parent": "linkage::link B", "child": "linkage::link C",
                             "axis": [0.0, 1.0, 0.0], "axis2": None},
    }


def test_arm7_gripper_by_hand(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _frames_json(SAMPLES / "arm7_gripper.urdf", capsys)
    # Rx(-90) maps y -> -z and z -> y; Rx(90) maps y -> z and z -> -y; Rz(90) maps x -> y.
    # base_link: identity.
    # link1 = (0,0,0.1).                                      R = I
    # link2 = link1 + (0,0,0.2) = (0,0,0.3).                  R = Rx(-90), q = (-c45,0,0,c45)
    # link3 = (0,0,0.3) + Rx(-90)(0,-0.4,0) = (0,0,0.3)+(0,0,0.4) = (0,0,0.7).  R = Rx(-90)Rx(90) = I
    # link4 = (0,0,0.7) + (0,0,0.3) = (0,0,1.0).              R = Rx(90), q = (c45,0,0,c45)
    # link5 = (0,0,1.0) + Rx(90)(0,0.35,0) = (0,0,1.35).      R = Rx(90)Rx(-90) = I
    # link6 = (0,0,1.35) + (0,0,0.1) = (0,0,1.45).            R = Rz(90), q = (0,0,c45,c45)
    # link7 = (0,0,1.45) + Rz(90)(0.1,0,0.05) = (0,0.1,1.5).  R = Rz(90)
    # hand  = (0,0.1,1.5) + (0,0,0.08) = (0,0.1,1.58).        R = Rz(90)Rz(-45) = Rz(45), q = (0,0,s22.5,c22.5)
    # finger_left  = hand + Rz(45)(0,0.02,0.05) = (-0.02 c45, 0.1 + 0.02 c45, 1.63).   R = Rz(45)
    # finger_right = hand + Rz(45)(0,-0.02,0.05) = (0.02 c45, 0.1 - 0.02 c45, 1.63).   R = Rz(225)
    # tool_frame   = hand + (0,0,0.12) = (0,0.1,1.70).        R = Rz(45)
    rz45 = [0, 0, S225, C225]
    rz225 = [0, 0, math.sin(math.radians(112.5)), math.cos(math.radians(112.5))]
    links = {
        "base_link": ([0, 0, 0], IDQ),
        "link1": ([0, 0, 0.1], IDQ),
        "link2": ([0, 0, 0.3], [-C45, 0, 0, C45]),
        "link3": ([0, 0, 0.7], IDQ),
        "link4": ([0, 0, 1.0], [C45, 0, 0, C45]),
        "link5": ([0, 0, 1.35], IDQ),
        "link6": ([0, 0, 1.45], [0, 0, C45, C45]),
        "link7": ([0, 0.1, 1.5], [0, 0, C45, C45]),
        "hand": ([0, 0.1, 1.58], rz45),
        "finger_left": ([-0.02 * C45, 0.1 + 0.02 * C45, 1.63], rz45),
        "finger_right": ([0.02 * C45, 0.1 - 0.02 * C45, 1.63], rz225),
        "tool_frame": ([0, 0.1, 1.70], rz45),
    }
    child_of = {"joint1": "link1", "joint2": "link2", "joint3": "link3", "joint4": "link4", "joint5": "link5",
                "joint6": "link6", "joint7": "link7", "hand_joint": "hand", "finger_left_joint": "finger_left",
                "finger_right_joint": "finger_right", "tool_joint": "tool_frame"}
    for name, (p, q) in links.items():
        _assert_frame(doc, f"arm7_gripper::{name}", "link", p, q)
    for joint, child in child_of.items():  # URDF joint frame = child link frame
        _assert_frame(doc, f"arm7_gripper::{joint}", "joint", *links[child])
    assert len(doc["frames"]) == 1 + len(links) + len(child_of)
    # axes: joint2 z of Rx(-90) = +y; joint4 z of Rx(90) = -y; joint6 x of Rz(90) = +y;
    # fingers: y of Rz(45) = (-c45, c45, 0), y of Rz(225) = (c45, -c45, 0); fixed joints: null
    axes = {"joint1": [0, 0, 1], "joint2": [0, 1, 0], "joint3": [0, 0, 1], "joint4": [0, -1, 0],
            "joint5": [0, 0, 1], "joint6": [0, 1, 0], "joint7": [0, 0, 1],
            "finger_left_joint": [-C45, C45, 0], "finger_right_joint": [C45, -C45, 0]}
    for joint in child_of:
        entry = doc["joints"][f"arm7_gripper::{joint}"]
        if joint in axes:
            assert entry["axis"] == pytest.approx(axes[joint], abs=1e-12, rel=0), joint
        else:
            assert entry["axis"] is None and entry["type"] == "fixed"
        assert entry["axis2"] is None
    assert doc["joints"]["arm7_gripper::finger_right_joint"]["parent"] == "arm7_gripper::hand"


def test_drake_sample_axes_in_world(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _frames_json(SAMPLES / "drake_ext.urdf", capsys)
    # planar_joint origin yaw 90: universal_joint axis x -> +y; position (1,0,0)+(0,0,0.3)
    u = doc["joints"]["drake_ext::universal_joint"]
    assert u["axis"] == pytest.approx([0, 1, 0], abs=1e-12, rel=0) and u["axis2"] is None
    _assert_frame(doc, "drake_ext::universal_link", "link", [1, 0, 0.3], [0, 0, C45, C45])
    assert doc["joints"]["drake_ext::ball_joint"]["axis"] is None


def test_drake_joint_file_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # urdfdom refuses it (drake:joint children are second root links), so frames does too
    path = TEST_DIR / "fixtures" / "urdf" / "drake_joints.urdf"
    assert main(["frames", "--json", str(path)]) != 0
    assert "URDF_MULTIPLE_ROOTS" in capsys.readouterr().err


def _sdf_like_model() -> Model:
    """Model as the SDFormat reader builds it: world pose, child_offset, explicit frames, nested model.

    robot at X_world_root = translation (10, 0, 0) with yaw 90 (x -> y, y -> -x).
    base: root link at (0,0,1) in the root frame.  arm: child of joint j with origin X_base_J =
    (1,0,0) and child_offset X_JC = (0,0,0.5), so arm = (1,0,1.5) in root.
    frame 'tip' on arm at (0,0,0.2); frame 'marker' on WORLD (= root frame) at (0,2,0);
    nested model 'inner' attached to arm at (0.1,0,0); its frame 'inner::f' is attached to arm at
    (0,0,0.3) (readers resolve frames to the link they are fixed to).
    """
    yaw90 = pose_to_transform((10, 0, 0), (0, 0, math.pi / 2))
    m = Model(name="robot", format="sdf", pose=yaw90)
    m.links["base"] = Link("base", pose_to_transform((0, 0, 1), (0, 0, 0)))
    m.links["arm"] = Link("arm", pose_to_transform((1, 0, 1.5), (0, 0, 0)))
    m.joints["j"] = Joint("j", JointType.REVOLUTE, "base", "arm", origin=pose_to_transform((1, 0, 0), (0, 0, 0)),
                          child_offset=pose_to_transform((0, 0, 0.5), (0, 0, 0)), axis=(1.0, 0.0, 0.0))
    m.frames["tip"] = Frame("tip", "arm", pose_to_transform((0, 0, 0.2), (0, 0, 0)))
    m.frames["marker"] = Frame("marker", WORLD, pose_to_transform((0, 2, 0), (0, 0, 0)))
    m.frames["inner::f"] = Frame("inner::f", "arm", pose_to_transform((0, 0, 0.3), (0, 0, 0)))
    m.models[""] = ModelFrame("", "base", pose_to_transform((0, 0, -1), (0, 0, 0)), canonical_link="base")
    m.models["inner"] = ModelFrame("inner", "arm", pose_to_transform((0.1, 0, 0), (0, 0, 0)))
    return m


def test_frames_document_for_an_sdformat_model() -> None:
    doc = frames_document(_sdf_like_model())
    q = [0, 0, C45, C45]  # everything is only rotated by the model's yaw 90
    # world = (10,0,0) + Rz(90) p_root, with Rz(90)(x, y, z) = (-y, x, z)
    _assert_frame(doc, "robot", "model", [10, 0, 0], q)
    _assert_frame(doc, "robot::base", "link", [10, 0, 1], q)
    _assert_frame(doc, "robot::arm", "link", [10, 1, 1.5], q)
    _assert_frame(doc, "robot::j", "joint", [10, 1, 1.0], q)          # arm @ inv(child_offset): (1,0,1) in root
    _assert_frame(doc, "robot::tip", "frame", [10, 1, 1.7], q)
    _assert_frame(doc, "robot::marker", "frame", [8, 0, 0], q)       # (0,2,0) in root -> (-2,0,0)
    _assert_frame(doc, "robot::inner", "model", [10, 1.1, 1.5], q)   # (1.1,0,1.5) in root
    _assert_frame(doc, "robot::inner::f", "frame", [10, 1, 1.8], q)
    assert doc["joints"]["robot::j"]["axis"] == pytest.approx([0, 1, 0], abs=1e-12, rel=0)  # x of root -> world y
    assert len(doc["frames"]) == 8


def test_frames_document_with_forward_kinematics_poses() -> None:
    m = _sdf_like_model()
    # the arm swung about the joint's x axis by 90 deg: X_root_arm = X_root_J Rx(90) X_JC
    x_root_j = m.links["base"].pose @ m.joints["j"].origin
    rx = pose_to_transform((0, 0, 0), (math.pi / 2, 0, 0))
    arm = x_root_j @ rx @ m.joints["j"].child_offset
    doc = frames_document(m, {"arm": arm})
    # in the root: J at (1,0,1); the offset (0,0,0.5) turned by Rx(90) is (0,-0.5,0): arm at (1,-0.5,1);
    # tip = arm + Rx(90)(0,0,0.2) = (1,-0.7,1). In the world (-y, x, z) + (10,0,0):
    _assert_frame(doc, "robot::arm", "link", [10.5, 1, 1], [0.5, 0.5, 0.5, 0.5])
    _assert_frame(doc, "robot::tip", "frame", [10.7, 1, 1], [0.5, 0.5, 0.5, 0.5])
    _assert_frame(doc, "robot::j", "joint", [10, 1, 1], [0.5, 0.5, 0.5, 0.5])
    _assert_frame(doc, "robot::base", "link", [10, 0, 1], [0, 0, C45, C45])


def test_world_models_are_not_prefixed() -> None:
    w = Model(name="w", format="sdf", is_world=True)
    w.links["r1::base"] = Link("r1::base", pose_to_transform((1, 2, 3), (0, 0, 0)))
    w.models["r1"] = ModelFrame("r1", WORLD, pose_to_transform((1, 2, 3), (0, 0, 0)))
    doc = frames_document(w)
    assert set(doc["frames"]) == {"r1", "r1::base"}
    _assert_frame(doc, "r1", "model", [1, 2, 3], IDQ)


def test_readable_tree(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frames", str(SAMPLES / "double_pendulum.urdf")]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "linkage (urdf model)"
    assert "joint joint B (continuous axis [0 1 0])  xyz [0 0 -1.05]" in out
    tree = format_frames_tree(_sdf_like_model())
    assert "frame tip" in tree and "frame marker" in tree and "model inner" in tree


def test_frames_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["frames", str(tmp_path / "missing.urdf"), "--json"]) == 2
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="b"><link name="a"/><link name="c"/></robot>')
    assert main(["frames", str(bad)]) == 1
    assert "[URDF_MULTIPLE_ROOTS]" in capsys.readouterr().err


def test_unknown_link_pose_is_a_model_error() -> None:
    from robot_state_format.errors import ModelError

    model = read_urdf('<robot name="r"><link name="a"/></robot>')
    with pytest.raises(ModelError):
        frames_document(model, {"nope": np.eye(4)})


def test_frames_of_a_xacro_with_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "arm.urdf.xacro"
    path.write_text('<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:arg name="h" default="1"/>'
                    '<link name="a"/><link name="b"/><joint name="j" type="fixed"><parent link="a"/>'
                    '<child link="b"/><origin xyz="0 0 $(arg h)"/></joint></robot>')
    assert main(["frames", str(path), "--json", "--xacro-arg", "h:=2.5"]) == 0
    doc = json.loads(capsys.readouterr().out)
    _assert_frame(doc, "x::b", "link", [0, 0, 2.5], IDQ)


def test_urdf_link_named_world_is_an_ordinary_link() -> None:
    model = read_urdf('<robot name="r"><link name="world"/><link name="base"/><joint name="fix" type="fixed">'
                      '<parent link="world"/><child link="base"/><origin xyz="0 0 1"/></joint></robot>')
    doc = frames_document(model)
    assert doc["joints"]["r::fix"]["parent"] == "r::world"
    _assert_frame(doc, "r::world", "link", [0, 0, 0], IDQ)
    _assert_frame(doc, "r::base", "link", [0, 0, 1], IDQ)
    tree = format_frames_tree(model)
    assert tree.count("link base") == 1 and "\n  world\n" not in tree


MIMIC_OFFSET_URDF = """<robot name="m">
  <link name="base"/><link name="a"/><link name="b"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="1 0 0" rpy="0 0 0.2"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/>
    <mimic joint="j1" multiplier="2" offset="0.1"/></joint>
</robot>
"""


def test_mimic_offset_moves_the_follower_at_the_zero_configuration(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """j1 = 0 puts the follower j2 at 2 * 0 + 0.1 = 0.1 rad about z: link b sits at (1, 0, 0) with yaw
    0.2 (its origin) + 0.1 = 0.3, quaternion (0, 0, sin 0.15, cos 0.15); ``fk`` with no positions and
    ``frames`` give that one answer, in the JSON and in the tree."""
    path = tmp_path / "mimic.urdf"
    path.write_text(MIMIC_OFFSET_URDF)
    doc = _frames_json(path, capsys)
    want_q = [0.0, 0.0, math.sin(0.15), math.cos(0.15)]
    _assert_frame(doc, "m::b", "link", [1, 0, 0], want_q)
    _assert_frame(doc, "m::j2", "joint", [1, 0, 0], want_q)
    _assert_frame(doc, "m::a", "link", [0, 0, 0], IDQ)
    assert main(["fk", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["frames"] == doc["frames"]
    assert main(["frames", str(path)]) == 0
    assert f"link b  xyz [1 0 0] quat [0 0 {math.sin(0.15):.6g} {math.cos(0.15):.6g}]" in capsys.readouterr().out
