"""SDFormat 1.12 <state> export/import, and the ``state`` command line."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from lxml import etree
from repo_paths import REPO_ROOT, TEST_DIR
from test_usdf_build import POSITIONS, S45, bot

from robot_state_format.cli import main
from robot_state_format.spatial import pose6_to_transform
from robot_state_format.usdf.build import state_from_model
from robot_state_format.usdf.export.sdf_state import sdf_to_state, state_to_sdf
from robot_state_format.usdf.reader import read_world_state, read_world_state_file
from robot_state_format.usdf.types import JointState, ModelState, WorldState
from robot_state_format.usdf.validate import validate_schema
from robot_state_format.usdf.writer import write_world_state


@pytest.fixture(autouse=True)
def _run_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MuJoCo writes MUJOCO_LOG.TXT into the working directory on warnings: keep it out of the repo."""
    monkeypatch.chdir(tmp_path)

FIX = TEST_DIR / "fixtures" / "usdf"
SAMPLES = REPO_ROOT / "robot_state_format" / "samples"


def _pose_close(a: tuple[float, ...] | None, b: tuple[float, ...] | None, tol: float = 1e-12) -> bool:
    assert a is not None and b is not None
    return bool(np.allclose(pose6_to_transform(a), pose6_to_transform(b), atol=tol, rtol=0))


def test_sdf_state_structure_and_hand_derived_model_pose() -> None:
    text, warnings = state_to_sdf(read_world_state_file(FIX / "valid" / "full.xml").state)
    root = etree.fromstring(text.encode())
    assert root.tag == "sdf" and root.get("version") == "1.12"
    st = root.find("world/state")
    assert st is not None and st.get("world_name") == "lab"
    assert st.findtext("sim_time") == "1700000000 250000000"
    assert st.findtext("iterations") == "0"
    pr2 = st.find("model_state[@name='pr2']")
    assert pr2 is not None
    # pr2 sits at odom: (1.5, -2, 0) yaw 90 deg, so its SDFormat (world) pose is that
    pose = tuple(float(v) for v in pr2.findtext("pose").split())  # type: ignore[union-attr]
    assert _pose_close(pose, (1.5, -2, 0, 0, 0, math.pi / 2))
    angles = pr2.findall("joint_state[@name='head_ball']/angle")
    assert [a.get("axis") for a in angles] == ["0", "1", "2", "3"]
    link = pr2.find("link_state[@name='r_shoulder_pan_link']")
    assert link is not None and link.find("pose").get("relative_to") == "__model__"  # type: ignore[union-attr]
    # the wrench (0 0 -9.81 | 0 0.5 0) in the link frame, rotated to the world: link yaw = 90 deg + 0.3
    yaw = math.pi / 2 + 0.3
    force = [float(v) for v in link.findtext("linear_wrench").split()]  # type: ignore[union-attr]
    torque = [float(v) for v in link.findtext("angular_wrench").split()]  # type: ignore[union-attr]
    assert force == pytest.approx([0, 0, -9.81], abs=1e-12, rel=0)
    assert torque == pytest.approx([-0.5 * math.sin(yaw), 0.5 * math.cos(yaw), 0], abs=1e-12, rel=0)
    codes = {w.code for w in warnings}
    assert {"USDF_SDF_FRAMES_FOLDED", "USDF_SDF_JOINT_RATES_DROPPED", "USDF_SDF_VELOCITY_DROPPED"} <= codes


def test_sdf_state_round_trip() -> None:
    state = state_from_model(bot(), POSITIONS, {"hinge": 1.0, "slider": -0.5}, stamp=(3, 4))
    state.model_states[0].pose = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)
    state.model_states[0].link_states[1].wrench = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    text, _ = state_to_sdf(state)
    back = sdf_to_state(text).state
    assert back.name == state.name and back.stamp == state.stamp
    (a,), (b,) = state.model_states, back.model_states
    assert _pose_close(a.pose, b.pose)
    assert [j.positions for j in a.joint_states] == [j.positions for j in b.joint_states]  # exact
    for la, lb in zip(a.link_states, b.link_states, strict=True):
        assert la.name == lb.name
        assert la.pose == lb.pose  # model-relative, written verbatim
        assert np.allclose(la.twist, lb.twist, atol=1e-12, rtol=0)  # type: ignore[arg-type]
        if la.wrench is not None:
            assert np.allclose(la.wrench, lb.wrench, atol=1e-12, rtol=0)  # type: ignore[arg-type]
    assert validate_schema(write_world_state(back)) == []


def test_sdf_import_world_relative_link_pose() -> None:
    # Gazebo-classic style: link pose without relative_to is a world pose
    text = """<sdf version="1.12"><world name="w"><state world_name="w">
      <sim_time>1 2</sim_time><iterations>5</iterations>
      <model_state name="m"><pose>1 0 0 0 0 1.5707963267948966</pose>
        <link_state name="l"><pose>1 1 0 0 0 1.5707963267948966</pose></link_state>
      </model_state></state></world></sdf>"""
    s = sdf_to_state(text).state
    assert _pose_close(s.model_states[0].link_states[0].pose, (1, 0, 0, 0, 0, 0))  # 1 m along the model's x


def test_sdf_import_refuses_missing_state_and_bad_numbers() -> None:
    from robot_state_format.errors import UsdfError

    with pytest.raises(UsdfError) as exc:
        sdf_to_state("<sdf version='1.12'><world name='w'/></sdf>")
    assert exc.value.code == "USDF_SDF_NO_STATE"
    with pytest.raises(UsdfError) as exc:
        sdf_to_state("<state world_name='w'><model_state name='m'><pose>1 2 x</pose></model_state></state>")
    assert exc.value.code == "USDF_SDF_BAD_VALUE" and exc.value.diagnostics[0].line == 1


# --------------------------------------------------------------------------------------------
# command line


def test_cli_validate_exit_codes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["state", "validate", str(FIX / "valid" / "full.xml"), "--schema"]) == 0
    assert "valid world_state 'lab'" in capsys.readouterr().out
    bad = FIX / "invalid" / "proposal_unrepaired.xml"
    assert main(["state", "validate", str(bad)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{bad}:6: error: [USDF_XML_SYNTAX]")
    assert err[1].startswith(f"{bad}:9: error: [USDF_XML_SYNTAX]")
    assert main(["state", "validate", str(tmp_path / "missing.usdf")]) == 2
    # the proposal's own example, its two XML typos mended: valid, with warnings for its spellings
    assert main(["state", "validate", str(FIX / "valid" / "proposal_example.xml")]) == 0
    assert "USDF_ROOT_SPELLING" in capsys.readouterr().err
    assert main(["state", "validate", str(FIX / "valid" / "proposal_example.xml"), "--lenient"]) == 0
    assert main(["state", "validate"]) == 2  # usage


def test_cli_from_model_validate_against_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    model = SAMPLES / "double_pendulum.urdf"
    out = tmp_path / "s.usdf"
    assert main(["state", "from-model", str(model), "--positions", '{"joint A": 0.5, "joint B": -0.25}',
                 "--velocities", '{"joint A": 1.0}', "--stamp", "12.000000500", "-o", str(out)]) == 0
    s = read_world_state_file(out).state
    assert s.stamp == (12, 500)
    assert s.model_states[0].joint("joint B").positions == (-0.25,)  # type: ignore[union-attr]
    assert main(["state", "validate", str(out), "--model", str(model), "--check-poses"]) == 0
    capsys.readouterr()
    # a state of another robot: unknown joint -> invalid (1)
    other = tmp_path / "o.usdf"
    other.write_text('<world_state name="w" version="1.0"><model_state name="linkage">'
                     '<joint_state name="elbow"><positions>1</positions></joint_state>'
                     '</model_state></world_state>')
    assert main(["state", "validate", str(other), "--model", str(model)]) == 1
    assert "[USDF_UNKNOWN_JOINT]" in capsys.readouterr().err
    # bad arguments -> usage (2)
    assert main(["state", "from-model", str(model), "--positions", "{nope"]) == 2
    assert main(["state", "from-model", str(model), "--positions", '{"no such joint": 1}']) == 1  # invalid input (README table)
    assert main(["state", "from-model", str(tmp_path / "none.urdf"), "--positions", "{}"]) == 2
    # JSON from a file
    js = tmp_path / "q.json"
    js.write_text('{"joint A": 1.5}')
    assert main(["state", "from-model", str(model), "--positions", str(js), "--compact"]) == 0
    text = capsys.readouterr().out
    assert "\n  " not in text and read_world_state(text).state.model_states[0].joint("joint A").positions == (1.5,)  # type: ignore[union-attr]


def test_cli_export_import(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    src = FIX / "valid" / "full.xml"
    sdf = tmp_path / "s.sdf"
    assert main(["state", "export", str(src), "--model", str(SAMPLES / "double_pendulum.urdf"),
                 "--to", "sdf-state", "-o", str(sdf)]) == 0
    assert main(["state", "import", str(sdf), "--from", "sdf-state", "-o", str(tmp_path / "back.usdf")]) == 0
    back = read_world_state_file(tmp_path / "back.usdf").state
    assert back.model("pr2").joint("torso_lift_joint").positions == (0.1,)  # type: ignore[union-attr]
    assert main(["state", "import", str(src), "--from", "sdf-state"]) == 1  # no <state> in a USDF file
    # the state is validated against --model first
    wrong = tmp_path / "wrong.usdf"
    wrong.write_text('<world_state name="w" version="1.0"><model_state name="linkage">'
                     '<joint_state name="joint A"><positions>1 2</positions></joint_state>'
                     '</model_state></world_state>')
    assert main(["state", "export", str(wrong), "--model", str(SAMPLES / "double_pendulum.urdf"),
                 "--to", "sdf-state"]) == 1
    assert "[USDF_DOF_MISMATCH]" in capsys.readouterr().err


def test_cli_export_mujoco_keyframe(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("mujoco", reason="the mujoco package is not installed")
    model = SAMPLES / "double_pendulum.urdf"
    state = tmp_path / "s.usdf"
    assert main(["state", "from-model", str(model), "--positions", '{"joint A": 0.5, "joint B": -0.25}',
                 "-o", str(state)]) == 0
    assert main(["state", "export", str(state), "--model", str(model), "--to", "mujoco-keyframe"]) == 0
    key = etree.fromstring(capsys.readouterr().out.encode()).find("key")
    assert key is not None
    assert [float(v) for v in key.get("qpos").split()] == [0.5, -0.25]  # type: ignore[union-attr]


def test_cli_plot_writes_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("matplotlib", reason="matplotlib is not installed")
    out = tmp_path / "s.png"
    assert main(["state", "plot", str(FIX / "valid" / "full.xml"), "-o", str(out)]) == 0
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000
    assert main(["state", "plot", str(tmp_path / "nope.usdf"), "-o", str(out)]) == 2
    capsys.readouterr()


# --------------------------------------------------------------------------------------------
# joint_state: SDFormat 1.12 axis_state / axis2_state (sdf/1.12/joint_state.sdf)


def _joint_state_world() -> WorldState:
    return WorldState(name="w", model_states=[ModelState(name="m", pose=(0.0,) * 6, joint_states=[
        JointState("hinge", (0.1 + 0.2,), (-1.25,)),           # revolute
        JointState("slide", (-0.375,), (2.5e-3,), (4.0,)),     # prismatic, with a torque
        JointState("cross", (0.3, -0.7), (1.5, -2.0)),         # universal
        JointState("spin", None, (3.0,)),                      # a velocity without a position
        JointState("neck", (0.0, 0.0, S45, S45), (0.1, 0.2, 0.3)),  # ball: angles, velocities dropped
        JointState("base", (1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0)),    # floating: angles
    ])])


def test_sdf_joint_state_axis_state_written() -> None:
    text, warnings = state_to_sdf(_joint_state_world())
    ms = etree.fromstring(text.encode()).find("world/state/model_state")
    assert ms is not None

    def axis(joint: str, tag: str, leaf: str) -> str | None:
        return ms.findtext(f"joint_state[@name='{joint}']/{tag}/{leaf}")  # type: ignore[union-attr]

    assert axis("hinge", "axis_state", "position") == "0.30000000000000004"  # repr: bit-exact
    assert axis("hinge", "axis_state", "velocity") == "-1.25"
    assert ms.find("joint_state[@name='hinge']/axis2_state") is None
    assert axis("cross", "axis2_state", "position") == "-0.7" and axis("cross", "axis2_state", "velocity") == "-2.0"
    # absent is not zero: no <position> at all for a joint without positions
    assert ms.find("joint_state[@name='spin']/axis_state/position") is None
    assert axis("spin", "axis_state", "velocity") == "3.0"
    assert ms.find("joint_state[@name='hinge']/angle") is None
    # more than 2 DOF: the deprecated angle form, USDF order
    neck = ms.findall("joint_state[@name='neck']/angle")
    assert [(a.get("axis"), float(a.text)) for a in neck] == [  # type: ignore[arg-type]
        ("0", 0.0), ("1", 0.0), ("2", S45), ("3", S45)]
    assert ms.find("joint_state[@name='neck']/axis_state") is None
    assert len(ms.findall("joint_state[@name='base']/angle")) == 7
    by_code: dict[str, list[str]] = {}
    for w in warnings:
        by_code.setdefault(w.code, []).append(w.message)
    assert sorted(m.split(": ")[0] for m in by_code["USDF_SDF_JOINT_ANGLE_DEPRECATED"]) == [
        "joint m::base", "joint m::neck"]
    dropped = sorted(by_code["USDF_SDF_JOINT_RATES_DROPPED"])
    assert len(dropped) == 2
    assert dropped[0].startswith("joint m::neck: 3 velocities") and dropped[1].startswith("joint m::slide: torques")


def test_sdf_joint_state_round_trip() -> None:
    state = _joint_state_world()
    text, _ = state_to_sdf(state)
    read = sdf_to_state(text)
    back, warnings = read.state, read.warnings
    assert warnings == []
    got = {j.name: (j.positions, j.velocities, j.torques) for j in back.model_states[0].joint_states}
    assert got == {
        "hinge": ((0.30000000000000004,), (-1.25,), None),
        "slide": ((-0.375,), (2.5e-3,), None),      # torque dropped
        "cross": ((0.3, -0.7), (1.5, -2.0), None),
        "spin": (None, (3.0,), None),               # still no position
        "neck": ((0.0, 0.0, S45, S45), None, None),  # through <angle>, exact
        "base": ((1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0), None, None),
    }


HAND_WRITTEN_112 = """<?xml version="1.0"?>
<sdf version="1.12">
  <world name="w">
    <state world_name="w">
      <model_state name="m">
        <joint_state name="elbow">
          <axis_state>
            <position degrees="true">90</position>
            <velocity degrees="true">-30</velocity>
            <acceleration>2</acceleration>
          </axis_state>
        </joint_state>
        <joint_state name="wrist">
          <axis_state><position degrees="false">0.25</position></axis_state>
          <axis2_state><position degrees="1">180</position></axis2_state>
        </joint_state>
        <joint_state name="roller">
          <axis_state><velocity>3</velocity></axis_state>
        </joint_state>
        <joint_state name="old">
          <angle axis="1">0.2</angle>
          <angle axis="0">-0.1</angle>
        </joint_state>
      </model_state>
    </state>
  </world>
</sdf>
"""


def test_sdf_import_hand_written_axis_state_degrees() -> None:
    read = sdf_to_state(HAND_WRITTEN_112, file="hand.sdf")
    state, warnings = read.state, read.warnings
    ms = state.model_states[0]
    elbow, wrist, roller, old = (ms.joint(n) for n in ("elbow", "wrist", "roller", "old"))
    assert elbow is not None and wrist is not None and roller is not None and old is not None
    assert elbow.positions == (math.pi / 2,) and elbow.velocities == (-math.pi / 6,)  # degrees -> radians
    assert wrist.positions == (0.25, math.pi) and wrist.velocities is None
    assert roller.positions is None and roller.velocities == (3.0,)  # absent, not 0
    assert old.positions == (-0.1, 0.2)  # the pre-1.12 angle form, by axis index
    assert [(w.code, w.line) for w in warnings] == [("USDF_SDF_ACCELERATION_IGNORED", 10)]
    assert validate_schema(write_world_state(state)) == []


@pytest.mark.parametrize("joint, code, line", [
    ('<joint_state name="j"><angle axis="1">0.2</angle></joint_state>', "USDF_SDF_AXIS_GAP", 3),
    ('<joint_state name="j"><axis_state><position>1</position></axis_state>\n'
     '<axis2_state><position>2</position><velocity>1</velocity></axis2_state></joint_state>', "USDF_SDF_AXIS_GAP", 3),
    ('<joint_state name="j"><axis2_state><position>2</position></axis2_state></joint_state>', "USDF_SDF_AXIS_GAP", 3),
    ('<joint_state name="j">\n<axis_state><position degrees="yes">2</position></axis_state></joint_state>',
     "USDF_SDF_BAD_VALUE", 4),
    ('<joint_state name="j">\n<angle axis="x">1</angle></joint_state>', "USDF_SDF_BAD_VALUE", 4),
])
def test_sdf_import_refuses_axis_gaps_and_bad_attributes(joint: str, code: str, line: int) -> None:
    from robot_state_format.errors import UsdfError

    text = f'<sdf version="1.12"><world name="w"><state world_name="w">\n<model_state name="m">\n{joint}\n' \
           "</model_state></state></world></sdf>"
    with pytest.raises(UsdfError) as exc:
        sdf_to_state(text, file="bad.sdf")
    assert exc.value.code == code
    assert exc.value.diagnostics[0].file == "bad.sdf" and exc.value.diagnostics[0].line == line


def test_sdf_import_world_link_pose_without_model_pose_warns() -> None:
    text = """<sdf version="1.12"><world name="w"><state world_name="w">
      <model_state name="m">
        <link_state name="l"><pose>1 1 0 0 0 0</pose><linear_velocity>1 0 0</linear_velocity></link_state>
        <link_state name="k"><pose relative_to="__model__">0 0 2 0 0 0</pose></link_state>
      </model_state></state></world></sdf>"""
    read = sdf_to_state(text)
    state, warnings = read.state, read.warnings
    ms = state.model_states[0]
    assert ms.link("l").pose is None and ms.link("l").twist is None  # type: ignore[union-attr]
    assert ms.link("k").pose == (0.0, 0.0, 2.0, 0.0, 0.0, 0.0)  # type: ignore[union-attr]
    assert [(w.code, w.line, w.element) for w in warnings] == [
        ("USDF_SDF_LINK_POSE_DROPPED", 3, "pose"), ("USDF_SDF_VELOCITY_DROPPED", 3, "linear_velocity")]
    assert "model_state 'm' has no world pose" in warnings[0].message


def test_cli_from_model_warns_about_joints_left_out(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    model = SAMPLES / "double_pendulum.urdf"
    out = tmp_path / "s.usdf"
    assert main(["state", "from-model", str(model), "--positions", '{"joint A": 0.5}',
                 "--velocities", '{"joint B": 1.0}', "-o", str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"{model}: warning: [USDF_JOINT_DEFAULTED] 1 joint(s) not in --positions, written as 0 (identity "
        "quaternion for ball and floating joints): joint B",
        f"{model}: warning: [USDF_JOINT_DEFAULTED] 1 joint(s) not in --velocities, written as 0: joint A"]
    ms = read_world_state_file(out).state.model_states[0]  # the output is unchanged: zeros are written
    assert ms.joint("joint B").positions == (0.0,) and ms.joint("joint A").velocities == (0.0,)  # type: ignore[union-attr]
    # every joint given: no warning
    assert main(["state", "from-model", str(model), "--positions", '{"joint A": 0.5, "joint B": -0.25}',
                 "--velocities", '{"joint A": 1.0, "joint B": 2.0}', "-o", str(out)]) == 0
    assert capsys.readouterr().err == ""


def test_cli_import_prints_sdf_warnings(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    sdf = tmp_path / "hand.sdf"
    sdf.write_text(HAND_WRITTEN_112)
    assert main(["state", "import", str(sdf), "--from", "sdf-state", "-o", str(tmp_path / "back.usdf")]) == 0
    assert capsys.readouterr().err.startswith(f"{sdf}:10: warning: [USDF_SDF_ACCELERATION_IGNORED]")
    assert read_world_state_file(tmp_path / "back.usdf").state.model("m").joint("elbow").positions == (math.pi / 2,)  # type: ignore[union-attr]
