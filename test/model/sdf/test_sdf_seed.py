"""Every example of the two SDFormat seed documents (pose frame semantics, model kinematics).

Expected poses are derived by hand in the comments; invalid examples are rejected with their
own stable code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from repo_paths import REPO_ROOT
from sdf_helpers import T, assert_pose, codes_of, fk, sdf

from robot_state_format.errors import ModelError
from robot_state_format.model.sdf import read_sdf
from robot_state_format.model.types import WORLD, JointType

SAMPLES = REPO_ROOT / "robot_state_format" / "samples"


# --------------------------------------------------------------------------- naming (1.4)
def test_duplicate_sibling_links_invalid() -> None:
    body = '<model name="model"><link name="link"/><link name="link"/></model>'
    assert codes_of(body, "1.4") == ["SDF_DUPLICATE_LINK"]


def test_duplicate_sibling_joints_invalid() -> None:
    body = """<model name="model"><link name="link1"/><link name="link2"/><link name="link3"/>
      <joint name="joint" type="fixed"><parent>link1</parent><child>link2</child></joint>
      <joint name="joint" type="fixed"><parent>link2</parent><child>link3</child></joint></model>"""
    assert codes_of(body, "1.4") == ["SDF_DUPLICATE_JOINT"]


def test_duplicate_sibling_collisions_invalid() -> None:
    body = """<model name="model"><link name="link">
      <collision name="collision"><geometry><sphere><radius>1</radius></sphere></geometry></collision>
      <collision name="collision"><geometry><sphere><radius>1</radius></sphere></geometry></collision>
      </link></model>"""
    assert codes_of(body, "1.4") == ["SDF_DUPLICATE_COLLISION"]


def test_same_collision_name_in_different_links_valid() -> None:
    m = sdf("""<model name="model">
      <link name="link1"><collision name="collision"><geometry><box><size>1 1 1</size></box></geometry></collision></link>
      <link name="link2"><collision name="collision"><geometry><box><size>1 1 1</size></box></geometry></collision></link>
      </model>""", "1.4")
    assert [c.name for c in m.links["link1"].collisions] == ["collision"]
    assert [c.name for c in m.links["link2"].collisions] == ["collision"]


def test_link_and_joint_same_name_valid_in_1_4_not_recommended() -> None:
    m = sdf("""<model name="model"><link name="base"/><link name="attachment"/>
      <joint name="attachment" type="fixed"><parent>base</parent><child>attachment</child></joint></model>""", "1.4")
    # libsdformat's conversion renames the joint (verified with libsdformat 12: "attachment_joint")
    assert set(m.links) == {"base", "attachment"} and set(m.joints) == {"attachment_joint"}
    assert m.joints["attachment_joint"].child == "attachment"
    assert "SDF_NAME_CLASH" in [w.code for w in m.warnings]


def test_link_and_joint_same_name_invalid_since_1_7() -> None:
    body = """<model name="m"><link name="base"/><link name="attachment"/>
      <joint name="attachment" type="fixed"><parent>base</parent><child>attachment</child></joint></model>"""
    assert codes_of(body, "1.7") == ["SDF_NAME_CLASH"]


def test_reserved_member_names_refused_in_every_version() -> None:
    # libsdformat 12: "The supplied link name [world] is reserved." for 1.4, 1.5, 1.6 files too
    for version in ("1.4", "1.5", "1.6"):
        assert codes_of('<model name="model"><link name="world"/><link name="world_link"/></model>', version) == \
            ["SDF_RESERVED_NAME"]
        if version != "1.4":  # <frame> exists from 1.5
            assert codes_of('<model name="m"><link name="a"/><frame name="world"/></model>', version) == \
                ["SDF_RESERVED_NAME"]
        assert codes_of('<model name="m"><link name="__x__"/><link name="b"/></model>', version) == \
            ["SDF_RESERVED_NAME"]


def test_link_named_world_reserved_since_1_7() -> None:
    assert codes_of('<model name="m"><link name="world"/></model>', "1.7") == ["SDF_RESERVED_NAME"]


# --------------------------------------------------------------------------- parent frames (1.4)
POSES_14 = """<model name="model">
  <pose>1 2 3 0 0 1.5707963267948966</pose>
  <link name="link">
    <pose>0.5 0 0 0 0 0</pose>
    <inertial><pose>0 0.1 0 0 0 0</pose><mass>2</mass></inertial>
    <collision name="collision"><pose>0 0 0.2 0 0 0</pose><geometry><sphere><radius>0.1</radius></sphere></geometry></collision>
    <visual name="visual"><pose>0.3 0 0 0 0 0</pose><geometry><box><size>1 1 1</size></box></geometry></visual>
    <sensor name="sensor" type="imu"><pose>0 0 0 0 0 0</pose></sensor>
  </link>
</model>"""


@pytest.mark.parametrize("version", ["1.4", "1.5"])
def test_poses_relative_to_parent_element(version: str) -> None:
    # frame='' in 1.5 means the same parent frames as 1.4.
    text = POSES_14.replace("<pose>", "<pose frame=''>") if version == "1.5" else POSES_14
    m = sdf(text, version)
    # Model frame in world: (1,2,3) yaw 90; link at 0.5 along the model x axis.
    assert_pose(m.pose, T(1, 2, 3, 0, 0, math.pi / 2))
    assert_pose(m.links["link"].pose, T(0.5))
    # World pose of the link: (1,2,3) + Rz(90)(0.5,0,0) = (1, 2.5, 3).
    assert_pose(m.pose @ m.links["link"].pose, T(1, 2.5, 3, 0, 0, math.pi / 2))
    link = m.links["link"]
    assert link.inertial is not None and link.inertial.mass == 2
    assert_pose(link.inertial.origin, T(0, 0.1))
    assert_pose(link.collisions[0].origin, T(0, 0, 0.2))
    assert_pose(link.visuals[0].origin, T(0.3))


JOINT_14 = """<model name="model">
  <pose>0 0 1 0 0 0</pose>
  <link name="link1"><pose>1 0 0 0 0 0</pose></link>
  <link name="link2"><pose>2 0 0 0 0 1.5707963267948966</pose></link>
  <joint name="joint" type="fixed">
    <pose>0.5 0 0 0 0 0</pose>
    <parent>link1</parent>
    <child>link2</child>
  </joint>
</model>"""


@pytest.mark.parametrize("version", ["1.4", "1.5", "1.6", "1.7"])
def test_joint_pose_relative_to_child_link(version: str) -> None:
    m = sdf(JOINT_14, version)
    j = m.joints["joint"]
    # Joint frame = link2 frame (2,0,0 yaw 90) moved 0.5 along link2's x (= model y): (2, 0.5, 0) yaw 90.
    x_mj = T(2, 0.5, 0, 0, 0, math.pi / 2)
    assert_pose(m.links["link1"].pose @ j.origin, x_mj)
    # origin = X_link1_J = (1, 0.5, 0) yaw 90; child offset = X_J_link2 = (-0.5, 0, 0).
    assert_pose(j.origin, T(1, 0.5, 0, 0, 0, math.pi / 2))
    assert_pose(j.child_offset, T(-0.5))


def test_urdf_like_chain_with_zero_joint_poses() -> None:
    # link4 declared chain: joint frames coincide with their child link frames.
    m = sdf("""<model name="model">
      <link name="link1"><pose>0 0 0 0 0 0</pose></link>
      <link name="link2"><pose>1 0 0 0 0 0</pose></link>
      <link name="link3"><pose>0 1 0 0 0 1.5707963267948966</pose></link>
      <link name="link4"><pose>0 2 0 0 0 0</pose></link>
      <joint name="joint1" type="revolute"><pose>0 0 0 0 0 0</pose><parent>link1</parent><child>link2</child></joint>
      <joint name="joint2" type="revolute"><pose>0 0 0 0 0 0</pose><parent>link1</parent><child>link3</child></joint>
      <joint name="joint3" type="revolute"><pose>0 0 0 0 0 0</pose><parent>link3</parent><child>link4</child></joint>
      </model>""", "1.4")
    for j in m.joints.values():
        assert_pose(j.child_offset, np.eye(4))
    # joint3 origin = X_link3_link4: link3 at (0,1,0) yaw 90, link4 at (0,2,0) yaw 0 ->
    # position Rz(-90)(0,1,0) = (1,0,0), rotation yaw -90.
    assert_pose(m.joints["joint3"].origin, T(1, 0, 0, 0, 0, -math.pi / 2))


# --------------------------------------------------------------------------- axes
def test_axis_1_4_in_parent_model_frame() -> None:
    m = sdf("""<model name="m"><link name="a"/><link name="b"><pose>0 0 0 0 0 1.5707963267948966</pose></link>
      <joint name="j" type="revolute"><parent>a</parent><child>b</child><axis><xyz>1 0 0</xyz></axis></joint>
      </model>""", "1.4")
    # Joint frame = b's frame (yaw 90); model x expressed in it is Rz(-90)(1,0,0) = (0,-1,0).
    np.testing.assert_allclose(m.joints["j"].axis, (0, -1, 0), atol=1e-12, rtol=0)


def test_axis_1_5_in_joint_frame_unless_use_parent_model_frame() -> None:
    body = """<model name="joint_axis"><link name="A"/><link name="B"/><link name="C"/>
      <joint name="J1" type="revolute"><pose>0 0 0 1.57 0 0</pose><parent>A</parent><child>B</child>
        <axis><xyz>0 0 1</xyz></axis></joint>
      <joint name="J2" type="revolute"><parent>B</parent><child>C</child>
        <axis><xyz>0 0 1</xyz><use_parent_model_frame>true</use_parent_model_frame></axis></joint>
      </model>"""
    m = sdf(body, "1.5")
    j1, j2 = m.joints["J1"], m.joints["J2"]
    np.testing.assert_allclose(j1.axis, (0, 0, 1), atol=1e-12, rtol=0)
    # In the model frame J1's axis is Rx(1.57) z = (0, -sin 1.57, cos 1.57); J2's is z: orthogonal.
    a1 = (m.links["A"].pose @ j1.origin)[:3, :3] @ np.array(j1.axis)
    a2 = (m.links["B"].pose @ j2.origin)[:3, :3] @ np.array(j2.axis)
    np.testing.assert_allclose(a1, (0, -math.sin(1.57), math.cos(1.57)), atol=1e-12, rtol=0)
    np.testing.assert_allclose(a2, (0, 0, 1), atol=1e-12, rtol=0)
    assert abs(float(a1 @ a2)) < 1e-3


# --------------------------------------------------------------------------- joint parent/child
def test_world_parent_valid_and_world_child_refused_in_1_4() -> None:
    m = sdf("""<model name="model"><link name="link"/>
      <joint name="joint" type="fixed"><parent>world</parent><child>link</child></joint></model>""", "1.4")
    assert m.joints["joint"].parent == WORLD and m.joints["joint"].child == "link"
    assert codes_of("""<model name="model"><link name="link"/>
      <joint name="joint" type="fixed"><parent>link</parent><child>world</child></joint></model>""", "1.4") == \
        ["SDF_JOINT_CHILD_WORLD"]


def test_sibling_link_named_world_is_refused() -> None:
    assert "SDF_RESERVED_NAME" in codes_of("""<model name="model"><link name="link"/><link name="world"/>
      <joint name="joint" type="fixed"><parent>world</parent><child>link</child></joint></model>""", "1.4")


def test_parent_link_not_found() -> None:
    body = """<model name="model"><link name="link"/>
      <joint name="joint" type="fixed"><parent>fake_link</parent><child>link</child></joint></model>"""
    assert codes_of(body, "1.4") == ["SDF_JOINT_PARENT_NOT_FOUND"]


def test_parent_link_not_a_sibling_in_world() -> None:
    body = """<world name="world_with_invalid_joint">
      <model name="model1"><link name="link1"/></model>
      <model name="model2"><link name="link2"/>
        <joint name="joint" type="fixed"><parent>link1</parent><child>link2</child></joint></model></world>"""
    assert codes_of(body, "1.4") == ["SDF_JOINT_PARENT_NOT_SIBLING"]


def test_parent_equal_to_child_invalid() -> None:
    body = """<model name="m"><link name="l"/>
      <joint name="j" type="revolute"><parent>l</parent><child>l</child></joint></model>"""
    assert codes_of(body, "1.4") == ["SDF_JOINT_PARENT_SAME_AS_CHILD"]


# --------------------------------------------------------------------------- nested models (1.5)
def test_nested_models_with_same_link_names_valid() -> None:
    m = sdf("""<model name="model"><model name="model1"><link name="link"/></model>
      <model name="model2"><link name="link"/></model></model>""", "1.5")
    assert set(m.links) == {"model1::link", "model2::link"}
    assert m.scoped("model1::link") == "model::model1::link"


def test_joint_between_sibling_models() -> None:
    m = sdf("""<model name="model">
      <model name="model1"><pose>1 0 0 0 0 0</pose><link name="link"/></model>
      <model name="model2"><pose>0 1 0 0 0 0</pose><link name="link"/></model>
      <joint name="joint" type="fixed"><parent>model1::link</parent><child>model2::link</child></joint>
      </model>""", "1.5")
    j = m.joints["joint"]
    assert (j.parent, j.child) == ("model1::link", "model2::link")
    # Joint frame at model2::link (0,1,0); in model1::link (1,0,0): (-1, 1, 0).
    assert_pose(j.origin, T(-1, 1, 0))


def test_joint_from_nested_link_to_sibling_link() -> None:
    m = sdf("""<model name="model"><model name="nested_model"><link name="link"/></model><link name="link"/>
      <joint name="joint" type="fixed"><parent>nested_model::link</parent><child>link</child></joint></model>""",
            "1.5")
    assert m.joints["joint"].parent == "nested_model::link" and m.joints["joint"].child == "link"


# --------------------------------------------------------------------------- kinematics document
def test_one_and_two_links() -> None:
    assert set(sdf('<model name="one_link"><link name="link"/></model>').links) == {"link"}
    assert set(sdf('<model name="two_links"><link name="link1"/><link name="link2"/></model>').links) == {
        "link1", "link2"}
    body = '<model name="invalid_two_links_same_name"><link name="link"/><link name="link"/></model>'
    assert codes_of(body) == ["SDF_DUPLICATE_LINK"]


def test_empty_model_needs_static_since_1_7() -> None:
    assert codes_of('<model name="empty"/>', "1.7") == ["SDF_MODEL_WITHOUT_LINK"]
    m = sdf('<model name="empty"><static>true</static></model>', "1.7")
    assert not m.links and m.models[""].attached_to == WORLD


def test_model_and_link_pose_equals_link_world_pose() -> None:
    a = sdf("""<model name="model_and_link_pose"><pose>1 0 0 0 0 1.5707963267948966</pose>
      <link name="link"><pose>0 2 0 0 0 0</pose></link></model>""")
    # World pose of the link: (1,0,0) + Rz(90)(0,2,0) = (-1, 0, 0), yaw 90.
    b = sdf("""<model name="equivalent_link_pose">
      <link name="link"><pose>-1 0 0 0 0 1.5707963267948966</pose></link></model>""")
    assert_pose(a.pose @ a.links["link"].pose, T(-1, 0, 0, 0, 0, math.pi / 2))
    assert_pose(a.pose @ a.links["link"].pose, b.pose @ b.links["link"].pose)


def test_two_links_fixed() -> None:
    m = sdf("""<model name="two_links_fixed"><link name="link1"/><link name="link2"/>
      <joint name="joint" type="fixed"><parent>link1</parent><child>link2</child></joint></model>""")
    assert m.joints["joint"].type is JointType.FIXED and m.root_links() == ["link1"]


def _sample(name: str):
    return read_sdf((SAMPLES / name).read_bytes(), file=str(SAMPLES / name))


def test_two_links_orthogonal_1_joint_at_0_1_0_0() -> None:
    m = _sample("two_links_orthogonal_1.sdf")
    j = m.joints["jointAB"]
    # linkB at (0.1, 0, 0.1); joint pose (0, 0, -0.1) relative to linkB -> (0.1, 0, 0) in the world.
    assert_pose(m.links["linkA"].pose @ j.origin, T(0.1, 0, 0))
    assert_pose(j.child_offset, T(0, 0, 0.1))
    assert j.axis == pytest.approx((0, 1, 0), rel=0, abs=1e-12)
    assert m.joints["joint_world"].parent == WORLD


def test_two_links_orthogonal_2_joint_at_0_0_0_1() -> None:
    m = _sample("two_links_orthogonal_2.sdf")
    j = m.joints["joint12"]
    # link2 at (0.1, 0, 0.1); joint pose (-0.1, 0, 0) relative to link2 -> (0, 0, 0.1).
    assert_pose(m.links["link1"].pose @ j.origin, T(0, 0, 0.1))
    assert_pose(j.child_offset, T(0.1, 0, 0))
    assert_pose(m.links["link2"].pose, _sample("two_links_orthogonal_1.sdf").links["linkB"].pose)


def test_two_links_orthogonal_at_0_78_rad_differ() -> None:
    q = 0.78
    b = fk(_sample("two_links_orthogonal_1.sdf"), {"jointAB": q})["linkB"]
    l2 = fk(_sample("two_links_orthogonal_2.sdf"), {"joint12": q})["link2"]
    # _1: joint at (0.1,0,0), linkB 0.1 above it; Ry(q) (0,0,0.1) = (0.1 sin q, 0, 0.1 cos q).
    np.testing.assert_allclose(b[:3, 3], (0.1 + 0.1 * math.sin(q), 0, 0.1 * math.cos(q)), atol=1e-12, rtol=0)
    # _2: joint at (0,0,0.1), link2 0.1 along x; Ry(q) (0.1,0,0) = (0.1 cos q, 0, -0.1 sin q).
    np.testing.assert_allclose(l2[:3, 3], (0.1 * math.cos(q), 0, 0.1 - 0.1 * math.sin(q)), atol=1e-12, rtol=0)
    assert np.linalg.norm(b[:3, 3] - l2[:3, 3]) > 0.05


def test_missing_version_is_an_error() -> None:
    with pytest.raises(ModelError) as info:
        read_sdf('<sdf><model name="m"><link name="l"/></model></sdf>')
    assert info.value.code == "SDF_MISSING_VERSION"
