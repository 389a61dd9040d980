"""SDFormat joint types, axes, limits, mimic (1.11 and Drake), screw pitch, gearbox, loops,
Drake extensions and pose formats."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sdf_helpers import T, assert_pose, codes_of, sdf

from robot_state_format.model.types import JointType

TWO = '<link name="a"/><link name="b"><pose>0 0 1 0 0 0</pose></link>'


def joint(jtype: str, inner: str = "", version: str = "1.9"):  # type: ignore[no-untyped-def]
    m = sdf(f'<model name="m">{TWO}<joint name="j" type="{jtype}"><parent>a</parent><child>b</child>'
            f'{inner}</joint></model>', version)
    return m, (m.joints.get("j") or m.constraints.get("j"))


def test_ball_has_no_axis() -> None:
    _, j = joint("ball")
    assert j.type is JointType.BALL and j.axis is None and j.nq == 4


@pytest.mark.parametrize("jtype", ["universal", "revolute2"])
def test_two_axis_joints(jtype: str) -> None:
    _, j = joint(jtype, "<axis><xyz>1 0 0</xyz></axis><axis2><xyz>0 2 0</xyz>"
                        "<limit><lower>-0.5</lower><upper>0.5</upper></limit></axis2>")
    assert j.axis == pytest.approx((1, 0, 0),
                                   rel=0, abs=1e-12) and j.axis2 == pytest.approx((0, 1, 0), rel=0, abs=1e-12)  # normalised
    assert j.limits2 is not None and (j.limits2.lower, j.limits2.upper) == (-0.5, 0.5)


def test_limits_defaults_and_dynamics() -> None:
    _, j = joint("revolute", "<axis><xyz>0 0 1</xyz><limit><lower>-1e16</lower><upper>1.2</upper>"
                             "<effort>-1</effort><velocity>3</velocity></limit>"
                             "<dynamics><damping>0.5</damping><friction>0.1</friction></dynamics></axis>")
    assert j.limits.lower is None and j.limits.upper == 1.2 and j.limits.effort is None and j.limits.velocity == 3
    assert (j.dynamics.damping, j.dynamics.friction) == (0.5, 0.1)
    _, c = joint("continuous", "<axis><xyz>0 0 1</xyz><limit><lower>-1</lower><upper>1</upper></limit></axis>")
    assert c.limits.lower is None and c.limits.upper is None


def test_missing_axis_defaults_to_z() -> None:
    _, j = joint("prismatic")
    assert j.axis == pytest.approx((0, 0, 1), rel=0, abs=1e-12)


def test_screw_thread_pitch_versions() -> None:
    _, j = joint("screw", "<axis><xyz>0 0 1</xyz></axis><screw_thread_pitch>0.02</screw_thread_pitch>", "1.10")
    assert j.screw_pitch == pytest.approx(0.02, rel=0, abs=1e-12)  # already metres per revolution
    # Older <thread_pitch> is Gazebo-classic rad/m of the opposite handedness: -2 pi / 100 m/rev.
    _, k = joint("screw", "<axis><xyz>0 0 1</xyz></axis><thread_pitch>100</thread_pitch>", "1.9")
    assert k.screw_pitch == pytest.approx(-2 * math.pi / 100, rel=0, abs=1e-12)
    assert codes_of(f'<model name="m">{TWO}<joint name="j" type="screw"><parent>a</parent><child>b</child>'
                    '<thread_pitch>0</thread_pitch></joint></model>') == ["SDF_BAD_VALUE"]


def test_gearbox_is_a_constraint() -> None:
    m = sdf(f"""<model name="m">{TWO}<link name="c"/>
      <joint name="j1" type="revolute"><parent>a</parent><child>b</child></joint>
      <joint name="j2" type="revolute"><parent>a</parent><child>c</child></joint>
      <joint name="g" type="gearbox"><parent>b</parent><child>c</child><gearbox_ratio>3</gearbox_ratio>
        <gearbox_reference_body>a</gearbox_reference_body><axis><xyz>0 0 1</xyz></axis>
        <axis2><xyz>0 0 1</xyz></axis2></joint></model>""", "1.9")
    g = m.constraints["g"]
    assert g.type is JointType.GEARBOX and g.gearbox_ratio == 3 and g.gearbox_reference_body == "a"
    assert set(m.joints) == {"j1", "j2"}
    assert "SDF_GEARBOX_CONSTRAINT" in [w.code for w in m.warnings]


def test_mimic_1_11() -> None:
    m = sdf(f"""<model name="m">{TWO}<link name="c"/>
      <joint name="lead" type="revolute"><parent>a</parent><child>b</child><axis><xyz>0 0 1</xyz></axis></joint>
      <joint name="f" type="revolute"><parent>a</parent><child>c</child><axis><xyz>0 0 1</xyz>
        <mimic joint="lead" axis="axis"><multiplier>2</multiplier><offset>0.5</offset><reference>0.1</reference>
        </mimic></axis></joint></model>""", "1.11")
    (mim,) = m.joints["f"].mimic
    # follower = 2 (leader - 0.1) + 0.5 = 2 leader + 0.3
    assert (mim.joint, mim.multiplier, mim.dof, mim.leader_dof) == ("lead", 2, 0, 0)
    assert mim.offset == pytest.approx(0.3, rel=0, abs=1e-12)


def test_drake_mimic_and_missing_leader() -> None:
    body = f"""<model name="m" xmlns:drake="http://drake.mit.edu">{TWO}<link name="c"/>
      <joint name="lead" type="revolute"><parent>a</parent><child>b</child></joint>
      <joint name="f" type="revolute"><parent>a</parent><child>c</child>
        <drake:mimic joint="lead" multiplier="-1" offset="0.2"/></joint></model>"""
    m = sdf(body)
    (mim,) = m.joints["f"].mimic
    assert (mim.joint, mim.multiplier, mim.offset) == ("lead", -1, 0.2)
    assert codes_of(body.replace('joint="lead"', 'joint="nobody"')) == ["SDF_MIMIC_JOINT_NOT_FOUND"]


FOUR_BAR = """<model name="fourbar">
  <link name="ground"/>
  <link name="crank"><pose>0 0 1 0 0 0</pose></link>
  <link name="coupler"><pose>1 0 1 0 0 0</pose></link>
  <link name="rocker"><pose>1 0 0 0 0 0</pose></link>
  <joint name="j_crank" type="revolute"><parent>ground</parent><child>crank</child></joint>
  <joint name="j_rocker" type="revolute"><parent>ground</parent><child>rocker</child></joint>
  <joint name="j_coupler" type="revolute"><parent>crank</parent><child>coupler</child></joint>
  <joint name="j_close" type="revolute"><pose>0 0 -1 0 0 0</pose><parent>coupler</parent><child>rocker</child></joint>
  <joint name="j_world" type="fixed"><parent>world</parent><child>ground</child></joint>
</model>"""


def test_loop_spanning_tree_and_constraint() -> None:
    m = sdf(FOUR_BAR)
    # BFS from the world: ground; then ground's joints in order (crank, rocker); then crank -> coupler;
    # coupler -> rocker closes the loop.
    assert list(m.joints) == ["j_crank", "j_rocker", "j_coupler", "j_world"]
    assert list(m.constraints) == ["j_close"]
    assert [w.code for w in m.warnings] == ["SDF_KINEMATIC_LOOP"]
    c = m.constraints["j_close"]
    # Joint frame 1 below rocker (1,0,0): (1,0,-1); in coupler (1,0,1): (0,0,-2).
    assert_pose(c.origin, T(0, 0, -2))
    assert_pose(c.child_offset, T(0, 0, 1))
    # Deterministic: the same choice every time.
    assert list(sdf(FOUR_BAR).constraints) == ["j_close"]


def test_loop_without_root_link() -> None:
    m = sdf("""<model name="ring"><link name="a"/><link name="b"/>
      <joint name="ab" type="revolute"><parent>a</parent><child>b</child></joint>
      <joint name="ba" type="revolute"><parent>b</parent><child>a</child></joint></model>""")
    assert list(m.joints) == ["ab"] and list(m.constraints) == ["ba"]
    assert m.root_links() == ["a"]


def test_unknown_type_and_missing_parent() -> None:
    assert codes_of(f'<model name="m">{TWO}<joint name="j" type="hinge"><parent>a</parent><child>b</child>'
                    '</joint></model>') == ["SDF_UNKNOWN_JOINT_TYPE"]
    assert codes_of(f'<model name="m">{TWO}<joint name="j" type="fixed"><child>b</child></joint></model>') == [
        "SDF_JOINT_MISSING_PARENT"]


def test_drake_planar_joint_shapes_and_extensions() -> None:
    m = sdf("""<model name="m" xmlns:drake="http://drake.mit.edu">
      <link name="a"><collision name="c"><geometry><drake:capsule><radius>0.1</radius><length>0.4</length>
        </drake:capsule></geometry><drake:proximity_properties><drake:mu_static value="0.5"/>
        </drake:proximity_properties></collision>
        <visual name="v"><geometry><drake:ellipsoid><a>0.1</a><b>0.2</b><c>0.3</c></drake:ellipsoid></geometry>
        </visual></link>
      <link name="b"><pose>0 1 0 0 0 0</pose></link>
      <drake:joint name="p" type="planar"><drake:parent>a</drake:parent><drake:child>b</drake:child>
        <drake:damping>0.1 0.1 0.1</drake:damping></drake:joint>
      <drake:collision_filter_group name="g"><drake:member>a</drake:member></drake:collision_filter_group>
      </model>""", "1.9")
    p = m.joints["p"]
    assert p.type is JointType.PLANAR and p.axis == pytest.approx((0, 0, 1), rel=0, abs=1e-12)
    assert_pose(p.origin, T(0, 1, 0))
    cap = m.links["a"].collisions[0].geometry
    assert (cap.kind, cap.radius, cap.length) == ("capsule", 0.1, 0.4)
    ell = m.links["a"].visuals[0].geometry
    assert (ell.kind, ell.radii) == ("ellipsoid", (0.1, 0.2, 0.3))
    tags = {(e.tag, e.owner) for e in m.extensions}
    assert ("drake:proximity_properties", "a") in tags
    assert ("drake:damping", "p") in tags
    assert ("drake:collision_filter_group", None) in tags


def test_drake_joint_data_kept_as_extensions() -> None:
    m = sdf("""<model name="m" xmlns:drake="http://drake.mit.edu"><link name="a"/><link name="b"/>
      <joint name="j" type="revolute"><parent>a</parent><child>b</child><drake:rotor_inertia>0.1</drake:rotor_inertia>
        <axis><xyz>0 0 1</xyz><limit><drake:acceleration>2</drake:acceleration></limit></axis></joint></model>""")
    assert {(e.tag, e.owner) for e in m.extensions} == {("drake:rotor_inertia", "j"), ("drake:acceleration", "j")}


def test_undeclared_drake_prefix_tolerated() -> None:
    m = sdf('<model name="m"><link name="a"/><link name="b"/><joint name="f" type="revolute"><parent>a</parent>'
            '<child>b</child><drake:mimic joint="f2" multiplier="1" offset="0"/></joint>'
            '<link name="c"/><joint name="f2" type="revolute"><parent>a</parent><child>c</child></joint></model>')
    assert m.joints["f"].mimic[0].joint == "f2"
    assert "SDF_UNDECLARED_PREFIX" in [w.code for w in m.warnings]


def test_pose_quaternion_and_degrees() -> None:
    m = sdf("""<model name="m"><link name="a"><pose rotation_format="quat_xyzw">1 2 3 0 0 0.7071067811865476
      0.7071067811865476</pose></link><link name="b"><pose degrees="true">0 0 0 0 0 90</pose></link></model>""", "1.9")
    assert_pose(m.links["a"].pose, T(1, 2, 3, 0, 0, math.pi / 2))
    assert_pose(m.links["b"].pose, T(0, 0, 0, 0, 0, math.pi / 2))


def test_bad_numbers_reported() -> None:
    assert codes_of('<model name="m"><link name="a"><pose>1 2 x 0 0 0</pose></link></model>') == ["SDF_BAD_VALUE"]
    assert codes_of('<model name="m"><link name="a"><pose>1 2</pose></link></model>') == ["SDF_BAD_VALUE"]
    assert codes_of('<model name="m"><link name="a"><pose>nan 0 0 0 0 0</pose></link></model>') == [
        "SDF_BAD_VALUE"]


def test_inertial_and_geometry() -> None:
    m = sdf("""<model name="m"><link name="a"><inertial><pose>0 0 0.1 0 0 0</pose><mass>3</mass>
      <inertia><ixx>1</ixx><iyy>2</iyy><izz>3</izz><ixy>0.1</ixy></inertia></inertial>
      <visual name="v"><pose relative_to="f">0 0 0 0 0 0</pose><geometry><mesh><uri>model://x/m.dae</uri>
        <scale>2 2 2</scale></mesh></geometry><material><diffuse>1 0 0 1</diffuse></material></visual></link>
      <frame name="f" attached_to="a"><pose>0 0 1 0 0 0</pose></frame></model>""")
    link = m.links["a"]
    assert link.inertial.mass == 3 and link.inertial.inertia == (1, 0.1, 0, 2, 0, 3)
    assert_pose(link.inertial.origin, T(0, 0, 0.1))
    v = link.visuals[0]
    assert (v.geometry.kind, v.geometry.filename, v.geometry.scale) == ("mesh", "model://x/m.dae", (2, 2, 2))
    assert v.material is not None and v.material.rgba == (1, 0, 0, 1)
    # The visual is posed relative to frame f (1 above a).
    assert_pose(v.origin, T(0, 0, 1))
    np.testing.assert_allclose(link.pose, np.eye(4), rtol=0, atol=1e-12)
