"""Every URDF rule has a minimal file in test/fixtures/urdf/ (refused) or test/fixtures/urdf/tolerated/
(loaded with a warning, as urdfdom loads it): the reader must report exactly that rule's code, on the
line marked ``<!-- X -->``, and nothing else. Where urdfdom's ``check_urdf`` is installed (``pin``),
its verdict on every fixture is checked to be the same."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from repo_paths import TEST_DIR

from robot_state_format.errors import ModelError, RobotStateFormatError, Severity
from robot_state_format.model.urdf.reader import read_urdf

FIXTURES = TEST_DIR / "fixtures" / "urdf"

# file stem -> the one error code expected (the line is the one marked in the file)
EXPECTED = {
    "missing_robot_name": "URDF_MISSING_NAME",
    "missing_joint_name": "URDF_MISSING_NAME",
    "duplicate_link": "URDF_DUPLICATE_LINK",
    "duplicate_joint": "URDF_DUPLICATE_JOINT",
    "duplicate_material": "URDF_DUPLICATE_MATERIAL",
    "two_roots": "URDF_MULTIPLE_ROOTS",
    "drake_joints": "URDF_MULTIPLE_ROOTS",
    "no_root": "URDF_NO_ROOT",
    "no_links": "URDF_NO_LINKS",
    "unknown_parent": "URDF_UNKNOWN_LINK",
    "unknown_child": "URDF_UNKNOWN_LINK",
    "self_joint": "URDF_SELF_JOINT",
    "missing_parent": "URDF_MISSING_PARENT",
    "missing_child": "URDF_MISSING_CHILD",
    "missing_joint_type": "URDF_MISSING_JOINT_TYPE",
    "bad_joint_type": "URDF_BAD_JOINT_TYPE",
    "drake_bad_joint_type": "URDF_BAD_JOINT_TYPE",
    "missing_limit": "URDF_MISSING_LIMIT",
    "limit_no_effort": "URDF_MISSING_ATTRIBUTE",
    "bad_axis_vector": "URDF_BAD_VECTOR",
    "bad_number": "URDF_BAD_NUMBER",
    "limit_order_v12": "URDF_LIMIT_ORDER",
    "limit_v12_without_lower": "URDF_MISSING_ATTRIBUTE",
    "unsupported_version": "URDF_VERSION",
    "version_not_x_y": "URDF_VERSION",
    "empty_dynamics": "URDF_EMPTY_DYNAMICS",
    "missing_mimic_joint": "URDF_MISSING_ATTRIBUTE",
    "screw_without_pitch": "URDF_MISSING_SCREW_PITCH",
    "not_robot": "URDF_NOT_ROBOT",
    "malformed": "XML_SYNTAX",
}
DRAKE_JOINT_FIXTURES = {"drake_bad_joint_type", "screw_without_pitch"}


def _marked_line(path: Path) -> int:
    lines = [i for i, text in enumerate(path.read_text().splitlines(), 1) if "<!-- X -->" in text]
    assert len(lines) == 1, path
    return lines[0]


# what urdfdom loads (logging it, or not checking it at all): a warning, never a refusal
TOLERATED = {
    "box_without_size": "URDF_MISSING_ATTRIBUTE",
    "empty_geometry": "URDF_MISSING_GEOMETRY",
    "empty_material": "URDF_EMPTY_MATERIAL",
    "inertia_missing_attr": "URDF_MISSING_ATTRIBUTE",
    "limit_order": "URDF_LIMIT_ORDER",
    "material_without_name": "URDF_MISSING_NAME",
    "mesh_without_filename": "URDF_MISSING_ATTRIBUTE",
    "mimic_cycle": "URDF_MIMIC_CYCLE",
    "mimic_multi_dof_leader": "URDF_MIMIC_JOINT_TYPE",
    "mimic_self": "URDF_MIMIC_CYCLE",
    "mimic_unknown": "URDF_MIMIC_UNKNOWN_JOINT",
    "missing_inertia": "URDF_MISSING_INERTIA",
    "missing_link_name": "URDF_MISSING_NAME",
    "missing_mass": "URDF_MISSING_MASS",
    "negative_mass": "URDF_NEGATIVE_MASS",
    "negative_radius": "URDF_BAD_GEOMETRY",
    "two_parents": "URDF_MULTIPLE_PARENTS",
    "unknown_geometry": "URDF_UNKNOWN_GEOMETRY",
    "unreachable_cycle": "URDF_CYCLE",
    "visual_no_geometry": "URDF_MISSING_GEOMETRY",
    "zero_axis": "URDF_ZERO_AXIS",
}
CHECK_URDF = next((str(p) for p in [Path(sys.executable).parent / "check_urdf"] if p.is_file()), None)
NO_CHECK_URDF = "urdfdom's check_urdf is not installed (pip install pin)"


def test_every_fixture_has_an_expectation() -> None:
    assert sorted(p.stem for p in FIXTURES.glob("*.urdf")) == sorted(EXPECTED)
    assert sorted(p.stem for p in (FIXTURES / "tolerated").glob("*.urdf")) == sorted(TOLERATED)


@pytest.mark.parametrize("stem", sorted(TOLERATED))
def test_tolerated_fixture_loads_with_its_warning(stem: str) -> None:
    path = FIXTURES / "tolerated" / f"{stem}.urdf"
    model = read_urdf(path.read_bytes(), file=str(path))
    assert [(d.code, d.line) for d in model.warnings if d.code == TOLERATED[stem]] == \
        [(TOLERATED[stem], _marked_line(path))]
    w = next(d for d in model.warnings if d.code == TOLERATED[stem])
    assert w.format().startswith(f"{path}:{_marked_line(path)}: warning: [{TOLERATED[stem]}] ")


@pytest.mark.skipif(CHECK_URDF is None, reason=NO_CHECK_URDF)
@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.urdf")) + sorted((FIXTURES / "tolerated").glob("*.urdf")),
                         ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_verdict_is_urdfdoms(path: Path) -> None:
    assert CHECK_URDF is not None
    ref = subprocess.run([CHECK_URDF, str(path)], capture_output=True, timeout=60).returncode == 0
    assert ref == (path.parent.name == "tolerated")


@pytest.mark.parametrize("stem", sorted(EXPECTED))
def test_invalid_fixture_reports_its_rule(stem: str) -> None:
    path = FIXTURES / f"{stem}.urdf"
    with pytest.raises(ModelError) as info:
        read_urdf(path.read_bytes(), file=str(path))
    errors = info.value.errors
    # a drake:joint is also a second root link for urdfdom (its reason to refuse these files)
    also = [("URDF_MULTIPLE_ROOTS", _marked_line(path))] if stem in DRAKE_JOINT_FIXTURES else []
    assert [(d.code, d.line) for d in errors] == [(EXPECTED[stem], _marked_line(path))] + also
    assert errors[0].file == str(path)
    assert info.value.code == EXPECTED[stem]
    assert errors[0].format().startswith(f"{path}:{_marked_line(path)}: error: [{EXPECTED[stem]}] ")


def test_codes_are_distinct_per_rule() -> None:
    # the structural rules of the primer each have their own code
    structural = {"two_roots", "no_root", "unreachable_cycle", "no_links", "unknown_parent", "self_joint",
                  "two_parents", "duplicate_link", "duplicate_joint", "mimic_unknown", "mimic_cycle",
                  "limit_order", "missing_limit", "zero_axis"}
    codes = {{**EXPECTED, **TOLERATED}[s] for s in structural}
    assert len(codes) == len(structural)
    assert EXPECTED["unknown_parent"] == EXPECTED["unknown_child"]  # one rule: the link must exist


# The primer's kinematic-loop example: joint D makes link D the child of two joints.
PRIMER_LOOP = """<robot name = "linkage">
\t<link name = "link A"/>
\t<link name = "link B"/>
\t<link name = "link C"/>
\t<link name = "link D"/>
\t<joint name = "joint A" type = "fixed">
\t\t<parent link = "link A" />
\t\t<child link = "link B" />
\t</joint>
\t<joint name = "joint B" type = "fixed">
\t\t<parent link = "link A" />
\t\t<child link = "link C" />
\t</joint>
\t<joint name = "joint C" type = "fixed">
\t\t<parent link = "link C" />
\t\t<child link = "link D" />
\t</joint>
\t<joint name = "joint D" type = "fixed">
\t\t<parent link = "link B" />
\t\t<child link = "link D" />
\t</joint>
</robot>
"""


def test_primer_loop_example_loads_with_the_loop_as_a_constraint() -> None:
    # urdfdom loads it; the second joint into link D closes a loop and stays out of the tree
    model = read_urdf(PRIMER_LOOP, file="loop.urdf")
    warnings = [d for d in model.warnings if d.code == "URDF_MULTIPLE_PARENTS"]
    assert len(warnings) == 1 and warnings[0].line == 18  # the <joint name = "joint D"> line
    assert "'joint C'" in warnings[0].message and "'joint D'" in warnings[0].message
    assert "'link D'" in warnings[0].message
    assert list(model.constraints) == ["joint D"] and "joint D" not in model.joints
    assert model.links["link D"].pose is not None


def test_primer_tree_without_joint_d_is_valid() -> None:
    lines = PRIMER_LOOP.splitlines()
    tree = "\n".join(lines[:17] + lines[21:])
    model = read_urdf(tree)
    assert model.root_links() == ["link A"]
    assert set(model.joints) == {"joint A", "joint B", "joint C"}


def test_all_errors_are_collected_into_one_model_error() -> None:
    text = """<robot name="r">
  <link name="a"/>
  <link name="a"/>
  <joint name="j" type="revolute">
    <parent link="a"/>
    <child link="b"/>
    <axis xyz="0 0 0"/>
  </joint>
</robot>"""
    with pytest.raises(ModelError) as info:
        read_urdf(text)
    got = {(d.code, d.line) for d in info.value.errors}
    assert got == {("URDF_DUPLICATE_LINK", 3), ("URDF_UNKNOWN_LINK", 4), ("URDF_MISSING_LIMIT", 4)}
    assert [(d.code, d.line) for d in info.value.diagnostics if d.severity is Severity.WARNING] == \
        [("URDF_ZERO_AXIS", 7)]
    assert isinstance(info.value, RobotStateFormatError)


def test_mimic_chain_resolves() -> None:
    from robot_state_format.model.urdf.validate import mimic_leader

    text = """<robot name="r">
  <link name="a"/><link name="b"/><link name="c"/><link name="d"/>
  <joint name="j1" type="continuous"><parent link="a"/><child link="b"/></joint>
  <joint name="j2" type="continuous"><parent link="b"/><child link="c"/>
    <mimic joint="j1" multiplier="2" offset="0.5"/></joint>
  <joint name="j3" type="continuous"><parent link="c"/><child link="d"/>
    <mimic joint="j2" multiplier="-3" offset="1"/></joint>
</robot>"""
    model = read_urdf(text)
    # q3 = -3 q2 + 1 = -3 (2 q1 + 0.5) + 1 = -6 q1 - 0.5
    assert mimic_leader(model, "j3") == ("j1", -6.0, -0.5)
    assert mimic_leader(model, "j1") == ("j1", 1.0, 0.0)


@pytest.mark.parametrize("body, code", [
    ('<joint name="j" type="revolute"><parent link="a"/><child link="b"/>'
     '<limit lower="0.5" upper="0.5" effort="1" velocity="1"/></joint>', "URDF_ZERO_RANGE_LIMIT"),
    ('<joint name="j" type="fixed"><parent link="a"/><child link="b"/><mimic joint="k"/></joint>'
     '<joint name="k" type="continuous"><parent link="b"/><child link="c"/></joint>', "URDF_MIMIC_IGNORED"),
    ('<material name="unused"><color rgba="1 1 1 1"/></material>', "URDF_UNUSED_MATERIAL"),
])
def test_warnings_do_not_fail(body: str, code: str) -> None:
    links = '<link name="a"/><link name="b"/>' + ('<link name="c"/>' if 'name="k"' in body else "")
    if "<joint" not in body:
        links = '<link name="a"/>'
    model = read_urdf(f'<robot name="r">{links}{body}</robot>', file="w.urdf")
    assert [d.code for d in model.warnings] == [code]
    assert all(d.severity is Severity.WARNING for d in model.warnings)
    assert model.warnings[0].format().startswith("w.urdf:1: warning: [" + code + "]")
