"""URDF as urdfdom reads it: a joint named like a link keeps both frames; format detection
skips comments; XML declarations and NUL bytes as urdfdom reads them; lone surrogates; the xacro path
keeps the tolerance warnings; urdfdom's verdict on continuous limits, texture-only materials and
non-finite limits; positional ``name:=value`` xacro arguments.

Expected values are derived by hand in the comments (URDF: the child link frame is
X_parent @ [Rz(yaw) | xyz]; the joint frame is the child link frame)."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest
from real_robots import SKIP_REASON, real_urdf

from robot_state_format.cli import main
from robot_state_format.errors import ModelError, Severity
from robot_state_format.model.frames import format_frames_tree, frames_document
from robot_state_format.model.loader import detect_format, load_model, load_model_file
from robot_state_format.model.urdf.reader import read_urdf
from robot_state_format.model.xml import parse_xml

S45 = math.sqrt(0.5)
ROBOT = '<robot name="r"><link name="a"/></robot>'
XACRO_NS = 'xmlns:xacro="http://www.ros.org/wiki/xacro"'


def _codes(diags: list) -> list[str]:
    return [d.code for d in diags]


# -- 1. frames: a joint named like a link --------------------------------------------------------

# links a, b, c; joint "a" (named like its parent link) a -> b at xyz (1 0 0), yaw 90deg, axis z;
# joint "b" (named like its parent link) b -> c at xyz (0 2 0) in b's frame.
SAME_NAMES = """<robot name="r">
  <link name="a"/><link name="b"/><link name="c"/>
  <joint name="a" type="revolute"><parent link="a"/><child link="b"/>
    <origin xyz="1 0 0" rpy="0 0 1.5707963267948966"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="b" type="fixed"><parent link="b"/><child link="c"/><origin xyz="0 2 0"/></joint>
</robot>
"""


def _assert_pose(entry: dict, kind: str, p: list[float], q: list[float]) -> None:
    assert entry["kind"] == kind
    assert entry["position"] == pytest.approx(p, abs=1e-12, rel=0)
    assert entry["quaternion"] == pytest.approx(q, abs=1e-12, rel=0)


def test_joint_named_like_a_link_keeps_both_frames(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "same.urdf"
    path.write_text(SAME_NAMES)
    assert main(["frames", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # 3 links + 2 joints + the model: nothing is lost
    assert sorted(doc["frames"]) == ["r", "r::a", "r::a (joint)", "r::b", "r::b (joint)", "r::c"]
    zq = [0.0, 0.0, S45, S45]  # yaw 90deg
    _assert_pose(doc["frames"]["r::a"], "link", [0, 0, 0], [0, 0, 0, 1])
    _assert_pose(doc["frames"]["r::b"], "link", [1, 0, 0], zq)
    # c = b @ (0 2 0): Rz(90) (0, 2, 0) = (-2, 0, 0), so (1 - 2, 0, 0)
    _assert_pose(doc["frames"]["r::c"], "link", [-1, 0, 0], zq)
    _assert_pose(doc["frames"]["r::a (joint)"], "joint", [1, 0, 0], zq)  # joint a = link b's frame
    _assert_pose(doc["frames"]["r::b (joint)"], "joint", [-1, 0, 0], zq)  # joint b = link c's frame
    # the joints table keeps the plain scoped joint names
    assert doc["joints"]["r::a"] == {"type": "revolute", "parent": "r::a", "child": "r::b",
                                     "axis": pytest.approx([0, 0, 1], abs=1e-12, rel=0), "axis2": None}
    assert doc["joints"]["r::b"]["parent"] == "r::b" and doc["joints"]["r::b"]["child"] == "r::c"


def test_tree_shows_the_link_and_the_joint_of_one_name() -> None:
    tree = format_frames_tree(read_urdf(SAME_NAMES))
    lines = [line.strip("│├└─ ") for line in tree.splitlines()]
    assert "link a  xyz [0 0 0] quat [0 0 0 1]" in lines
    assert f"joint a (revolute axis [0 0 1])  xyz [1 0 0] quat [0 0 {S45:.6g} {S45:.6g}]" in lines
    assert f"link b  xyz [1 0 0] quat [0 0 {S45:.6g} {S45:.6g}]" in lines
    assert f"joint b (fixed)  xyz [-1 0 0] quat [0 0 {S45:.6g} {S45:.6g}]" in lines


def test_real_robot_with_joints_named_like_links() -> None:
    path = real_urdf("anymal_c_simple_description/urdf/anymal.urdf")
    if path is None:
        pytest.skip(SKIP_REASON)
    model = read_urdf(path.read_bytes(), file=str(path))
    shared = set(model.links) & set(model.joints)
    assert "LF_HAA" in shared  # the reason this robot is here
    doc = frames_document(model)
    assert len(doc["frames"]) == len(model.links) + len(model.joints) + 1
    assert len(doc["joints"]) == len(model.joints)
    for name in model.links:
        assert doc["frames"][f"anymal::{name}"]["kind"] == "link"
    for name, joint in model.joints.items():
        key = f"anymal::{name} (joint)" if name in shared else f"anymal::{name}"
        entry = doc["frames"][key]
        assert entry["kind"] == "joint"
        # a URDF joint frame is its child link frame
        child = doc["frames"][f"anymal::{joint.child}"]
        assert entry["position"] == pytest.approx(child["position"], abs=1e-12, rel=0)
        assert entry["quaternion"] == pytest.approx(child["quaternion"], abs=1e-12, rel=0)


# -- 2. format detection skips comments, PIs and DOCTYPE -------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ('<?xml version="1.0"?>\n<!-- Converted from <sdf> by a tool -->\n' + ROBOT, "urdf"),
    ('<?xml version="1.0"?>\n<!-- Licensed under <http://www.apache.org/licenses/LICENSE-2.0> -->\n' + ROBOT,
     "urdf"),
    ('<?xml version="1.0"?>\n<!DOCTYPE robot>\n' + ROBOT, "urdf"),
    ('<!DOCTYPE x [<!ELEMENT sdf ANY> <!-- <sdf> -->]>\n<?pi <sdf>?>\n' + ROBOT, "urdf"),
    ('<!-- a <robot> inside -->\n<sdf version="1.9"><model name="m"><link name="l"/></model></sdf>', "sdf"),
    ('<!-- not xacro: xmlns:xacro="http://www.ros.org/wiki/xacro" -->\n' + ROBOT, "urdf"),
    (f'<!-- c -->\n<robot name="r" {XACRO_NS}><link name="a"/></robot>', "xacro"),
])
def test_detect_format_reads_the_root_element(text: str, expected: str) -> None:
    assert detect_format(text) == expected
    assert detect_format(text.encode(), "model.xml") == expected


def test_commented_urdf_loads_as_urdf(tmp_path: Path) -> None:
    path = tmp_path / "converted.urdf"
    path.write_text('<?xml version="1.0"?>\n<!-- Converted from <sdf> by a tool; see <http://example.com/> -->\n'
                    + ROBOT)
    model = load_model_file(path)
    assert (model.format, model.name, list(model.links)) == ("urdf", "r", ["a"])


# -- 3. XML declarations and NUL bytes, as urdfdom reads them ---------------------------------------

def test_second_declaration_in_a_row_is_a_warning() -> None:
    model = read_urdf('<?xml version="1.0"?>\n<?xml version="1.0"?>\n' + ROBOT, file="d.urdf")
    assert [(d.code, d.line, d.severity) for d in model.warnings] == [
        ("XML_DUPLICATE_DECLARATION", 2, Severity.WARNING)]


def test_second_declaration_inside_robot_is_a_warning() -> None:
    model = read_urdf('<?xml version="1.0"?>\n<robot name="r">\n<?xml version="1.0"?>\n<link name="a"/>\n</robot>')
    assert [(d.code, d.line) for d in model.warnings] == [("XML_DUPLICATE_DECLARATION", 3)]
    assert model.links["a"].source.line == 4


def test_declaration_quoted_in_a_comment_is_text() -> None:
    model = read_urdf('<?xml version="1.0"?>\n<!-- <?xml version="1.0"?> -->\n' + ROBOT)
    assert model.warnings == []


def test_document_ends_at_the_first_nul() -> None:
    # urdfdom reads a C string: what follows the NUL (here a second link) is not part of the robot
    model = read_urdf(b'<robot name="r"><link name="a"/></robot>\n\x00<link name="b"/>garbage', file="n.urdf")
    assert list(model.links) == ["a"]
    assert [(d.code, d.line) for d in model.warnings] == [("XML_TRAILING_NUL", 2)]
    assert "ends at the NUL byte" in model.warnings[0].message


def test_nul_inside_the_root_is_a_syntax_error_that_names_the_nul() -> None:
    with pytest.raises(ModelError) as info:
        read_urdf(b'<robot name="r">\n<link name="a"/>\x00<link name="b"/></robot>')
    assert _codes(info.value.errors) == ["XML_SYNTAX"]
    assert [(d.code, d.line) for d in info.value.diagnostics[1:]] == [("XML_TRAILING_NUL", 2)]


QUIRKS = {  # file content -> urdfdom's verdict (check_urdf 4.x, TinyXML2)
    "two_declarations": (b'<?xml version="1.0"?>\n<?xml version="1.0"?>\n' + ROBOT.encode(), True),
    "nul_then_text": (ROBOT.encode() + b"\n\x00garbage", True),
    "nul_inside_robot": (b'<robot name="r"><link name="a"/>\x00<link name="b"/></robot>', False),
    "continuous_limit_order": (b'<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="continuous">'
                               b'<parent link="a"/><child link="b"/>'
                               b'<limit lower="1" upper="0" effort="1" velocity="1"/></joint></robot>', True),
    "texture_only_material": (b'<robot name="r"><material name="m"><texture/></material><link name="a"><visual>'
                              b'<geometry><box size="1 1 1"/></geometry><material name="m"/></visual></link>'
                              b'</robot>', True),
}


@pytest.mark.parametrize("name", sorted(QUIRKS))
def test_check_agrees_with_urdfdom(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, valid = QUIRKS[name]
    path = tmp_path / f"{name}.urdf"
    path.write_bytes(data)
    assert main(["check", str(path)]) == (0 if valid else 1)
    check_urdf = shutil.which("check_urdf")
    if check_urdf is not None:  # the recorded verdict is urdfdom's
        out = subprocess.run([check_urdf, str(path)], capture_output=True, text=True, timeout=60)
        assert ("Successfully Parsed XML" in out.stdout) is valid


# -- 4. lone surrogates are the project's error -----------------------------------------------------

def test_lone_surrogate_is_a_model_error() -> None:
    for read in (read_urdf, load_model):
        with pytest.raises(ModelError) as info:
            read('<robot name="r">\n<link name="\ud800"/></robot>')
        assert [(d.code, d.line) for d in info.value.diagnostics] == [("XML_ENCODING", 2)]
    with pytest.raises(ModelError) as info:
        parse_xml('<robot name="\udfff"/>', "p.urdf")
    assert (info.value.code, info.value.diagnostics[0].file) == ("XML_ENCODING", "p.urdf")


def test_lone_surrogate_in_xacro_text_is_a_model_error() -> None:
    text = f'<robot name="r" {XACRO_NS}>\n<xacro:property name="n" value="\ud800"/>\n<link name="${{n}}"/></robot>'
    with pytest.raises(ModelError) as info:
        load_model(text, fmt="xacro")
    assert [(d.code, d.line) for d in info.value.diagnostics] == [("XML_ENCODING", 2)]


# -- 5. xacro keeps the tolerance warnings ----------------------------------------------------------

# the link has a mass: libsdformat (Gazebo) would refuse a URDF without one (SDF_URDF_NO_LINK warning)
MASS = '<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>'
XACRO_BODY = f'<robot name="r" {XACRO_NS}><xacro:property name="n" value="a"/><link name="${{n}}">{MASS}</link></robot>\n'


def test_xacro_version_zero_warns(tmp_path: Path) -> None:
    path = tmp_path / "v0.xacro"
    path.write_text('<?xml version="0.0"?>\n' + XACRO_BODY)
    model = load_model_file(path)
    assert list(model.links) == ["a"]
    assert [(d.code, d.file, d.line) for d in model.warnings] == [("XML_BAD_VERSION", str(path), 1)]


def test_xacro_trailing_nul_and_second_declaration_warn(tmp_path: Path) -> None:
    path = tmp_path / "nul.xacro"
    path.write_bytes(b'<?xml version="1.0"?>\n<?xml version="1.0"?>\n' + XACRO_BODY.encode() + b"\x00junk")
    model = load_model_file(path)
    assert list(model.links) == ["a"]
    assert sorted((d.code, d.line) for d in model.warnings) == [
        ("XML_DUPLICATE_DECLARATION", 2), ("XML_TRAILING_NUL", 4)]


def test_xacro_included_file_warnings_name_that_file(tmp_path: Path) -> None:
    part = tmp_path / "part.xacro"
    part.write_text(f'<?xml version="0.0"?>\n<robot {XACRO_NS}><link name="b"/></robot>\n')
    main_file = tmp_path / "main.xacro"
    main_file.write_text(f'<robot name="r" {XACRO_NS}>\n<xacro:include filename="part.xacro"/>\n'
                         f'<link name="a">{MASS}</link><joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>\n'
                         '</robot>\n')
    model = load_model_file(main_file)
    assert sorted(model.links) == ["a", "b"]
    assert [(d.code, Path(d.file).name, d.line) for d in model.warnings] == [("XML_BAD_VERSION", "part.xacro", 1)]


def test_xacro_tolerance_warnings_come_with_errors(tmp_path: Path) -> None:
    path = tmp_path / "bad.xacro"
    path.write_text(f'<?xml version="0.0"?>\n<robot name="r" {XACRO_NS}><xacro:property name="n" value="a"/>\n'
                    '<link name="${n}"/><link name="${n}"/></robot>\n')
    with pytest.raises(ModelError) as info:
        load_model_file(path)
    assert _codes(info.value.errors) == ["URDF_DUPLICATE_LINK"]
    assert ("XML_BAD_VERSION", 1) in [(d.code, d.line) for d in info.value.diagnostics]


# -- 6. urdfdom's verdicts on limits and materials --------------------------------------------------

def _joint(jtype: str, limit: str) -> str:
    return (f'<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="{jtype}">'
            f'<parent link="a"/><child link="b"/>{limit}</joint></robot>')


def test_continuous_limit_order_is_only_a_warning() -> None:
    model = read_urdf(_joint("continuous", '<limit lower="1" upper="0" effort="2" velocity="3"/>'))
    assert _codes(model.warnings) == ["URDF_LIMIT_IGNORED"]
    limits = model.joints["j"].limits
    assert (limits.lower, limits.upper, limits.effort, limits.velocity) == (None, None, 2.0, 3.0)


def test_revolute_limit_order_is_an_error_from_version_1_2() -> None:
    # urdfdom checks the order from URDF 1.2 on; before, it loads the joint (a warning here)
    limit = '<limit lower="1" upper="0" effort="2" velocity="3"/>'
    assert _codes(read_urdf(_joint("revolute", limit)).warnings) == ["URDF_LIMIT_ORDER"]
    with pytest.raises(ModelError) as info:
        read_urdf(_joint("revolute", limit).replace('<robot name="r"', '<robot name="r" version="1.2"'))
    assert _codes(info.value.diagnostics) == ["URDF_LIMIT_ORDER"]


def test_texture_only_material_is_tolerated() -> None:
    model = read_urdf('<robot name="r">\n<material name="m"><texture/></material>\n'
                      '<link name="a"><visual><geometry><sphere radius="1"/></geometry><material name="m"/>'
                      '</visual></link></robot>')
    assert [(d.code, d.line) for d in model.warnings] == [("URDF_EMPTY_TEXTURE", 2)]
    mat = model.links["a"].visuals[0].material
    assert (mat.name, mat.rgba, mat.texture) == ("m", None, None)


_BLUE, _RED, _NAMED = ('<material name="c"><color rgba="0 0 1 1"/></material>',
                       '<material name="c"><color rgba="1 0 0 1"/></material>', '<material name="c"/>')


@pytest.mark.parametrize("first, second, undefined", [(_BLUE, _NAMED, 0), (_NAMED, _BLUE, 1), (_BLUE, _RED, 0),
                                                      (_NAMED, _NAMED, 2)],
                         ids=["defined-then-named", "named-then-defined", "two-colors", "never-defined"])
def test_a_material_defined_in_a_visual_is_named_by_later_ones_as_urdfdom_reads_it(first: str, second: str,
                                                                                   undefined: int) -> None:
    # a real robot (moveit_resources' sia20d) defines its colors in the first link's visuals only;
    # the reference: the colors urdfdom hands Pinocchio's geometry model
    pin = pytest.importorskip("pinocchio")
    text = (f'<robot name="r"><link name="a"><visual><geometry><box size="1 1 1"/></geometry>{first}</visual></link>'
            f'<link name="b"><visual><geometry><box size="1 1 1"/></geometry>{second}</visual></link>'
            '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint></robot>')
    geom = pin.buildGeomFromUrdfString(pin.buildModelFromXML(text), text, pin.GeometryType.VISUAL)
    no_color = [0.9, 0.9, 0.9, 1.0]  # what Pinocchio gives a visual urdfdom left without a color
    expected = {o.name[0]: [float(v) for v in o.meshColor] for o in geom.geometryObjects}
    model = read_urdf(text)
    for link in "ab":
        mat = model.links[link].visuals[0].material
        got = list(mat.rgba) if mat is not None and mat.rgba is not None else no_color
        assert got == expected[link], link
    assert [d.code for d in model.warnings].count("URDF_UNDEFINED_MATERIAL") == undefined


@pytest.mark.parametrize("limit, bad", [
    ('<limit lower="-inf" upper="inf" effort="1" velocity="1"/>', 2),
    ('<limit lower="0" upper="nan" effort="1" velocity="1"/>', 1),
])
def test_non_finite_limit_gives_no_zero_range_warning(limit: str, bad: int) -> None:
    with pytest.raises(ModelError) as info:
        read_urdf(_joint("revolute", limit))
    assert _codes(info.value.diagnostics) == ["URDF_BAD_NUMBER"] * bad


# -- 7. positional name:=value xacro arguments --------------------------------------------------------

SIDE = (f'<robot name="r" {XACRO_NS}><xacro:arg name="side" default="none"/>'
        '<link name="$(arg side)_hand"/></robot>\n')


def test_check_and_frames_take_positional_xacro_arguments(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "robot.xacro"
    path.write_text(SIDE)
    assert main(["frames", str(path), "side:=left", "--json"]) == 0
    assert sorted(json.loads(capsys.readouterr().out)["frames"]) == ["r", "r::left_hand"]
    assert main(["frames", "--json", "side:=right", str(path)]) == 0
    assert sorted(json.loads(capsys.readouterr().out)["frames"]) == ["r", "r::right_hand"]
    assert main(["check", str(path), "side:=left"]) == 0
    assert "valid urdf model 'r': 1 links" in capsys.readouterr().out
    # the positional form and --xacro-arg together; a malformed one is a usage error
    dup = tmp_path / "dup.xacro"
    dup.write_text(f'<robot name="r" {XACRO_NS}><xacro:arg name="a" default="x"/><xacro:arg name="b" default="y"/>'
                   '<link name="$(arg a)"/><link name="$(arg b)"/></robot>\n')
    assert main(["check", "--xacro-arg", "a:=same", str(dup), "b:=same"]) == 1
    assert "[URDF_DUPLICATE_LINK]" in capsys.readouterr().err
    assert main(["check", str(path), "side:=a:=b"]) == 2  # xacro refuses it too ("Invalid remapping argument")
    assert main(["check", str(path), ":=x"]) == 0  # xacro ignores it, as an empty value
    assert main(["check", "side:=left"]) == 2
    assert "no MODEL" in capsys.readouterr().err
    assert main(["frames", str(path), str(path)]) == 2
