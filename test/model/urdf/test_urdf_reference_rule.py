"""urdfdom's verdict is the rule for URDF: each class of file urdfdom loads (logging what it drops)
is loaded, with a warning carrying the code and file:line, and never refused; the kinematics is that
of the file without the dropped element. Where ``check_urdf`` (urdfdom, installed with ``pin``) is
present, its verdict on every variant is checked to be the same.

Also: unexpanded xacro in a file that is neither ``.xacro`` nor declares ``xmlns:xacro`` is not
expanded unless asked (``xacro=True`` / ``--xacro``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from robot_state_format.cli import main
from robot_state_format.errors import ModelError
from robot_state_format.kinematics import fk
from robot_state_format.kinematics.tree import compile_model
from robot_state_format.model.loader import load_model, load_model_file
from robot_state_format.model.urdf.reader import read_urdf

CHECK_URDF = next((str(p) for p in [Path(sys.executable).parent / "check_urdf"] if p.is_file()), None)
NO_CHECK_URDF = "urdfdom's check_urdf is not installed (pip install pin)"

BASE = """<?xml version="1.0"?>
<robot name="r"{robot}>
  <link name="a">{link}</link>
  <link name="b"/>
  <joint name="j" type="revolute">
    <origin xyz="0 0 1" rpy="0 0 0.5"/><axis xyz="0 1 0"/>
    <parent link="a"/><child link="b"/>{joint}
  </joint>
</robot>
"""
LIMIT = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
INERTIA = '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>'


def doc(link: str = "", joint: str = LIMIT, robot: str = "") -> str:
    return BASE.format(link=link, joint=joint, robot=robot)


# (variant id, document, warning code): each class with several members
TOLERATED = [
    # <inertial> urdfdom cannot read: the inertial is ignored
    ("inertial-without-mass", doc(f"<inertial>{INERTIA}</inertial>"), "URDF_MISSING_MASS"),
    ("inertial-mass-without-value", doc(f'<inertial><mass/>{INERTIA}</inertial>'), "URDF_MISSING_ATTRIBUTE"),
    ("inertial-without-inertia", doc('<inertial><mass value="1"/></inertial>'), "URDF_MISSING_INERTIA"),
    ("inertia-missing-izz", doc('<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0"/>'
                                '</inertial>'), "URDF_MISSING_ATTRIBUTE"),
    ("negative-mass", doc(f'<inertial><mass value="-2"/>{INERTIA}</inertial>'), "URDF_NEGATIVE_MASS"),
    ("inertial-bad-origin", doc(f'<inertial><origin xyz="1 2"/><mass value="1"/>{INERTIA}</inertial>'),
     "URDF_BAD_VECTOR"),
    # geometry urdfdom does not know, or a shape it cannot read: the visual/collision is ignored
    ("plane", doc('<visual><geometry><plane normal="0 0 1"/></geometry></visual>'), "URDF_UNKNOWN_GEOMETRY"),
    ("heightmap", doc('<collision><geometry><heightmap/></geometry></collision>'), "URDF_UNKNOWN_GEOMETRY"),
    ("cone", doc('<visual><geometry><cone radius="1"/></geometry></visual>'), "URDF_UNKNOWN_GEOMETRY"),
    ("empty-geometry", doc('<collision><geometry/></collision>'), "URDF_MISSING_GEOMETRY"),
    ("no-geometry", doc('<visual><origin xyz="1 0 0"/></visual>'), "URDF_MISSING_GEOMETRY"),
    ("box-without-size", doc('<visual><geometry><box/></geometry></visual>'), "URDF_MISSING_ATTRIBUTE"),
    ("negative-radius", doc('<visual><geometry><sphere radius="-1"/></geometry></visual>'), "URDF_BAD_GEOMETRY"),
    ("visual-bad-origin", doc('<visual><origin rpy="0 0"/><geometry><sphere radius="1"/></geometry></visual>'),
     "URDF_BAD_VECTOR"),
    # mesh scale lists
    ("scale-two-values", doc('<visual><geometry><mesh filename="m.stl" scale="1 2"/></geometry></visual>'),
     "URDF_BAD_VECTOR"),
    ("scale-four-values", doc('<visual><geometry><mesh filename="m.stl" scale="1 2 3 4"/></geometry></visual>'),
     "URDF_BAD_VECTOR"),
    ("scale-commas", doc('<visual><geometry><mesh filename="m.stl" scale="1,2,3"/></geometry></visual>'),
     "URDF_BAD_NUMBER"),
    ("scale-word", doc('<collision><geometry><mesh filename="m.stl" scale="1 x 3"/></geometry></collision>'),
     "URDF_BAD_NUMBER"),
    ("mesh-without-filename", doc('<visual><geometry><mesh/></geometry></visual>'), "URDF_MISSING_ATTRIBUTE"),
    # robot-level materials urdfdom cannot read
    ("material-empty", doc().replace("<link name=\"b\"/>", '<link name="b"/><material name="m"/>'),
     "URDF_EMPTY_MATERIAL"),
    # limits: the order is checked from URDF 1.2 only
    ("limit-order-revolute", doc(joint='<limit lower="1" upper="-1" effort="1" velocity="1"/>'), "URDF_LIMIT_ORDER"),
    ("limit-order-1.1", doc(joint='<limit lower="0.5" upper="0" effort="1" velocity="1"/>', robot=' version="1.1"'),
     "URDF_LIMIT_ORDER"),
    # mimic urdfdom does not check: ignored
    ("mimic-missing-joint", doc(joint=LIMIT + '<mimic joint="ghost"/>'), "URDF_MIMIC_UNKNOWN_JOINT"),
    ("mimic-self", doc(joint=LIMIT + '<mimic joint="j" multiplier="2"/>'), "URDF_MIMIC_CYCLE"),
]


@pytest.mark.parametrize("text, code", [(t, c) for _, t, c in TOLERATED], ids=[i for i, _, _ in TOLERATED])
def test_urdfdom_tolerated_class_loads_with_a_warning(text: str, code: str) -> None:
    model = read_urdf(text, file="t.urdf")
    found = [d for d in model.warnings if d.code == code]
    assert found and all(d.file == "t.urdf" and d.line is not None for d in found)
    assert f"t.urdf:{found[0].line}: warning: [{code}]" in found[0].format()
    # the kinematics is that of the file without the dropped element
    plain = read_urdf(doc(), file="plain.urdf")
    q = {"j": 0.7}
    ours, ref = compile_model(model), compile_model(plain)
    np.testing.assert_allclose(fk.forward(ours, ours.q_from_mapping(q)), fk.forward(ref, ref.q_from_mapping(q)),
                               atol=1e-12, rtol=0)
    assert main(["check", "--strict", "-q", _write(text, found[0].code)]) == 1


def _write(text: str, stem: str) -> str:
    import tempfile

    d = Path(tempfile.mkdtemp(prefix="urdf-rule-"))
    path = d / f"{stem}.urdf"
    path.write_text(text)
    return str(path)


REFUSED = [
    ("version-1.2-limit-order", doc(joint='<limit lower="1" upper="-1" effort="1" velocity="1"/>',
                                    robot=' version="1.2"'), "URDF_LIMIT_ORDER"),
    ("version-1.2-missing-lower", doc(joint='<limit upper="1" effort="1" velocity="1"/>', robot=' version="1.2"'),
     "URDF_MISSING_ATTRIBUTE"),
    ("version-2.0", doc(robot=' version="2.0"'), "URDF_VERSION"),
    ("version-not-x.y", doc(robot=' version="1"'), "URDF_VERSION"),
    ("empty-dynamics", doc(joint=LIMIT + "<dynamics/>"), "URDF_EMPTY_DYNAMICS"),
    ("joint-origin-two-values", doc(joint=LIMIT).replace('xyz="0 0 1"', 'xyz="0 1"'), "URDF_BAD_VECTOR"),
    ("axis-two-values", doc(joint=LIMIT).replace('<axis xyz="0 1 0"/>', '<axis xyz="0 1"/>'), "URDF_BAD_VECTOR"),
    ("mimic-without-joint", doc(joint=LIMIT + "<mimic/>"), "URDF_MISSING_ATTRIBUTE"),
    ("no-limit", doc(joint=""), "URDF_MISSING_LIMIT"),
]


@pytest.mark.parametrize("text, code", [(t, c) for _, t, c in REFUSED], ids=[i for i, _, _ in REFUSED])
def test_urdfdom_refused_class_is_refused(text: str, code: str) -> None:
    with pytest.raises(ModelError) as info:
        read_urdf(text, file="t.urdf")
    assert code in [d.code for d in info.value.errors]


@pytest.mark.skipif(CHECK_URDF is None, reason=NO_CHECK_URDF)
@pytest.mark.parametrize("text, loads", [(t, True) for _, t, _ in TOLERATED] + [(t, False) for _, t, _ in REFUSED],
                         ids=[i for i, _, _ in TOLERATED] + [i for i, _, _ in REFUSED])
def test_urdfdom_gives_the_same_verdict(text: str, loads: bool, tmp_path: Path) -> None:
    assert CHECK_URDF is not None
    path = tmp_path / "t.urdf"
    path.write_text(text)
    assert (subprocess.run([CHECK_URDF, str(path)], capture_output=True, timeout=60).returncode == 0) == loads


def test_zero_axis_is_a_joint_that_does_not_move() -> None:
    # urdfdom loads it; Pinocchio's joint along a zero axis never moves
    model = read_urdf(doc().replace('<axis xyz="0 1 0"/>', '<axis xyz="0 0 0"/>'), file="z.urdf")
    assert [d.code for d in model.warnings] == ["URDF_ZERO_AXIS"]
    assert model.joints["j"].type.value == "fixed"


def test_a_second_parent_joint_is_a_loop_constraint() -> None:
    text = doc().replace("</robot>", '<link name="c"/><joint name="k" type="fixed"><parent link="a"/>'
                         '<child link="c"/></joint><joint name="loop" type="fixed"><parent link="b"/>'
                         '<child link="c"/></joint></robot>')
    model = read_urdf(text)
    assert "loop" in model.constraints and "loop" not in model.joints
    assert [d.code for d in model.warnings] == ["URDF_MULTIPLE_PARENTS"]


# -- xacro only when it is one ---------------------------------------------------------------------
UNEXPANDED = doc('<visual><geometry><box size="${size} 1 1"/></geometry></visual>', joint='<limit lower="-1" '
                 'upper="$(arg upper)" effort="1" velocity="1"/>')


def test_unexpanded_xacro_in_a_urdf_is_an_error_saying_how_to_expand(tmp_path: Path) -> None:
    path = tmp_path / "robot.urdf"
    path.write_text(UNEXPANDED)
    with pytest.raises(ModelError) as info:
        load_model_file(path)
    first = info.value.errors[0]
    assert first.code == "XACRO_UNEXPANDED" and first.line == 3
    assert "looks like unexpanded xacro" in first.message and "--xacro" in first.message
    assert "xacro FILE > out.urdf" in first.message


def test_xacro_expanded_when_asked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = UNEXPANDED.replace('<robot name="r">', '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                              '<xacro:property name="size" value="2"/><xacro:arg name="upper" default="1.5"/>')
    plain = text.replace(' xmlns:xacro="http://www.ros.org/wiki/xacro"', "")
    path = tmp_path / "robot.urdf"
    path.write_text(plain)  # no declaration: not expanded unless asked
    with pytest.raises(ModelError):
        load_model_file(path)
    model = load_model_file(path, xacro=True)
    assert model.joints["j"].limits.upper == 1.5
    assert model.links["a"].visuals[0].geometry.size == (2.0, 1.0, 1.0)
    assert main(["check", "-q", str(path)]) == 1
    assert "[XACRO_UNEXPANDED]" in capsys.readouterr().err
    for command in (["check", "-q"], ["frames", "--json"], ["fk", "--json"], ["convert", "--to", "sdf"]):
        assert main([*command, "--xacro", str(path)]) == 0, command
    assert main(["state", "from-model", "--xacro", str(path), "--positions", '{"j": 0.5}',
                 "-o", str(tmp_path / "s.usdf")]) == 0
    capsys.readouterr()
    declared = tmp_path / "declared.urdf"  # a root declaring xmlns:xacro is expanded
    declared.write_text(text)
    assert load_model_file(declared).joints["j"].limits.upper == 1.5
    assert load_model(text).joints["j"].limits.upper == 1.5


def test_xacro_text_urdfdom_reads_loads_with_a_warning(tmp_path: Path) -> None:
    # a $(find ...) left in a mesh file name: urdfdom loads it (the name is a string), so do we
    text = doc('<visual><geometry><mesh filename="$(find pkg)/m.stl"/></geometry></visual>')
    path = tmp_path / "robot.urdf"
    path.write_text(text)
    model = load_model_file(path)
    assert [d.code for d in model.warnings][:1] == ["XACRO_UNEXPANDED"]
    assert model.links["a"].visuals[0].geometry.filename == "$(find pkg)/m.stl"
    if CHECK_URDF is not None:
        assert subprocess.run([CHECK_URDF, str(path)], capture_output=True, timeout=60).returncode == 0


def test_xacro_elements_without_a_declaration_are_kept_as_extensions() -> None:
    model = read_urdf('<robot name="r"><xacro:property name="a" value="1"/><link name="a"/></robot>')
    assert [d.code for d in model.warnings] == ["URDF_UNDECLARED_PREFIX"]
    assert list(model.links) == ["a"]
