"""``robot-state-format check``: exit 0 valid (warnings on stdout), 1 invalid (errors on stderr),
2 usage or I/O error; format detection; xacro arguments; several files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT, TEST_DIR

from robot_state_format.cli import main

ROOT = REPO_ROOT
SAMPLES = ROOT / "robot_state_format" / "samples"
FIXTURES = TEST_DIR / "fixtures" / "urdf"


def test_valid_sample_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(SAMPLES / "arm7_gripper.urdf")]) == 0
    out = capsys.readouterr()
    assert "valid urdf model 'arm7_gripper': 12 links, 11 joints" in out.out
    assert out.err == ""


def test_warnings_are_printed_and_do_not_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "w.urdf"
    path.write_text('<robot name="w">\n  <material name="unused"><color rgba="1 0 0 1"/></material>\n'
                    '  <link name="a"/>\n</robot>\n')
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{path}:2: warning: [URDF_UNUSED_MATERIAL] material 'unused' is never used" in out


def test_invalid_file_exits_one_with_errors_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "duplicate_link.urdf"
    assert main(["check", str(path)]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    lines = out.err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"{path}:3: error: [URDF_DUPLICATE_LINK] link name 'a' is already used")


def test_strict_fails_on_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "tolerated" / "two_parents.urdf"
    assert main(["check", str(path)]) == 0
    assert f"{path}:9: warning: [URDF_MULTIPLE_PARENTS] link 'c' is the child of both joint 'j1'" \
        in capsys.readouterr().out
    assert main(["check", "--strict", str(path)]) == 1
    assert "[URDF_MULTIPLE_PARENTS]" in capsys.readouterr().out
    assert main(["check", "--strict", str(SAMPLES / "double_pendulum.urdf")]) == 0


def test_every_error_is_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "e.urdf"
    path.write_text('<robot name="e">\n<link name="a"/>\n<link name="a"/>\n'
                    '<joint name="j" type="hinge"><parent link="a"/><child link="zz"/></joint>\n</robot>\n')
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert [line.split("[")[1].split("]")[0] for line in err] == \
        ["URDF_DUPLICATE_LINK", "URDF_BAD_JOINT_TYPE", "URDF_UNKNOWN_LINK"]
    assert [line.split(":")[1] for line in err] == ["3", "4", "4"]


def test_missing_file_exits_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(tmp_path / "nope.urdf")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_usage_errors_exit_two(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check"]) == 2
    assert main(["check", "--xacro-arg", "novalue", str(SAMPLES / "arm7_gripper.urdf")]) == 2


def test_unknown_format_is_invalid(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "thing.xml"
    path.write_text("<thing/>")  # (<mujoco/> is MJCF now: an empty model MuJoCo loads, test_mjcf_reader.py)
    assert main(["check", str(path)]) == 1
    assert "[MODEL_UNKNOWN_FORMAT]" in capsys.readouterr().err


def test_several_files_worst_status_wins(capsys: pytest.CaptureFixture[str]) -> None:
    files = [str(SAMPLES / "double_pendulum.urdf"), str(FIXTURES / "bad_axis_vector.urdf"),
             str(SAMPLES / "drake_ext.urdf")]
    assert main(["check", *files]) == 1
    out = capsys.readouterr()
    assert "double_pendulum.urdf: valid" in out.out and "drake_ext.urdf: valid" in out.out
    assert "[URDF_BAD_VECTOR]" in out.err


def test_xacro_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.urdf.xacro"
    path.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                    '<xacro:arg name="n" default="one"/><link name="$(arg n)"/>'
                    '<xacro:if value="${\'$(arg n)\' == \'bad\'}"><link name="$(arg n)"/></xacro:if></robot>')
    assert main(["check", str(path)]) == 0
    assert "'r': 1 links" in capsys.readouterr().out
    assert main(["check", "--xacro-arg", "n:=bad", str(path)]) == 1
    assert "[URDF_DUPLICATE_LINK]" in capsys.readouterr().err


def test_tolerated_real_world_quirks_are_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "quirky.urdf"
    path.write_bytes(b'\n<?xml version="0.0"?>\n<robot name="q"><link name="a"/></robot>\n\x00')
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    for code in ("XML_MISPLACED_DECLARATION", "XML_BAD_VERSION", "XML_TRAILING_NUL"):
        assert f"warning: [{code}]" in out


def test_console_entry_point_exit_codes() -> None:
    def run(*args: str) -> int:
        return subprocess.run([sys.executable, "-m", "robot_state_format", *args], cwd=ROOT,
                              capture_output=True, timeout=120).returncode

    assert run("check", str(SAMPLES / "double_pendulum.urdf")) == 0
    assert run("check", str(FIXTURES / "no_root.urdf"), "/nonexistent/robot.urdf") == 2  # the worst wins
