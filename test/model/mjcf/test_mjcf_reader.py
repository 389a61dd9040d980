"""The MJCF reader against MuJoCo itself: every body, site and joint anchor at random configurations
(``mj_kinematics``), on Gymnasium's and dm_control's assets and on hand-written files exercising each
rule (orientation forms, eulerseq, several joints in a body, ref, frames, defaults, includes, mimic),
and MuJoCo's refusals as ours."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from repo_paths import REPO_ROOT

from robot_state_format.errors import ModelError
from robot_state_format.model.detect import detect_format
from robot_state_format.model.loader import load_model, load_model_file
from robot_state_format.model.mjcf import read_mjcf
from robot_state_format.model.types import JointType

ROOT = REPO_ROOT
sys.path.insert(0, str(ROOT / "conformance"))

mujoco = pytest.importorskip("mujoco", reason="mujoco (requirements/test.txt) is the reference of MJCF poses")
import mjcf_ref  # noqa: E402

SAMPLE = ROOT / "robot_state_format" / "samples" / "arm2_site.xml"
ASSETS = mjcf_ref.asset_files()


def _agree(path: Path, configs: int = 6) -> tuple[int, float, str]:
    model = load_model_file(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    return mjcf_ref.pose_errors(model, m, configs, seed=3)


@pytest.mark.skipif(not ASSETS, reason="gymnasium / dm_control not installed (requirements/test.txt)")
@pytest.mark.parametrize("path", ASSETS, ids=lambda p: f"{p.parent.parent.name}-{p.name}")
def test_assets_match_mujoco(path: Path) -> None:
    count, worst, where = _agree(path)
    m = mujoco.MjModel.from_xml_path(str(path))
    assert count >= 6 * (m.nbody - 1 + m.nsite)  # lqr.xml: a template without bodies (MuJoCo loads it too)
    assert worst <= 1e-9, (worst, where)


def _write(tmp_path: Path, text: str, name: str = "m.xml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


RULES = """<mujoco model="rules">
  <compiler angle="{angle}" eulerseq="{seq}"/>
  <default>
    <joint axis="0 1 0"/>
    <default class="outer"><joint range="-30 45" axis="1 1 0"/>
      <default class="inner"><site pos="0.1 0 0"/></default>
    </default>
  </default>
  <worldbody>
    <site name="w" pos="1 2 3" euler="10 20 30"/>
    <body name="a" pos="0.1 0.2 0.3" quat="2 0.4 -0.6 1">
      <joint name="a1" type="slide" axis="0 0 1" ref="0.2"/>
      <joint name="a2" pos="0.1 0 0.05" ref="15"/>
      <joint name="a3" class="outer" pos="0 0.2 0"/>
      <site name="sa" xyaxes="1 0.2 0 0.3 1 0.1"/>
      <body name="b" axisangle="1 2 3 40" childclass="outer" pos="0.3 0 0">
        <joint name="b1" type="ball" pos="0 0 0.1" range="0 60"/>
        <frame name="f" pos="0.1 0.1 0" euler="5 -10 25" childclass="inner">
          <site name="sf"/>
          <body name="c" zaxis="0.3 -0.2 -1">
            <joint name="c1" pos="0.05 0 0"/>
            <joint name="c2" type="slide" axis="1 0 0"/>
            <site name="sc" zaxis="0 0 -1"/>
          </body>
        </frame>
        <body zaxis="0 0 -1"><joint/><site/></body>
      </body>
    </body>
    <body name="free" pos="1 1 1" euler="30 0 0"><freejoint name="root"/>
      <body name="g" xyaxes="0 1 0 -1 0 0"><joint name="g1" axis="0 0 1"/></body>
    </body>
  </worldbody>
  <equality><joint joint1="g1" joint2="a2" polycoef="0.1 -2 0 0 0"/></equality>
</mujoco>
"""


@pytest.mark.parametrize("angle,seq", [("degree", "xyz"), ("radian", "XYZ"), ("degree", "zYx"), ("radian", "xYz")])
def test_rules_match_mujoco(tmp_path: Path, angle: str, seq: str) -> None:
    # a geom in every body: MuJoCo refuses a moving body without mass
    path = _write(tmp_path, re.sub(r"(<body[^>]*>)", r'\1<geom size="0.05"/>', RULES.format(angle=angle, seq=seq)))
    count, worst, where = _agree(path, configs=8)
    assert worst <= 1e-9, (worst, where)
    assert count > 8 * 10
    model = load_model_file(path)
    # several joints in one body: a chain through virtual links named body/joint, the body last
    assert model.joints["a1"].child == "a/a1" and model.joints["a2"].child == "a/a2"
    assert model.joints["a3"].child == "a" and model.joints["a3"].parent == "a/a2"
    assert model.joints["root"].type is JointType.FLOATING and model.joints["root"].parent == "world"
    assert model.joints["b1"].type is JointType.BALL
    assert model.joints["a3"].type is JointType.REVOLUTE  # range from its class, autolimits
    scale = np.pi / 180 if angle == "degree" else 1.0
    assert model.joints["a3"].limits is not None
    assert model.joints["a3"].limits.lower == pytest.approx(-30 * scale, rel=0, abs=1e-12)
    assert model.joints["a2"].type is JointType.CONTINUOUS
    assert {"w", "sa", "sf", "sc", "f"} <= set(model.frames)
    mim = model.joints["g1"].mimic[0]  # g1 - 0 = 0.1 - 2 (a2 - ref(a2)), values are qpos
    assert mim.joint == "a2" and mim.multiplier == -2.0
    assert mim.offset == pytest.approx(0.1 + 2 * 15 * scale, rel=0, abs=1e-12)
    # unnamed elements are named by MuJoCo's ids
    m = mujoco.MjModel.from_xml_path(str(path))
    assert f"body{m.nbody - 3}" in model.links
    assert any(n.startswith("joint") for n in model.joints)


def test_defaults_include_and_meshes(tmp_path: Path) -> None:
    _write(tmp_path, """<mujoco><body name="inc" pos="0 0 1"><joint name="ij" axis="1 0 0"/>
      <geom type="mesh" mesh="part"/></body></mujoco>""", "part.xml")
    path = _write(tmp_path, """<mujoco model="incl"><compiler meshdir="meshes" angle="radian"/>
      <asset><mesh file="part.stl"/></asset>
      <worldbody><include file="part.xml"/></worldbody></mujoco>""")
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "part.stl").write_bytes(b"")  # there (MuJoCo refuses a missing one), never read
    model = load_model_file(path)
    assert model.joints["ij"].parent == "world"
    geo = model.links["inc"].visuals[0].geometry
    assert geo.kind == "mesh" and geo.filename == str(tmp_path / "meshes" / "part.stl")


REFUSED = {
    "multiple orientations": '<body quat="1 0 0 0" euler="0 0 1"><geom size="1"/></body>',
    "nested free joint": '<body><body><freejoint/><geom size="1"/></body><geom size="1"/></body>',
    "unknown attribute": '<body foo="1"><geom size="1"/></body>',
    "free and hinge": '<body><joint type="free"/><joint/><geom size="1"/></body>',
    "duplicate body": '<body name="a"><geom size="1"/></body><body name="a"><geom size="1"/></body>',
    "duplicate geom": '<body><geom name="g" size="1"/><geom name="g" size="1"/></body>',
    "unknown class": '<body><joint class="nope"/><geom size="1"/></body>',
    "unknown element": '<body><thing/><geom size="1"/></body>',
    "unknown joint type": '<body><joint type="spin"/><geom size="1"/></body>',
    "mocap below a body": '<body><geom size="1"/><body mocap="true"><geom size="1"/></body></body>',
    "fromto on a sphere": '<body><geom type="sphere" size="1" fromto="0 0 0 1 0 0"/></body>',
    "sphere without size": '<body><geom/></body>',
    "inertial without pos": '<body><joint/><inertial mass="1" diaginertia="1 1 1"/></body>',
    "keyframe of wrong size": '<body><joint/><geom size="1"/></body></worldbody><keyframe><key qpos="1 2"/>'
                              '</keyframe><worldbody>',
    "rgba of three": '<body><geom size="1" rgba="1 0 0"/></body>',
    "friction of four": '<body><geom size="1" friction="1 1 1 1"/></body>',
    "plane without spacing": '<geom type="plane" size="1 1"/>',
    "box of two sizes": '<body><geom type="box" size="1 1"/></body>',
    "fromto of one point": '<body><geom type="capsule" size="0.1" fromto="1 0 0 1 0 0"/></body>',
    "ball then hinge": '<body><joint type="ball"/><joint/><geom size="1"/></body>',
    "ball range from -1": '<body><joint type="ball" range="-1 1"/><geom size="1"/></body>',
    "sensor of no site": '<body><geom size="1"/></body></worldbody><sensor><touch site="nope"/></sensor><worldbody>',
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_mujoco_refusals_are_ours(name: str) -> None:
    text = f"<mujoco><worldbody>{REFUSED[name]}</worldbody></mujoco>"
    with pytest.raises(ValueError):
        mujoco.MjModel.from_xml_string(text)
    with pytest.raises(ModelError) as exc:
        read_mjcf(text)
    assert all(d.code.startswith(("MJCF_", "XML_")) for d in exc.value.diagnostics)
    assert exc.value.diagnostics[0].line == 1


def test_compiler_refusals(tmp_path: Path) -> None:
    for text, code in (
        ('<mujoco><compiler coordinate="global"/><worldbody/></mujoco>', "MJCF_GLOBAL_COORDINATES"),
        ('<mujoco><compiler autolimits="false"/><worldbody><body><joint range="0 1"/><geom size="1"/></body>'
         '</worldbody></mujoco>', "MJCF_LIMITED"),
        ('<mujoco><worldbody><body><joint name="j"/><geom size="1"/></body></worldbody>'
         '<actuator><motor joint="nope"/></actuator></mujoco>', "MJCF_UNKNOWN_JOINT"),
    ):
        with pytest.raises(ValueError):
            mujoco.MjModel.from_xml_string(text)
        with pytest.raises(ModelError) as exc:
            read_mjcf(text, file="x.xml")
        assert exc.value.code == code


def test_detection_and_left_out_sections() -> None:
    text = SAMPLE.read_bytes()
    assert detect_format(text) == "mjcf"
    model = load_model(text, file=str(SAMPLE))
    assert model.format == "mjcf" and model.name == "arm2"
    assert [w.code for w in model.warnings] == ["MJCF_NOT_READ"]
    assert "<actuator>" in model.warnings[0].message
    empty = read_mjcf("<mujoco/>")  # MuJoCo loads it: a world without bodies
    mujoco.MjModel.from_xml_string("<mujoco/>")
    assert not empty.links and not empty.joints


def test_orientation_precedence_in_defaults(tmp_path: Path) -> None:
    """A class's orientation replaces the one it inherits; an element's own one wins over its class's;
    a ``fromto`` (own or from the class) wins over any orientation."""
    text = """<mujoco><default>
      <site quat="0.7 0.1 -0.3 0.2"/>
      <default class="z"><site zaxis="0.2 -0.4 0.9"/>
        <default class="e"><site euler="10 20 -30"/></default></default>
      <default class="ft"><site type="capsule" fromto="0 0 0 0.3 -0.1 0.2"/></default>
    </default><worldbody><body name="b" pos="0 0 1"><joint/><geom size="0.1"/>
      <site name="main"/><site name="z" class="z"/><site name="e" class="e"/>
      <site name="own" class="e" axisangle="1 1 0 50"/><site name="ft" class="ft" quat="0 1 0 0"/>
    </body></worldbody></mujoco>"""
    count, worst, where = _agree(_write(tmp_path, text), configs=3)
    assert count == 3 * (1 + 5) + 3 and worst <= 1e-9, (worst, where)


def test_a_model_without_a_name_is_named_like_its_file_or_mujoco_for_a_text(tmp_path: Path) -> None:
    text = '<mujoco><worldbody><body name="b"><joint name="j"/><geom size="0.1"/></body></worldbody></mujoco>'
    (tmp_path / "two_arms.xml").write_text(text)
    assert load_model_file(tmp_path / "two_arms.xml").name == "two_arms"
    assert read_mjcf(text).name == "mujoco"
    # a description received on a topic or parameter is a text too, whatever it is called
    assert read_mjcf(text, file="<robot_description>").name == "mujoco"
    assert load_model(text, file="<robot_description>").name == "mujoco"
