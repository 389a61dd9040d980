"""SDFormat 1.7+ frame semantics: relative_to, attached_to, __model__, canonical_link,
expressed_in, placement_frame, the graphs' validation, and a 1.4 model against its 1.7 rewrite."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sdf_helpers import T, assert_pose, codes_of, sdf

from robot_state_format.errors import ModelError
from robot_state_format.model.types import WORLD

HALF_PI = math.pi / 2


def test_relative_to_chain_of_links() -> None:
    m = sdf("""<model name="m"><link name="a"><pose>1 0 0 0 0 1.5707963267948966</pose></link>
      <link name="b"><pose relative_to="a">1 0 0 0 0 0</pose></link></model>""")
    # b = a (1,0,0 yaw 90) then 1 along a's x (= model y): (1, 1, 0) yaw 90.
    assert_pose(m.links["b"].pose, T(1, 1, 0, 0, 0, HALF_PI))


def test_frames_attached_to_chain_and_model_frame() -> None:
    m = sdf("""<model name="m"><pose>0 0 5 0 0 0</pose>
      <link name="l0"><pose>0 0 1 0 0 0</pose></link>
      <link name="l1"><pose>2 0 0 0 0 0</pose></link>
      <frame name="f1" attached_to="l1"><pose>0 1 0 0 0 0</pose></frame>
      <frame name="f2" attached_to="f1"/>
      <frame name="fm"><pose>0 0 3 0 0 0</pose></frame>
      </model>""")
    # f1: relative to l1 (its attached_to) -> (2,1,0); attached to l1 at (0,1,0).
    assert m.frames["f1"].attached_to == "l1"
    assert_pose(m.frames["f1"].pose, T(0, 1, 0))
    # f2 has no pose: coincides with f1, resolved to body l1.
    assert m.frames["f2"].attached_to == "l1"
    assert_pose(m.frames["f2"].pose, T(0, 1, 0))
    # fm is attached to __model__ whose canonical link is l0 (first link): X_l0_fm = (0,0,3)-(0,0,1).
    assert m.frames["fm"].attached_to == "l0"
    assert_pose(m.frames["fm"].pose, T(0, 0, 2))
    assert m.models[""].attached_to == "l0"
    assert_pose(m.models[""].pose, T(0, 0, -1))
    assert_pose(m.pose, T(0, 0, 5))


def test_canonical_link_attribute() -> None:
    m = sdf("""<model name="m" canonical_link="l1"><link name="l0"/>
      <link name="l1"><pose>1 0 0 0 0 0</pose></link><frame name="f"/></model>""")
    assert m.models[""].canonical_link == "l1" and m.models[""].attached_to == "l1"
    assert m.frames["f"].attached_to == "l1"
    assert_pose(m.frames["f"].pose, T(-1, 0, 0))


def test_canonical_link_not_found() -> None:
    assert codes_of('<model name="m" canonical_link="nope"><link name="l"/></model>') == [
        "SDF_CANONICAL_LINK_NOT_FOUND"]


def test_pose_graph_cycle() -> None:
    body = """<model name="m"><link name="a"><pose relative_to="b"/></link>
      <link name="b"><pose relative_to="a"/></link></model>"""
    assert set(codes_of(body)) == {"SDF_POSE_GRAPH_CYCLE"}


def test_relative_to_self_is_a_cycle() -> None:
    assert codes_of('<model name="m"><link name="a"><pose relative_to="a"/></link></model>') == [
        "SDF_POSE_GRAPH_CYCLE"]


def test_relative_to_not_found() -> None:
    body = '<model name="m"><link name="a"><pose relative_to="nowhere"/></link></model>'
    assert codes_of(body) == ["SDF_RELATIVE_TO_NOT_FOUND"]


def test_attached_to_cycle() -> None:
    body = """<model name="m"><link name="l"/>
      <frame name="f1" attached_to="f2"><pose relative_to="__model__"/></frame>
      <frame name="f2" attached_to="f1"><pose relative_to="__model__"/></frame></model>"""
    assert set(codes_of(body)) == {"SDF_ATTACHED_TO_CYCLE"}


def test_attached_to_not_found_and_outer_scope_unreachable() -> None:
    body = '<model name="m"><link name="l"/><frame name="f" attached_to="ghost"/></model>'
    assert "SDF_ATTACHED_TO_NOT_FOUND" in codes_of(body)
    # A nested model cannot name a frame of the outer model.
    body = """<model name="m"><link name="outer_link"/>
      <model name="inner"><link name="l"/><frame name="f" attached_to="outer_link">
      <pose relative_to="__model__"/></frame></model></model>"""
    assert codes_of(body, "1.8") == ["SDF_ATTACHED_TO_NOT_FOUND"]


def test_expressed_in() -> None:
    m = sdf("""<model name="m"><link name="a"/>
      <link name="b"><pose>0 0 0 0 0 1.5707963267948966</pose></link>
      <frame name="tilted"><pose>0 0 0 1.5707963267948966 0 0</pose></frame>
      <joint name="j1" type="revolute"><parent>a</parent><child>b</child>
        <axis><xyz expressed_in="__model__">1 0 0</xyz></axis></joint>
      <link name="c"/>
      <joint name="j2" type="revolute"><parent>a</parent><child>c</child>
        <axis><xyz expressed_in="tilted">0 0 1</xyz></axis></joint></model>""")
    # j1's frame is b's (yaw 90): model x is Rz(-90)(1,0,0) = (0,-1,0) in it.
    np.testing.assert_allclose(m.joints["j1"].axis, (0, -1, 0), atol=1e-12, rtol=0)
    # j2's frame is c's (identity): tilted z = Rx(90)(0,0,1) = (0,-1,0).
    np.testing.assert_allclose(m.joints["j2"].axis, (0, -1, 0), atol=1e-12, rtol=0)




def test_zero_axis_rejected() -> None:
    body = """<model name="m"><link name="a"/><link name="b"/>
      <joint name="j" type="revolute"><parent>a</parent><child>b</child><axis><xyz>0 0 0</xyz></axis></joint></model>"""
    assert codes_of(body) == ["SDF_AXIS_ZERO"]


def test_joint_child_world_invalid_since_1_7() -> None:
    body = """<model name="m"><link name="l"/>
      <joint name="j" type="fixed"><parent>l</parent><child>world</child></joint></model>"""
    assert codes_of(body) == ["SDF_JOINT_CHILD_WORLD"]


def test_joint_parent_and_child_may_be_frames() -> None:
    m = sdf("""<model name="m"><link name="a"/><link name="b"><pose>1 0 0 0 0 0</pose></link>
      <frame name="fb" attached_to="b"><pose relative_to="b">0 0 1 0 0 0</pose></frame>
      <joint name="j" type="revolute"><parent>a</parent><child>fb</child><axis><xyz>0 0 1</xyz></axis></joint>
      </model>""")
    j = m.joints["j"]
    # The child frame fb resolves to link b; the joint pose defaults to fb: (1,0,1).
    assert j.child == "b"
    assert_pose(j.origin, T(1, 0, 1))
    assert_pose(j.child_offset, T(0, 0, -1))


def test_joint_parent_and_child_same_link_through_frame() -> None:
    body = """<model name="m"><link name="a"/><frame name="fa" attached_to="a"/>
      <joint name="j" type="fixed"><parent>a</parent><child>fa</child></joint></model>"""
    assert codes_of(body) == ["SDF_JOINT_SAME_LINK"]


@pytest.mark.parametrize("name,code", [
    ("__model__", "SDF_RESERVED_NAME"), ("__hidden__", "SDF_RESERVED_NAME"), ("world", "SDF_RESERVED_NAME"),
    ("", "SDF_EMPTY_NAME"),
])
def test_reserved_and_empty_names(name: str, code: str) -> None:
    assert codes_of(f'<model name="m"><link name="l"/><frame name="{name}"/></model>') == [code]


def test_scope_delimiter_in_names_since_1_8() -> None:
    assert codes_of('<model name="m"><link name="a::b"/></model>', "1.8") == ["SDF_NAME_WITH_DELIMITER"]


def test_frame_and_link_share_namespace_since_1_7() -> None:
    assert codes_of('<model name="m"><link name="x"/><frame name="x"/></model>') == ["SDF_NAME_CLASH"]


def test_invalid_scoped_reference() -> None:
    body = """<model name="m"><link name="a"/><model name="n"><link name="b"/></model>
      <joint name="j" type="fixed"><parent>::a</parent><child>n::b</child></joint></model>"""
    assert codes_of(body, "1.8") == ["SDF_INVALID_SCOPED_NAME"]


def test_all_errors_collected_in_one_exception() -> None:
    body = """<model name="m"><link name="a"><pose relative_to="nowhere"/></link>
      <frame name="f" attached_to="ghost"><pose relative_to="a"/></frame>
      <link name="b"/><joint name="j" type="fixed"><parent>zzz</parent><child>b</child></joint></model>"""
    with pytest.raises(ModelError) as info:
        sdf(body)
    codes = {d.code for d in info.value.errors}
    assert {"SDF_RELATIVE_TO_NOT_FOUND", "SDF_ATTACHED_TO_NOT_FOUND", "SDF_JOINT_PARENT_NOT_FOUND"} <= codes
    for d in info.value.errors:
        assert d.file == "<string>" and d.line is not None and d.element


def test_errors_carry_line_and_element() -> None:
    text = '<sdf version="1.7">\n<model name="m">\n<link name="l"/>\n<link name="l"/>\n</model>\n</sdf>'
    from robot_state_format.model.sdf import read_sdf

    with pytest.raises(ModelError) as info:
        read_sdf(text, file="robot.sdf")
    d = info.value.errors[0]
    assert (d.code, d.file, d.line, d.element) == ("SDF_DUPLICATE_LINK", "robot.sdf", 4, "link[name=l]")
    assert d.format().startswith("robot.sdf:4: error: [SDF_DUPLICATE_LINK]")


def test_placement_frame_of_nested_model() -> None:
    m = sdf("""<model name="m"><link name="base"/>
      <model name="n" placement_frame="tip"><pose>0 0 1 0 0 0</pose>
        <link name="body"/><frame name="tip" attached_to="body"><pose>0.5 0 0 0 0 1.5707963267948966</pose></frame>
      </model></model>""", "1.8")
    # The pose places frame 'tip' at (0,0,1) (no rotation): n = tip @ inv(X_n_tip).
    # inv(X_n_tip) = yaw -90 then -(Rz(-90)(0.5,0,0)) = (0, 0.5, 0): n at (0, 0.5, 1) yaw -90.
    assert_pose(m.links["n::body"].pose, T(0, 0.5, 1, 0, 0, -HALF_PI))
    assert_pose(m.links["n::body"].pose @ m.frames["n::tip"].pose, T(0, 0, 1))


def test_placement_frame_of_top_level_model() -> None:
    m = sdf("""<model name="m" placement_frame="l"><pose>1 2 3 0 0 0</pose>
      <link name="l"><pose>0 0 1 0 0 0</pose></link></model>""", "1.8")
    # Link l is placed at (1,2,3); the model frame is 1 below it.
    assert_pose(m.pose, T(1, 2, 2))
    assert_pose(m.pose @ m.links["l"].pose, T(1, 2, 3))


def test_placement_frame_not_found() -> None:
    body = '<model name="m"><link name="l"/><model name="n" placement_frame="x"><link name="b"/></model></model>'
    assert codes_of(body, "1.8") == ["SDF_PLACEMENT_FRAME_NOT_FOUND"]


def test_static_nested_model_attached_to_world() -> None:
    m = sdf("""<model name="m"><link name="l"/><model name="s"><static>true</static><pose>0 1 0 0 0 0</pose>
      <link name="b"/></model></model>""", "1.8")
    assert m.models["s"].attached_to == WORLD and m.models["s"].static
    assert_pose(m.models["s"].pose, T(0, 1, 0))


# --------------------------------------------------------------------------- 1.4 vs its 1.7 rewrite
V14 = """<model name="arm_robot">
  <pose>0 0 0.2 0 0 0</pose>
  <link name="base"/>
  <link name="arm"><pose>0 0 1 0 0 1.5707963267948966</pose></link>
  <link name="hand"><pose>0 1 1 0 0 1.5707963267948966</pose></link>
  <joint name="shoulder" type="revolute">
    <pose>0 0 -0.5 0 0 0</pose><parent>base</parent><child>arm</child>
    <axis><xyz>1 0 0</xyz></axis>
  </joint>
  <joint name="wrist" type="prismatic">
    <pose>0 -1 0 0 0 0</pose><parent>arm</parent><child>hand</child>
    <axis><xyz>0 0 1</xyz></axis>
  </joint>
</model>"""

# Hand-derived URDF-style rewrite: shoulder frame = arm (0,0,1 yaw 90) - 0.5 z -> (0,0,0.5) yaw 90, axis model x
# -> (0,-1,0) in it; wrist frame = hand + Rz(90)(0,-1,0) = (1,1,1) yaw 90, in arm's frame Rz(-90)(1,1,0) = (1,-1,0).
V17 = """<model name="arm_robot">
  <pose>0 0 0.2 0 0 0</pose>
  <link name="base"/>
  <joint name="shoulder" type="revolute">
    <pose relative_to="base">0 0 0.5 0 0 1.5707963267948966</pose><parent>base</parent><child>arm</child>
    <axis><xyz>0 -1 0</xyz></axis>
  </joint>
  <link name="arm"><pose relative_to="shoulder">0 0 0.5 0 0 0</pose></link>
  <joint name="wrist" type="prismatic">
    <pose relative_to="arm">1 -1 0 0 0 0</pose><parent>arm</parent><child>hand</child>
    <axis><xyz expressed_in="__model__">0 0 1</xyz></axis>
  </joint>
  <link name="hand"><pose relative_to="wrist">0 1 0 0 0 0</pose></link>
</model>"""


def test_1_4_and_1_7_rewrite_equal() -> None:
    a, b = sdf(V14, "1.4"), sdf(V17, "1.7")
    c = sdf(V14.replace("</xyz>", "</xyz><use_parent_model_frame>1</use_parent_model_frame>"), "1.6")
    assert_pose(a.pose, T(0, 0, 0.2))
    assert_pose(a.links["hand"].pose, T(0, 1, 1, 0, 0, HALF_PI))
    for other in (b, c):
        assert_pose(other.pose, a.pose)
        for name in ("base", "arm", "hand"):
            assert_pose(other.links[name].pose, a.links[name].pose)
        for name in ("shoulder", "wrist"):
            ja, jb = a.joints[name], other.joints[name]
            assert_pose(jb.origin, ja.origin)
            assert_pose(jb.child_offset, ja.child_offset)
            np.testing.assert_allclose(jb.axis, ja.axis, atol=1e-12, rtol=0)
    np.testing.assert_allclose(a.joints["shoulder"].axis, (0, -1, 0), atol=1e-12, rtol=0)
    np.testing.assert_allclose(a.joints["wrist"].axis, (0, 0, 1), atol=1e-12, rtol=0)


def test_1_5_frame_attribute() -> None:
    m = sdf("""<model name="m"><link name="a"><pose>1 0 0 0 0 0</pose></link>
      <link name="b"><pose frame="a">0 1 0 0 0 0</pose></link>
      <frame name="f"><pose frame="b">0 0 1 0 0 0</pose></frame></model>""", "1.5")
    assert_pose(m.links["b"].pose, T(1, 1, 0))
    # libsdformat 12.3 attaches f to the model (its canonical link a), not to b: a joint from a to f is
    # refused there as "parent frame [a] and child frame [f] that both resolve to [a]"
    assert m.frames["f"].attached_to == "a"
    assert_pose(m.frames["f"].pose, T(0, 1, 1))  # X_a_f = inv(T(1,0,0)) @ X_m_b @ T(0,0,1), X_m_b = T(1,1,0)
