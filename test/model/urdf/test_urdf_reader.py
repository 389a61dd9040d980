"""URDF reader: every element of the XML reference, Drake's extensions, and the tolerances
real files need (XML version 0.0, trailing NUL, misplaced declaration)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import reference_kinematics as ref
from repo_paths import REPO_ROOT, TEST_DIR

from robot_state_format.errors import ModelError, Severity
from robot_state_format.model.loader import load_model, load_model_file
from robot_state_format.model.types import JointType
from robot_state_format.model.urdf.reader import read_urdf

SAMPLES = REPO_ROOT / "robot_state_format" / "samples"
FIXTURES = TEST_DIR / "fixtures" / "urdf"

FULL = """<?xml version="1.0"?>
<robot name="full">
  <material name="red"><color rgba="1 0 0 1"/></material>
  <material name="tex"><texture filename="package://pkg/t.png"/></material>
  <link name="base">
    <inertial>
      <origin xyz="0.1 0.2 0.3" rpy="0 0 1.5707963267948966"/>
      <mass value="2.5"/>
      <inertia ixx="1" ixy="0.1" ixz="0.2" iyy="2" iyz="0.3" izz="3"/>
    </inertial>
    <visual name="v1">
      <origin xyz="1 2 3"/>
      <geometry><box size="0.1 0.2 0.3"/></geometry>
      <material name="red"/>
    </visual>
    <visual>
      <geometry><mesh filename="package://pkg/m.stl" scale="2 3 4"/></geometry>
      <material name="inline"><color rgba="0 0 1 0.5"/></material>
    </visual>
    <visual>
      <geometry><sphere radius="0.5"/></geometry>
      <material name="tex"/>
    </visual>
    <collision name="c1">
      <geometry><cylinder radius="0.2" length="0.7"/></geometry>
    </collision>
  </link>
  <link name="l1"/>
  <link name="l2"/>
  <link name="l3"/>
  <link name="l4"/>
  <link name="l5"/>
  <link name="l6"/>
  <joint name="rev" type="revolute">
    <origin xyz="0 0 1" rpy="0.1 0.2 0.3"/>
    <parent link="base"/>
    <child link="l1"/>
    <axis xyz="0 3 4"/>
    <calibration rising="0.25" falling="-0.25"/>
    <dynamics damping="0.7" friction="0.2"/>
    <limit lower="-1.5" upper="2" effort="30" velocity="4"/>
    <safety_controller soft_lower_limit="-1.4" soft_upper_limit="1.9" k_position="15" k_velocity="20"/>
  </joint>
  <joint name="cont" type="continuous">
    <parent link="l1"/><child link="l2"/>
    <limit effort="5" velocity="6"/>
  </joint>
  <joint name="pri" type="prismatic">
    <parent link="l2"/><child link="l3"/>
    <axis xyz="0 0 -2"/>
    <limit lower="0" upper="0.3" effort="100" velocity="0.5"/>
    <mimic joint="rev" multiplier="-0.5" offset="0.1"/>
  </joint>
  <joint name="fix" type="fixed"><parent link="l3"/><child link="l4"/><axis xyz="0 0 1"/></joint>
  <joint name="flo" type="floating"><parent link="l4"/><child link="l5"/></joint>
  <joint name="pla" type="planar"><parent link="l5"/><child link="l6"/><axis xyz="0 0 1"/></joint>
  <gazebo reference="base"><mu1>0.5</mu1></gazebo>
  <transmission name="t"><type>x</type></transmission>
  <ros2_control name="rc" type="system"><hardware/></ros2_control>
</robot>
"""


@pytest.fixture(scope="module")
def full():
    return read_urdf(FULL, file="full.urdf")


def test_links_inertial_and_shapes(full) -> None:
    base = full.links["base"]
    assert full.name == "full" and full.format == "urdf" and full.version is None
    assert base.source.line == 5 and base.source.file == "full.urdf"
    i = base.inertial
    assert i.mass == 2.5 and i.inertia == (1.0, 0.1, 0.2, 2.0, 0.3, 3.0)
    assert np.allclose(i.origin[:3, 3], [0.1, 0.2, 0.3], rtol=0, atol=1e-12)
    assert np.allclose(i.origin[:3, :3], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], atol=1e-12, rtol=0)  # yaw 90 deg
    v1, v2, v3 = base.visuals
    assert v1.name == "v1" and v1.geometry.kind == "box" and v1.geometry.size == (0.1, 0.2, 0.3)
    assert np.allclose(v1.origin[:3, 3], [1, 2, 3], rtol=0, atol=1e-12) and v1.source.line == 11
    assert v1.material.name == "red" and v1.material.rgba == (1.0, 0.0, 0.0, 1.0)
    assert v2.geometry.kind == "mesh" and v2.geometry.filename == "package://pkg/m.stl"
    assert v2.geometry.scale == (2.0, 3.0, 4.0)
    assert v2.material.rgba == (0.0, 0.0, 1.0, 0.5)
    assert v3.geometry.radius == 0.5 and v3.material.texture == "package://pkg/t.png"
    (c1,) = base.collisions
    assert c1.name == "c1" and c1.geometry.kind == "cylinder" and (c1.geometry.radius, c1.geometry.length) == (0.2, 0.7)
    assert set(full.materials) == {"red", "tex"}
    assert full.warnings == []


def test_joint_elements(full) -> None:
    rev = full.joints["rev"]
    assert rev.type is JointType.REVOLUTE and (rev.parent, rev.child) == ("base", "l1")
    assert rev.axis == pytest.approx((0.0, 0.6, 0.8), rel=0, abs=1e-12)  # (0 3 4) normalised
    expect = np.eye(4)
    expect[:3, :3] = ref.rpy(0.1, 0.2, 0.3)
    expect[:3, 3] = [0, 0, 1]
    assert np.allclose(rev.origin, expect, rtol=0, atol=1e-12)
    assert np.array_equal(rev.child_offset, np.eye(4))
    assert (rev.limits.lower, rev.limits.upper, rev.limits.effort, rev.limits.velocity) == (-1.5, 2.0, 30.0, 4.0)
    assert (rev.dynamics.damping, rev.dynamics.friction) == (0.7, 0.2)
    assert (rev.calibration.rising, rev.calibration.falling) == (0.25, -0.25)
    sc = rev.safety_controller
    assert (sc.soft_lower_limit, sc.soft_upper_limit, sc.k_position, sc.k_velocity) == (-1.4, 1.9, 15.0, 20.0)
    cont = full.joints["cont"]
    assert cont.axis == (1.0, 0.0, 0.0)  # the default axis
    assert cont.limits.lower is None and cont.limits.upper is None and cont.limits.effort == 5.0
    pri = full.joints["pri"]
    assert pri.axis == (0.0, 0.0, -1.0)
    assert [(m.joint, m.multiplier, m.offset) for m in pri.mimic] == [("rev", -0.5, 0.1)]
    assert full.joints["fix"].axis is None and full.joints["flo"].axis is None
    assert full.joints["flo"].type is JointType.FLOATING
    pla = full.joints["pla"]
    assert pla.type is JointType.PLANAR and pla.axis == (0.0, 0.0, 1.0)  # the plane normal


def test_link_pose_is_zero_configuration_in_root(full) -> None:
    # base at identity; l1 = origin of rev; l2 = l1 (cont has no origin)
    assert np.array_equal(full.links["base"].pose, np.eye(4))
    assert np.allclose(full.links["l1"].pose, full.joints["rev"].origin, rtol=0, atol=1e-12)
    assert np.allclose(full.links["l6"].pose, full.joints["rev"].origin, rtol=0, atol=1e-12)


def test_unknown_elements_are_kept_as_extensions(full) -> None:
    tags = [(e.tag, e.owner) for e in full.extensions]
    assert ("gazebo", "base") in tags and ("transmission", None) in tags and ("ros2_control", None) in tags
    gz = next(e for e in full.extensions if e.tag == "gazebo")
    assert "<mu1>0.5</mu1>" in gz.xml


def test_drake_extensions_sample() -> None:
    """The Drake extensions urdfdom loads (check_urdf exits 0 on the sample): geometry and data."""
    model = load_model_file(SAMPLES / "drake_ext.urdf")
    j = model.joints
    assert j["ball_joint"].type is JointType.FLOATING and j["planar_joint"].type is JointType.PLANAR
    assert j["planar_joint"].dynamics.damping == 0.1
    geo = {name: [s.geometry for s in link.visuals + link.collisions] for name, link in model.links.items()}
    assert geo["ball_link"][0].kind == "ellipsoid" and geo["ball_link"][0].radii == (0.1, 0.2, 0.3)
    assert (geo["planar_link"][0].kind, geo["planar_link"][0].radius, geo["planar_link"][0].length) == \
        ("capsule", 0.05, 0.3)
    assert (geo["screw_link"][0].kind, geo["screw_link"][0].radius) == ("capsule", 0.02)
    tags = {e.tag for e in model.extensions}
    assert tags == {"drake:proximity_properties", "drake:collision_filter_group", "drake:linear_bushing_rpy",
                    "drake:ball_constraint"}
    prox = next(e for e in model.extensions if e.tag == "drake:proximity_properties")
    assert prox.owner == "base" and "mu_dynamic" in prox.xml
    # urdfdom loads it; libsdformat refuses it (conformance/sdf_ref: "A model must have at least one link"):
    # the root link has no mass, so Gazebo's URDF conversion drops it and everything below it
    assert [(d.code, d.severity, d.line, d.element) for d in model.warnings] == [
        ("SDF_URDF_NO_LINK", Severity.WARNING, 8, "link[name=base]")]
    assert model.warnings[0].message.startswith("libsdformat 12 (Gazebo) refuses this URDF: ")


def _refusal(text: str) -> ModelError:
    with pytest.raises(ModelError) as info:
        read_urdf(text)
    return info.value


def test_drake_joint_is_refused_as_urdfdom_refuses_it() -> None:
    # check_urdf: "Failed to find root link: Two root links found: [ball_link] and [base]"
    err = _refusal((FIXTURES / "drake_joints.urdf").read_text())
    (diag,) = err.errors
    assert diag.code == "URDF_MULTIPLE_ROOTS" and diag.line == 28
    for child, joint in [("ball_link", "ball_joint"), ("planar_link", "planar_joint"),
                         ("screw_link", "screw_joint"), ("universal_link", "universal_joint")]:
        assert f"{child!r} (drake:joint {joint!r})" in diag.message
    assert "urdfdom does not read <drake:joint>" in diag.message


def test_drake_joint_with_prefixed_children_is_refused_too() -> None:
    text = """<robot name="r">
  <link name="a"/><link name="b"/>
  <drake:joint name="u" type="universal">
    <drake:parent link="a"/>
    <drake:child link="b"/>
    <drake:origin xyz="0 0 2"/>
  </drake:joint>
</robot>"""
    err = _refusal(text)
    assert sorted(d.code for d in err.diagnostics) == ["URDF_MULTIPLE_ROOTS", "URDF_UNDECLARED_DRAKE_NAMESPACE"]
    assert "'b' (drake:joint 'u')" in err.errors[0].message


def test_drake_joint_beside_a_urdf_joint_to_the_same_child_loads() -> None:
    # check_urdf loads it (exit 0): it ignores the drake:joint, so 'b' has one parent and one root
    text = """<robot name="r" xmlns:drake="http://drake.mit.edu"><link name="a"/><link name="b"/>
  <drake:joint name="d" type="ball"><parent link="a"/><child link="b"/></drake:joint>
  <joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint></robot>"""
    assert [w.code for w in read_urdf(text).warnings] == ["URDF_MULTIPLE_PARENTS"]


def test_screw_pitch_under_actuator() -> None:
    text = """<robot name="r" xmlns:drake="http://drake.mit.edu"><link name="a"/><link name="b"/>
  <drake:joint name="s" type="screw"><parent link="a"/><child link="b"/><axis xyz="1 0 0"/>
    <actuator name="m"><drake:screw_thread_pitch value="-0.01"/></actuator></drake:joint></robot>"""
    # refused (urdfdom does not read drake:joint), for that reason only: the pitch was found
    assert [d.code for d in _refusal(text).diagnostics] == ["URDF_MULTIPLE_ROOTS"]


def test_primer_double_pendulum_sample() -> None:
    model = load_model_file(SAMPLES / "double_pendulum.urdf")
    assert model.name == "linkage" and list(model.links) == ["link A", "link B", "link C"]
    assert model.joints["joint B"].dynamics.damping == 0.002
    assert model.links["link B"].inertial.origin[2, 3] == -0.5
    assert model.links["link B"].visuals[0].material.name == "gray B"
    assert model.root_links() == ["link A"]


# -- tolerances real files need -------------------------------------------------------------------

MINI = '<robot name="r"><link name="a"/></robot>'


def test_xml_version_zero_is_a_warning() -> None:
    model = read_urdf('<?xml version="0.0"?>\n' + MINI)
    assert [d.code for d in model.warnings] == ["XML_BAD_VERSION"]


def test_trailing_nul_is_a_warning() -> None:
    model = read_urdf(MINI.encode() + b"\n\x00")
    assert [d.code for d in model.warnings] == ["XML_TRAILING_NUL"]


def test_misplaced_declaration_is_a_warning() -> None:
    model = read_urdf('\n\n<?xml version="1.0"?>\n' + MINI)
    assert [d.code for d in model.warnings] == ["XML_MISPLACED_DECLARATION"]
    assert model.warnings[0].line == 3


def test_default_namespace_is_accepted() -> None:
    model = read_urdf('<robot xmlns="http://www.ros.org" name="r"><link name="a"/><link name="b"/>'
                      '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint></robot>')
    assert list(model.joints) == ["j"]


def test_origin_quaternion() -> None:
    s = math.sqrt(0.5)
    model = read_urdf(f'<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="fixed">'
                      f'<parent link="a"/><child link="b"/><origin xyz="1 0 0" quat_xyzw="0 0 {s} {s}"/>'
                      f'</joint></robot>')
    assert np.allclose(model.joints["j"].origin[:3, :3], [[0, -1, 0], [1, 0, 0], [0, 0, 1]], rtol=0, atol=1e-12)


def test_entities_are_refused() -> None:
    text = '<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/hostname">]><robot name="r"><link name="a">&x;</link></robot>'
    with pytest.raises(ModelError) as info:
        read_urdf(text)
    assert info.value.code == "XML_ENTITY"


def test_loader_detects_urdf() -> None:
    model = load_model(MINI)
    assert model.format == "urdf" and list(model.links) == ["a"]


def test_declared_encoding_bytes_and_text() -> None:
    latin = '<?xml version="1.0" encoding="ISO-8859-1"?>\n<robot name="caf\u00e9"><link name="a"/></robot>'
    assert read_urdf(latin.encode("latin-1")).name == "caf\u00e9"  # bytes: decoded as declared
    assert read_urdf(latin).name == "caf\u00e9"  # str: already decoded, the declaration is moot
