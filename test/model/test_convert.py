"""URDF <-> SDFormat conversion: equal frames, refusals with reasons, the convert command,
and a round-trip property over random trees written as URDF and as SDFormat."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
import reference_kinematics as ref
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repo_paths import REPO_ROOT
from sdf_helpers import fk

from robot_state_format.cli import main
from robot_state_format.errors import ConversionError
from robot_state_format.model.frames import frames_document
from robot_state_format.model.sdf import read_sdf
from robot_state_format.model.types import Model
from robot_state_format.model.urdf.reader import read_urdf
from robot_state_format.model.writer import to_sdf, to_urdf
from robot_state_format.spatial import inverse, pose_to_transform, transform_to_pose6

SAMPLES = REPO_ROOT / "robot_state_format" / "samples"

URDF = """<robot name="robot">
  <link name="world"/>
  <link name="base">
    <inertial><origin xyz="0 0 0.1"/><mass value="2"/>
      <inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>
    <visual name="shell"><origin xyz="0 0 0.05" rpy="0 0 0.3"/><geometry><box size="0.2 0.2 0.1"/></geometry>
      <material name="red"><color rgba="1 0 0 1"/></material></visual>
    <collision><geometry><cylinder radius="0.1" length="0.2"/></geometry></collision>
  </link>
  <link name="arm"/>
  <link name="slider"/>
  <link name="wheel"/>
  <link name="finger"/>
  <joint name="fix" type="fixed"><origin xyz="0 0 0.5" rpy="0.1 0 0"/><parent link="world"/><child link="base"/></joint>
  <joint name="shoulder" type="revolute"><origin xyz="0.1 0.2 0.3" rpy="0.3 -0.2 1.0"/>
    <parent link="base"/><child link="arm"/><axis xyz="0 1 0"/><limit lower="-1" upper="2" effort="5" velocity="1"/>
    <dynamics damping="0.2" friction="0.01"/></joint>
  <joint name="slide" type="prismatic"><origin xyz="0 0 0.4" rpy="0 1.2 0"/><parent link="arm"/>
    <child link="slider"/><axis xyz="1 0 0"/><limit lower="0" upper="0.3" effort="5" velocity="1"/></joint>
  <joint name="spin" type="continuous"><origin xyz="0.2 0 0" rpy="1.5707963267948966 0 0"/><parent link="arm"/>
    <child link="wheel"/><axis xyz="0 0 1"/></joint>
  <joint name="grip" type="revolute"><origin xyz="0 0.1 0"/><parent link="slider"/><child link="finger"/>
    <axis xyz="0 0 1"/><limit lower="0" upper="1" effort="1" velocity="1"/>
    <mimic joint="shoulder" multiplier="0.5" offset="0.1"/></joint>
</robot>"""


def _rot(q: list[float]) -> np.ndarray:
    return ref.quaternion_matrix(q)


def assert_same_frames(a: dict, b: dict, keys: set[str] | None = None) -> None:  # type: ignore[type-arg]
    keys = keys if keys is not None else set(a["frames"])
    for k in keys:
        fa, fb = a["frames"][k], b["frames"][k]
        np.testing.assert_allclose(fa["position"], fb["position"], atol=1e-9, err_msg=k, rtol=0)
        np.testing.assert_allclose(_rot(fa["quaternion"]), _rot(fb["quaternion"]), atol=1e-9, err_msg=k, rtol=0)


def test_urdf_to_sdf_gives_equal_frames() -> None:
    u = read_urdf(URDF)
    out = to_sdf(u)
    s = read_sdf(out.text)
    assert s.version == "1.11"  # the mimic needs 1.11
    du, ds = frames_document(u), frames_document(s)
    # The URDF 'world' link becomes the world itself.
    assert set(du["frames"]) - set(ds["frames"]) == {"robot::world"}
    assert_same_frames(du, ds, set(ds["frames"]))
    for name, j in du["joints"].items():
        js = ds["joints"][name]
        assert js["type"] == j["type"]
        assert js["axis"] == pytest.approx(j["axis"], abs=1e-12, rel=0) if j["axis"] else js["axis"] is None
    assert s.joints["fix"].parent == "world"
    g = s.joints["grip"]
    assert (g.mimic[0].joint, g.mimic[0].multiplier, g.mimic[0].offset) == ("shoulder", 0.5, 0.1)
    lim = s.joints["shoulder"].limits
    assert (lim.lower, lim.upper, lim.effort, lim.velocity) == (-1, 2, 5, 1)
    base = s.links["base"]
    assert base.inertial.mass == 2 and base.visuals[0].material.rgba == (1, 0, 0, 1)
    assert base.collisions[0].geometry.kind == "cylinder"


def test_urdf_to_sdf_to_urdf_round_trip() -> None:
    u = read_urdf(URDF)
    back = read_urdf(to_urdf(read_sdf(to_sdf(u).text)).text)
    assert_same_frames(frames_document(u), frames_document(back))
    for name, j in u.joints.items():
        np.testing.assert_allclose(back.joints[name].origin, j.origin, atol=1e-12, rtol=0)


def test_sdf_to_urdf_exact_when_child_frame_on_axis() -> None:
    s = read_sdf("""<sdf version="1.9"><model name="m"><link name="a"/>
      <link name="b"><pose>0 0 1 0 0 0.5</pose></link>
      <joint name="j" type="revolute"><pose>0 0 -0.5 0 0 0</pose><parent>a</parent><child>b</child>
        <axis><xyz>0 0 1</xyz></axis></joint></model></sdf>""")
    out = to_urdf(s)
    assert out.warnings == []
    u = read_urdf(out.text)
    # Link frames are kept; the URDF joint frame is the child link frame (0.5 further up the axis).
    assert_same_frames(frames_document(s), frames_document(u), {"m", "m::a", "m::b"})
    q = {"j": 0.7}
    np.testing.assert_allclose(fk(s, q)["b"], fk(u, q)["b"], atol=1e-12, rtol=0)


def test_sdf_to_urdf_moves_off_axis_link_frame() -> None:
    s = read_sdf((SAMPLES / "two_links_orthogonal_1.sdf").read_bytes())
    out = to_urdf(s)
    assert any("linkB" in w for w in out.warnings)
    u = read_urdf(out.text)
    # The joint is still at (0.1, 0, 0); linkB's URDF frame is the joint frame, and its
    # original origin (0.1 above the joint) moves the same way under q = 0.78.
    q = 0.78
    ps, pu = fk(s, {"jointAB": q})["linkB"], fk(u, {"jointAB": q})["linkB"]
    np.testing.assert_allclose(pu @ s.joints["jointAB"].child_offset, ps, atol=1e-12, rtol=0)
    np.testing.assert_allclose(ps[:3, 3], (0.1 + 0.1 * math.sin(q), 0, 0.1 * math.cos(q)), atol=1e-12, rtol=0)
    with pytest.raises(ConversionError, match="off the joint axis"):
        to_urdf(s, strict=True)


@pytest.mark.parametrize("body,reason", [
    ('<world name="w"><model name="a"><link name="l"/></model></world>', "world"),
    ('<model name="m"><pose>1 0 0 0 0 0</pose><link name="l"/></model>', "pose"),
    ('<model name="m"><static>true</static><link name="l"/></model>', "static"),
    ('<model name="m"><link name="a"/><link name="b"/><joint name="j" type="ball"><parent>a</parent>'
     '<child>b</child></joint></model>', "ball"),
    ('<model name="m"><link name="a"/><link name="b"/><joint name="j" type="universal"><parent>a</parent>'
     '<child>b</child></joint></model>', "universal"),
    ('<model name="m"><link name="a"/><link name="b"/><joint name="j1" type="revolute"><parent>a</parent>'
     '<child>b</child></joint><joint name="j2" type="revolute"><parent>b</parent><child>a</child></joint></model>',
     "tree"),
    ('<model name="m"><link name="a"><visual name="v"><geometry><capsule><radius>1</radius><length>1</length>'
     '</capsule></geometry></visual></link></model>', "capsule"),
    ('<model name="m"><link name="a"/><link name="b"/></model>', "one root"),
])
def test_sdf_to_urdf_refusals(body: str, reason: str) -> None:
    with pytest.raises(ConversionError, match=reason):
        to_urdf(read_sdf(f'<sdf version="1.9">{body}</sdf>'))


def test_frames_flattened_as_links() -> None:
    s = read_sdf("""<sdf version="1.9"><model name="m"><link name="a"/>
      <frame name="tool" attached_to="a"><pose>0 0 0.2 0 0 0</pose></frame></model></sdf>""")
    u = read_urdf(to_urdf(s).text)
    np.testing.assert_allclose(u.links["tool"].pose, pose_to_transform((0, 0, 0.2), (0, 0, 0)), atol=1e-12, rtol=0)
    back = read_sdf(to_sdf(s).text)
    np.testing.assert_allclose(back.frames["tool"].pose, s.frames["tool"].pose, atol=1e-12, rtol=0)


def test_nested_sdf_to_sdf_keeps_names_and_poses() -> None:
    s = read_sdf((SAMPLES / "two_links_orthogonal_2.sdf").read_bytes())
    again = read_sdf(to_sdf(s).text)
    assert_same_frames(frames_document(s), frames_document(again))
    nested = read_sdf("""<sdf version="1.9"><model name="m"><link name="base"/>
      <model name="inner"><pose>1 0 0 0 0 0.5</pose><link name="l"><pose>0 1 0 0 0 0</pose></link>
        <frame name="f" attached_to="l"><pose>0 0 1 0 0 0</pose></frame></model>
      <joint name="j" type="revolute"><parent>base</parent><child>inner::l</child></joint></model></sdf>""")
    again = read_sdf(to_sdf(nested).text)
    assert set(again.links) == {"base", "inner::l"} and set(again.frames) == {"inner::f"}
    assert_same_frames(frames_document(nested), frames_document(again))


# --------------------------------------------------------------------------- the command
def test_convert_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "r.urdf"
    src.write_text(URDF)
    out = tmp_path / "r.sdf"
    assert main(["convert", str(src), "--to", "sdf", "-o", str(out)]) == 0
    assert read_sdf(out.read_text()).name == "robot"
    assert main(["convert", str(SAMPLES / "nested_world.sdf"), "--to", "urdf"]) == 1
    assert "URDF describes one robot" in capsys.readouterr().err
    assert main(["convert", str(tmp_path / "missing.sdf"), "--to", "urdf"]) == 2
    assert main(["convert", str(src), "--to", "mjcf"]) == 2
    bad = tmp_path / "bad.sdf"
    bad.write_text('<sdf version="1.9"><model name="m"><link name="l"/><link name="l"/></model></sdf>')
    assert main(["convert", str(bad), "--to", "urdf"]) == 1
    assert "SDF_DUPLICATE_LINK" in capsys.readouterr().err
    assert main(["convert", str(SAMPLES / "two_links_orthogonal_2.sdf"), "--to", "urdf"]) == 0
    captured = capsys.readouterr()
    assert "<robot" in captured.out and "warning" in captured.err


# --------------------------------------------------------------------------- round-trip property
def _n(v: float) -> str:
    f = float(v)  # a subnormal is no SDFormat number (libsdformat refuses it: std::stod's ERANGE)
    return "0.0" if abs(f) < sys.float_info.min else repr(f)


def _p6(x: np.ndarray) -> str:
    return " ".join(_n(v) for v in transform_to_pose6(x))


@st.composite
def trees(draw: st.DrawFn) -> dict:  # type: ignore[type-arg]
    n = draw(st.integers(1, 6))
    fl = st.floats(-1, 1, allow_nan=False, allow_infinity=False)
    ang = st.floats(-3.1, 3.1, allow_nan=False, allow_infinity=False)
    joints = []
    for i in range(1, n):
        axis = np.array([draw(fl), draw(fl), draw(fl)])
        if np.linalg.norm(axis) < 0.1:
            axis = np.array([0.0, 0.0, 1.0])
        joints.append({
            "parent": draw(st.integers(0, i - 1)), "child": i,
            "type": draw(st.sampled_from(["fixed", "revolute", "prismatic", "continuous"])),
            "origin": pose_to_transform([draw(fl), draw(fl), draw(fl)], [draw(ang), draw(ang), draw(ang)]),
            "axis": axis / np.linalg.norm(axis),
            "link_rel": draw(st.sampled_from(["__model__", "joint", "parent"])),
            "joint_rel": draw(st.sampled_from(["parent", "__model__", "child"])),
            "axis_in": draw(st.sampled_from(["joint", "__model__", "parent"])),
        })
    return {"n": n, "joints": joints, "model_frame": draw(st.booleans())}


def _write_urdf(t: dict) -> str:  # type: ignore[type-arg]
    out = ['<robot name="r">'] + [f'<link name="l{i}"/>' for i in range(t["n"])]
    for k, j in enumerate(t["joints"]):
        p = transform_to_pose6(j["origin"])
        lim = '<limit lower="-1" upper="1" effort="1" velocity="1"/>' if j["type"] in ("revolute", "prismatic") else ""
        out.append(f'<joint name="j{k}" type="{j["type"]}"><origin xyz="{_n(p[0])} {_n(p[1])} {_n(p[2])}" '
                   f'rpy="{_n(p[3])} {_n(p[4])} {_n(p[5])}"/><parent link="l{j["parent"]}"/>'
                   f'<child link="l{j["child"]}"/><axis xyz="{" ".join(_n(v) for v in j["axis"])}"/>{lim}</joint>')
    return "".join(out) + "</robot>"


def _write_sdf(t: dict) -> str:  # type: ignore[type-arg]
    # Model-frame poses of every link (URDF: child link frame = joint frame), computed here.
    x = {0: np.eye(4)}
    for j in t["joints"]:
        x[j["child"]] = x[j["parent"]] @ j["origin"]
    out = ['<sdf version="1.9"><model name="r">', '<link name="l0"/>']
    for k, j in enumerate(t["joints"]):
        c, p = j["child"], j["parent"]
        jr = j["joint_rel"] if not (j["joint_rel"] == "child" and j["link_rel"] == "joint") else "parent"
        if j["link_rel"] == "__model__":
            out.append(f'<link name="l{c}"><pose relative_to="__model__">{_p6(x[c])}</pose></link>')
        elif j["link_rel"] == "joint":
            out.append(f'<link name="l{c}"><pose relative_to="j{k}">0 0 0 0 0 0</pose></link>')
        else:
            out.append(f'<link name="l{c}"><pose relative_to="l{p}">{_p6(j["origin"])}</pose></link>')
        if jr == "parent":
            pose = f'<pose relative_to="l{p}">{_p6(j["origin"])}</pose>'
        elif jr == "__model__":
            pose = f'<pose relative_to="__model__">{_p6(x[c])}</pose>'
        else:
            pose = ""  # default: the child link frame, where URDF puts the joint
        if j["axis_in"] == "joint":
            xyz = f'<xyz>{" ".join(_n(v) for v in j["axis"])}</xyz>'
        elif j["axis_in"] == "__model__":
            xyz = f'<xyz expressed_in="__model__">{" ".join(_n(v) for v in x[c][:3, :3] @ j["axis"])}</xyz>'
        else:
            v = inverse(x[p])[:3, :3] @ x[c][:3, :3] @ j["axis"]
            xyz = f'<xyz expressed_in="l{p}">{" ".join(_n(a) for a in v)}</xyz>'
        out.append(f'<joint name="j{k}" type="{j["type"]}">{pose}<parent>l{p}</parent><child>l{c}</child>'
                   f'<axis>{xyz}</axis></joint>')
    return "".join(out) + "</model></sdf>"


def _compare(a: Model, b: Model) -> None:
    da, db = frames_document(a), frames_document(b)
    assert set(da["frames"]) == set(db["frames"])
    assert_same_frames(da, db)
    for name, j in da["joints"].items():
        if j["axis"] is not None and j["type"] != "fixed":
            np.testing.assert_allclose(db["joints"][name]["axis"], j["axis"], atol=1e-9, rtol=0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees())
def test_random_trees_urdf_and_sdf_agree(t: dict) -> None:  # type: ignore[type-arg]
    u = read_urdf(_write_urdf(t))
    s = read_sdf(_write_sdf(t))
    _compare(u, s)
    # and both converters preserve the frames
    _compare(u, read_sdf(to_sdf(u).text))
    _compare(s, read_urdf(to_urdf(s).text))
