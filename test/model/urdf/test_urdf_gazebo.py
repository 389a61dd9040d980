"""A plain URDF keeps urdfdom's verdict; what libsdformat 12's URDF conversion (Gazebo) refuses is a
warning naming it, and ``check --gazebo`` gives libsdformat's verdict (model/urdf/gazebo.py).

Every expectation below was measured with conformance/sdf_ref (libsdformat 12.3): the documents it
refuses ("A model must have at least one link", "A link named ... has invalid inertia", "sensor with
name[s] already exists") and those it loads.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from repo_paths import REPO_ROOT

from robot_state_format.errors import Severity
from robot_state_format.model.inertia import valid_mass_matrix
from robot_state_format.model.loader import load_model, load_model_file
from robot_state_format.model.urdf import gazebo as urdf_gazebo

ROOT = REPO_ROOT
sys.path.insert(0, str(ROOT / "conformance"))
from references import run_sdf_ref, sdf_ref_path  # noqa: E402

MASS = '<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>'
REV = '<axis xyz="0 0 1"/><limit effort="1" velocity="1" lower="-1" upper="1"/>'


def _joint(name: str, kind: str, parent: str, child: str) -> str:
    extra = REV if kind == "revolute" else ""
    return f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>{extra}</joint>'


def _robot(*parts: str) -> str:
    return '<robot name="r">\n' + "\n".join(parts) + "\n</robot>\n"


def _gazebo_codes(text: str) -> list[str]:
    model = load_model(text, file="r.urdf")
    out = [d.code for d in model.warnings if d.message.startswith("libsdformat 12 (Gazebo) refuses this URDF: ")]
    assert all(d.severity is Severity.WARNING for d in model.warnings)
    return out


# libsdformat drops a link without mass with everything below it; a fixed joint lumps its child's mass
# into the parent first (not to the world, not with disableFixedJointLumping)
@pytest.mark.parametrize("text,refused", [
    (_robot('<link name="b"/>'), True),
    (_robot('<link name="b"><inertial><mass value="0"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>'
            "</inertial></link>"), True),
    (_robot('<link name="b"/>', f'<link name="c">{MASS}</link>', _joint("j", "revolute", "b", "c")), True),
    (_robot('<link name="b"/>', f'<link name="c">{MASS}</link>', _joint("j", "fixed", "b", "c")), False),
    (_robot('<link name="b"/>', f'<link name="c">{MASS}</link>', _joint("j", "fixed", "b", "c"),
            '<gazebo reference="j"><disableFixedJointLumping>true</disableFixedJointLumping></gazebo>'), True),
    (_robot('<link name="world"/>', '<link name="c"/>', _joint("j", "revolute", "world", "c")), True),
    (_robot('<link name="world"/>', f'<link name="c">{MASS}</link>', _joint("j", "fixed", "world", "c")), False),
    (_robot('<link name="world"/>', '<link name="c"/>', f'<link name="d">{MASS}</link>',
            _joint("j", "revolute", "world", "c"), _joint("j2", "fixed", "c", "d")), False),
    (_robot(f'<link name="b">{MASS}</link>', '<link name="c"/>', _joint("j", "revolute", "b", "c")), False),
    # urdfdom 6 ignores an <inertial> without <inertia> (URDF_MISSING_INERTIA); libsdformat 12 keeps its mass
    (_robot('<link name="b"><inertial><mass value="0.5"/></inertial></link>'), False),
])
def test_no_link_with_a_mass_is_what_libsdformat_refuses(text: str, refused: bool) -> None:
    assert _gazebo_codes(text) == (["SDF_URDF_NO_LINK"] if refused else [])


def test_invalid_inertia_is_a_warning_with_line_and_link() -> None:
    text = _robot('<link name="a">\n<inertial><mass value="2"/><inertia ixx="0.1" ixy="0.2" ixz="0.3" iyy="0.4" '
                  'iyz="0.5" izz="0.6"/></inertial></link>')
    model = load_model(text, file="r.urdf")
    (d,) = model.warnings
    assert (d.code, d.severity, d.file, d.line, d.element) == ("SDF_INVALID_INERTIA", Severity.WARNING, "r.urdf", 2,
                                                               "link[name=a]")
    assert d.message == ("libsdformat 12 (Gazebo) refuses this URDF: link 'a' has an invalid inertia (mass 2, "
                         "ixx ixy ixz iyy iyz izz 0.1 0.2 0.3 0.4 0.5 0.6)")


@pytest.mark.parametrize("text,refused", [
    # an invalid inertia lumped into a link with a heavy valid one by a fixed joint: valid after lumping
    (_robot('<link name="a"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="5"/>'
            '</inertial></link>', '<link name="b"><inertial><mass value="100"/><origin xyz="1 0 0"/>'
            '<inertia ixx="10" ixy="0" ixz="0" iyy="10" iyz="0" izz="10"/></inertial></link>',
            _joint("j", "fixed", "a", "b")), False),
    # ... and with a light one: still invalid
    (_robot('<link name="a"><inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="5"/>'
            '</inertial></link>', '<link name="b"><inertial><mass value="0.001"/>'
            '<inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>',
            _joint("j", "fixed", "a", "b")), True),
    # an invalid inertia below a link without mass: dropped with it, never checked
    (_robot(f'<link name="a">{MASS}</link>', '<link name="b"/>', '<link name="c"><inertial><mass value="1"/>'
            '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="5"/></inertial></link>',
            _joint("j", "revolute", "a", "b"), _joint("j2", "revolute", "b", "c")), False),
])
def test_inertia_checked_after_the_conversion_lumps_and_drops(text: str, refused: bool) -> None:
    assert _gazebo_codes(text) == (["SDF_INVALID_INERTIA"] if refused else [])


@pytest.mark.parametrize("joint,refused", [("revolute", True), ("fixed", False)])
def test_a_joint_named_like_a_link(joint: str, refused: bool) -> None:
    """SDFormat links and joints share one namespace; a fixed joint is lumped away (no clash)."""
    text = _robot(f'<link name="a">{MASS}</link>', f'<link name="b">{MASS}</link>', _joint("b", joint, "a", "b"))
    assert _gazebo_codes(text) == (["SDF_NAME_CLASH"] if refused else [])


def test_duplicate_sensor_names_from_gazebo_extensions() -> None:
    sensor = '<sensor name="s" type="imu"/>'
    text = _robot(f'<link name="a">{MASS}</link>', f'<gazebo reference="a">{sensor}</gazebo>',
                  f'<gazebo reference="a">\n{sensor}</gazebo>', f'<gazebo reference="b">{sensor}</gazebo>')
    model = load_model(text, file="r.urdf")
    (d,) = model.warnings
    assert (d.code, d.line, d.element) == ("SDF_DUPLICATE_SENSOR", 5, "sensor[name=s]")


@pytest.mark.parametrize("lumping,refused", [("fixed", True), ("revolute", False)])
def test_gazebo_joint_to_a_link_fixed_joint_reduction_removes(lumping: str, refused: bool) -> None:
    """A ``<gazebo><joint>`` naming a link the conversion lumps into its parent: libsdformat refuses it
    ("parent frame with name[c] ... not found"); when the joint to c moves, c stays and it loads."""
    ball = '<gazebo>\n<joint name="g" type="ball"><parent>c</parent><child>d</child></joint></gazebo>'
    text = _robot(f'<link name="b">{MASS}</link>', f'<link name="c">{MASS}</link>', f'<link name="d">{MASS}</link>',
                  _joint("j1", lumping, "b", "c"), _joint("j2", "revolute", "c", "d"), ball)
    model = load_model(text, file="r.urdf")
    got = [(d.code, d.line, d.element) for d in model.warnings if d.code == "SDF_JOINT_FRAME_NOT_FOUND"]
    assert got == ([("SDF_JOINT_FRAME_NOT_FOUND", 8, "joint[name=g]")] if refused else [])


@pytest.mark.parametrize("version,refused", [(None, False), ("1.0", False), ("1.00", False), ("1.1", True),
                                             ("1.2", True)])
def test_urdf_version_libsdformats_urdfdom_reads(version: str | None, refused: bool) -> None:
    """libsdformat 12.3's urdfdom reads version 1.0 only ("only version 1.0 is currently supported");
    urdfdom here reads 1.0 to 1.2, so 1.1 and 1.2 load with the warning."""
    attr = f' version="{version}"' if version is not None else ""
    text = f'<robot name="r"{attr}>\n<link name="b">{MASS}</link>\n</robot>\n'
    model = load_model(text, file="r.urdf")
    got = [(d.code, d.line, d.element) for d in model.warnings if d.code == "SDF_URDF_VERSION"]
    assert got == ([("SDF_URDF_VERSION", 1, "robot")] if refused else [])


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "robot_state_format", "check", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)


def test_one_flag_one_verdict_plain_and_strict_are_urdfdoms_gazebo_is_libsdformats(tmp_path: Path) -> None:
    """A URDF of massless links (as drawn for RViz): urdfdom loads it, Gazebo's conversion refuses it
    (SDF_URDF_NO_LINK). Plain ``check`` and ``--strict`` (urdfdom's verdict plus the file's own lint, which this
    file passes) accept it, saying in a note what Gazebo would do; ``--gazebo`` refuses it."""
    path = tmp_path / "no_mass.urdf"
    path.write_text(_robot('<link name="b"/>'))
    plain = _check(str(path))
    strict = _check("--strict", str(path))
    gazebo = _check("--gazebo", str(path))
    assert (plain.returncode, strict.returncode, gazebo.returncode) == (0, 0, 1)
    note = f"{path}:2: note: [SDF_URDF_NO_LINK] libsdformat 12 (Gazebo) refuses this URDF: "
    assert note in plain.stdout and note in strict.stdout and ": warning:" not in plain.stdout
    assert plain.stdout.rstrip().endswith("0 warnings; Gazebo would refuse it (check --gazebo)")
    assert gazebo.stderr.startswith(f"{path}:2: error: [SDF_URDF_NO_LINK] libsdformat 12 (Gazebo) refuses this URDF: ")
    # a lint warning of the file's own still fails --strict, and only --strict
    lint = tmp_path / "zero_range.urdf"
    lint.write_text(_robot(f'<link name="b">{MASS}</link>', f'<link name="c">{MASS}</link>',
                           '<joint name="j" type="revolute"><parent link="b"/><child link="c"/><axis xyz="0 0 1"/>'
                           '<limit effort="1" velocity="1" lower="0" upper="0"/></joint>'))
    assert [_check(*a, str(lint)).returncode for a in ((), ("--strict",), ("--gazebo",))] == [0, 1, 0]


def test_check_gazebo_gives_libsdformats_verdict_and_keeps_its_warnings(tmp_path: Path) -> None:
    """``--gazebo``: what libsdformat refuses is an error (stderr, exit 1) listed before the file's other
    warnings; what it loads passes even with warnings (unlike ``--strict``): a joint whose limits are equal
    is a lint warning here and loads in libsdformat."""
    refused = tmp_path / "inertia.urdf"
    refused.write_text(_robot('<link name="b"><inertial><mass value="1"/>'
                              '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="3"/></inertial></link>',
                              f'<link name="c">{MASS}</link>',
                              '<joint name="j" type="revolute"><parent link="b"/><child link="c"/><axis xyz="0 0 1"/>'
                              '<limit effort="1" velocity="1" lower="0" upper="0"/></joint>'))
    loads = tmp_path / "zero_range.urdf"
    loads.write_text(_robot(f'<link name="b">{MASS}</link>', f'<link name="c">{MASS}</link>',
                            '<joint name="j" type="revolute"><parent link="b"/><child link="c"/><axis xyz="0 0 1"/>'
                            '<limit effort="1" velocity="1" lower="0" upper="0"/></joint>'))
    out = _check("--gazebo", str(refused))
    assert out.returncode == 1 and out.stdout == ""
    lines = out.stderr.splitlines()
    assert lines[0].startswith(f"{refused}:2: error: [SDF_INVALID_INERTIA] libsdformat 12 (Gazebo) refuses this URDF: "
                               "link 'b' has an invalid inertia")
    assert [ln.split(": ")[1:3] for ln in lines[1:]] == [["warning", "[URDF_ZERO_RANGE_LIMIT] joint 'j' has lower == "
                                                          "upper limit; it cannot move (limit)"]]
    assert _check(str(refused)).returncode == 0  # urdfdom's verdict, as robot_state_publisher loads it
    ok = _check("--gazebo", str(loads))
    assert ok.returncode == 0 and ": warning: [URDF_ZERO_RANGE_LIMIT]" in ok.stdout
    assert _check("--strict", str(loads)).returncode == 1
    both = _check("--gazebo", "-q", str(loads), str(refused))  # one exit code for the set: the worst
    assert both.returncode == 1 and "valid" not in both.stdout


def test_check_gazebo_keeps_sdformat_verdicts() -> None:
    """SDFormat is judged by libsdformat with or without ``--gazebo``."""
    for name in ("nested_world.sdf", "table.sdf"):
        sample = str(ROOT / "robot_state_format" / "samples" / name)
        assert _check("--gazebo", sample).returncode == _check(sample).returncode == 0


@pytest.mark.parametrize("case", ["no_link", "inertia", "sensor", "clash", "version", "joint_frame", "loads"])
def test_check_gazebo_equals_libsdformat_on_each_class(case: str, tmp_path: Path) -> None:
    """The verdict of ``check --gazebo`` on one URDF of each refusal class (and one that loads) is the
    verdict of libsdformat 12.3 itself (conformance/sdf_ref, skipped when not built)."""
    exe = sdf_ref_path()
    if exe is None:
        pytest.skip("libsdformat's reference program needs libsdformat-dev (12.x), pkg-config and g++")
    sensor = '<sensor name="s" type="imu"/>'
    texts = {
        "no_link": _robot('<link name="b"/>'),
        "inertia": _robot('<link name="b"><inertial><mass value="1"/>'
                          '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="3"/></inertial></link>'),
        "sensor": _robot(f'<link name="a">{MASS}</link>', f'<gazebo reference="a">{sensor}</gazebo>',
                         f'<gazebo reference="a">{sensor}</gazebo>'),
        "clash": _robot(f'<link name="a">{MASS}</link>', f'<link name="b">{MASS}</link>',
                        _joint("b", "revolute", "a", "b")),
        "version": f'<robot name="r" version="1.1">\n<link name="b">{MASS}</link>\n</robot>\n',
        "joint_frame": _robot(f'<link name="b">{MASS}</link>', f'<link name="c">{MASS}</link>',
                              f'<link name="d">{MASS}</link>', _joint("j1", "fixed", "b", "c"),
                              _joint("j2", "revolute", "c", "d"),
                              '<gazebo><joint name="g" type="ball"><parent>c</parent><child>d</child></joint></gazebo>'),
        "loads": _robot(f'<link name="b">{MASS}</link>', f'<link name="c">{MASS}</link>',
                        _joint("j", "revolute", "b", "c")),
    }
    path = tmp_path / f"{case}.urdf"
    path.write_text(texts[case])
    ref = run_sdf_ref(exe, path, [str(tmp_path)])
    assert ref.loads == (case == "loads"), ref.errors
    assert (_check("--gazebo", str(path)).returncode == 0) == ref.loads
    assert _check(str(path)).returncode == 0  # urdfdom loads every one of them


def test_samples_libsdformat_loads_get_no_such_warning() -> None:
    """The URDF samples libsdformat loads (conformance/sdf_ref) get none of these warnings."""
    for name in ("arm7_gripper.urdf", "double_pendulum.urdf"):
        model = load_model_file(ROOT / "robot_state_format" / "samples" / name)
        assert [d.code for d in model.warnings if d.code.startswith("SDF_")] == []


def test_the_mass_matrix_test_is_the_eigenvalue_test() -> None:
    """valid_mass_matrix's shortcuts (diagonal, Gershgorin bounds) decide as the principal moments do:
    non-negative, triangle inequality, within libsdformat's tolerance (computed here with numpy)."""
    rng = np.random.default_rng(7)
    for _ in range(3000):
        d = rng.uniform(-0.1, 2.0, 3)
        o = rng.uniform(-0.5, 0.5, 3) * (rng.uniform(size=3) < 0.6)
        six = (d[0], o[0], o[1], d[1], o[2], d[2])
        moi = np.array([[d[0], o[0], o[1]], [o[0], d[1], o[2]], [o[1], o[2], d[2]]])
        m = np.linalg.eigvalsh(moi)
        eps = 10 * np.finfo(float).eps * 0.5 * abs(m.sum())
        minors = d[0] >= -eps and d[0] * d[1] - o[0] ** 2 >= -eps and np.linalg.det(moi) >= -eps
        expected = bool(minors and m[0] >= -eps and m[0] + m[1] + eps >= m[2])
        assert valid_mass_matrix(1.0, six) == expected, six


def test_lumped_mass_matrix_of_two_half_cubes_is_the_cube() -> None:
    """Two half cubes (1 x 1 x 0.5, 6 kg each) joined by a fixed joint, the upper one turned 90 deg about x:
    the lumped link is the unit cube of 12 kg, centre 0.5 above the base, moments m (1 + 1) / 12 = 2."""
    half = '<inertia ixx="0.625" ixy="0" ixz="0" iyy="{}" iyz="0" izz="{}"/>'
    text = _robot(f'<link name="base"><inertial><mass value="6"/><origin xyz="0 0 0.25"/>{half.format(0.625, 1.0)}'
                  "</inertial></link>",
                  f'<link name="top"><inertial><mass value="6"/>{half.format(1.0, 0.625)}</inertial></link>',
                  '<joint name="j" type="fixed"><origin rpy="1.5707963267948966 0 0" xyz="0 0 0.75"/>'
                  '<parent link="base"/><child link="top"/></joint>')
    (name, lumped), = urdf_gazebo._converted_links(load_model(text, file="r.urdf"))
    assert name == "base" and lumped is not None and lumped.mass == 12.0
    np.testing.assert_allclose(lumped.com, [0, 0, 0.5], atol=1e-12, rtol=0)
    np.testing.assert_allclose(lumped.six(), [2, 0, 0, 2, 0, 2], atol=1e-12, rtol=0)


def test_readme_fixture_has_both_verdicts() -> None:
    """test/fixtures/urdf/gazebo/invalid_inertia.urdf (the README's example): urdfdom loads it, libsdformat
    refuses it (both measured when their programs are here); ``check`` and ``check --gazebo`` say so."""
    path = ROOT / "test" / "fixtures" / "urdf" / "gazebo" / "invalid_inertia.urdf"
    check_urdf = Path(sys.executable).parent / "check_urdf"
    if check_urdf.is_file():
        assert subprocess.run([str(check_urdf), str(path)], capture_output=True, timeout=60).returncode == 0
    exe = sdf_ref_path()
    if exe is not None:
        assert run_sdf_ref(exe, path, [str(path.parent)]).errors[0]["message"] == "A link named arm has invalid inertia."
    assert _check(str(path)).returncode == 0
    out = _check("--gazebo", str(path))
    assert out.returncode == 1
    assert out.stderr.startswith(f"{path}:11: error: [SDF_INVALID_INERTIA] libsdformat 12 (Gazebo) refuses this URDF: "
                                 "link 'arm' has an invalid inertia")


# a link that is the child of two joints (a loop urdfdom loads): libsdformat's conversion creates it once
# per parent with urdfdom's parent joint (the last by name), unless that joint is fixed and lumped away
LOOP = [f'<link name="{n}">{MASS}</link>' for n in "abc"]


@pytest.mark.parametrize("joints,refused", [
    ((_joint("j1", "revolute", "a", "b"), _joint("j2", "revolute", "b", "c"), _joint("j3", "revolute", "a", "c")),
     True),
    ((_joint("j1", "revolute", "a", "b"), _joint("j2", "revolute", "b", "c"), _joint("j3", "fixed", "a", "c")),
     False),
    ((_joint("j1", "revolute", "a", "b"), _joint("j2", "fixed", "b", "c"), _joint("j3", "revolute", "a", "c")),
     True),
    ((_joint("j1", "revolute", "a", "b"), _joint("z2", "revolute", "b", "c"), _joint("j3", "fixed", "a", "c")),
     True),
    ((_joint("j1", "revolute", "a", "b"), _joint("j2", "revolute", "b", "c"), _joint("j3", "fixed", "a", "c"),
      '<gazebo reference="j3"><preserveFixedJoint>true</preserveFixedJoint></gazebo>'), True),
])
def test_link_child_of_two_joints_as_libsdformat_converts_it(joints: tuple[str, ...], refused: bool,
                                                             tmp_path: Path) -> None:
    text = _robot(*LOOP, *joints)
    codes = _gazebo_codes(text)
    assert codes == (["SDF_DUPLICATE_NAME", "SDF_DUPLICATE_NAME"] if refused else [])
    exe = sdf_ref_path()
    if exe is None:
        pytest.skip("libsdformat-dev not installed: sdf_ref cannot be built")
    path = tmp_path / "loop.urdf"
    path.write_text(text, encoding="utf-8")
    ref = run_sdf_ref(exe, path)
    assert ref.loads is not refused, ref.errors
    if refused:
        assert {e["code"] for e in ref.errors} == {2}  # DUPLICATE_NAME, for the link and the joint
