"""Every error names the real line: xacro failures at the element or expression that failed (in the file
that holds it), USDF state errors at the element, never a made-up ``:0:``; directories named as such;
both nodes exit 1 with FILE:LINE when their model cannot be loaded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

from robot_state_format.cli import main
from robot_state_format.errors import Diagnostic, ModelError
from robot_state_format.model.loader import load_model_file

HEAD = '<?xml version="1.0"?>\n<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
CLI = [sys.executable, "-m", "robot_state_format"]
PENDULUM = str(REPO_ROOT / "robot_state_format" / "samples" / "double_pendulum.urdf")

# (body after the two head lines, the line expected, a word of the message); lines counted by hand
CASES = [
    ('  <link name="base"/>\n  <link name="l1">\n    <visual><geometry><box size="1 ${nope} 1"/></geometry></visual>\n'
     '  </link>\n</robot>\n', 5, "nope"),  # undefined name in an attribute
    ('  <xacro:macro name="leg" params="side">\n    <link name="${side}_leg">\n'
     '      <inertial><mass value="${1/0}"/></inertial>\n    </link>\n  </xacro:macro>\n  <link name="base"/>\n'
     '  <xacro:leg side="left"/>\n</robot>\n', 5, "division by zero"),  # inside a macro body
    ('  <link name="base"/>\n\n  <xacro:nosuchmacro foo="1"/>\n</robot>\n', 5, "unknown macro"),
    ('  <xacro:property name="p" value="${zz * 2}"/>\n  <link name="base"/>\n  <link name="l1">\n'
     '    <inertial><mass value="${p}"/></inertial>\n  </link>\n</robot>\n', 3, "zz"),  # lazy property: its line
    ('  <link name="base"/>\n  <link name="$(arg nope)"/>\n</robot>\n', 4, "nope:=VALUE"),
    ('  <link name="base"/>\n  <xacro:include filename="missing.xacro"/>\n</robot>\n', 4, "missing.xacro"),
    ('  <link name="base"/>\n  <xacro:if value="${1 +}">\n  </xacro:if>\n</robot>\n', 4, "1 +"),
]


@pytest.mark.parametrize("body,line,word", CASES)
def test_xacro_errors_name_the_line_that_failed(tmp_path: Path, body: str, line: int, word: str) -> None:
    path = tmp_path / "broken.urdf.xacro"
    path.write_text(HEAD + body)
    with pytest.raises(ModelError) as info:
        load_model_file(path)
    d = info.value.diagnostics[0]
    assert (d.file, d.line) == (str(path), line), d.format()
    assert word in d.message
    assert f"{path}:{line}: error: [" in d.format()


def test_an_error_in_an_included_file_names_that_file(tmp_path: Path) -> None:
    (tmp_path / "inc.xacro").write_text(HEAD.replace(' name="r"', "") + '  <link name="inc"/>\n'
                                        '  <link name="${undefined_in_include}"/>\n</robot>\n')
    main = tmp_path / "main.urdf.xacro"
    main.write_text(HEAD + '  <link name="base"/>\n  <xacro:include filename="inc.xacro"/>\n</robot>\n')
    with pytest.raises(ModelError) as info:
        load_model_file(main)
    d = info.value.diagnostics[0]
    assert (Path(d.file).name, d.line) == ("inc.xacro", 4), d.format()


def test_an_unknown_line_is_left_out_never_zero() -> None:
    assert Diagnostic("X_CODE", "text", "f.urdf", None).format() == "f.urdf: error: [X_CODE] text"
    assert Diagnostic("X_CODE", "text", "f.urdf", 7).format() == "f.urdf:7: error: [X_CODE] text"


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The command line in this process: (exit code, stderr)."""
    code = main(args)
    return code, capsys.readouterr().err


def test_check_prints_the_xacro_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.urdf.xacro"
    path.write_text(HEAD + CASES[0][0])
    code, err = _cli(["check", str(path)], capsys)
    assert code == 1
    assert err.startswith(f"{path}:5: error: [XACRO_ERROR]"), err
    assert ":0:" not in err


def test_usdf_state_errors_name_the_element_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "s.usdf"
    code, err = _cli(["state", "from-model", PENDULUM, "--positions", '{"joint A": 0.1, "joint B": 0.2}',
                      "-o", str(state)], capsys)
    assert code == 0, err
    text = state.read_text().replace('joint_state name="joint B"', 'joint_state name="joint Z"')
    state.write_text(text)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if 'name="joint Z"' in ln)
    code, err = _cli(["state", "validate", str(state), "--model", PENDULUM], capsys)
    assert code == 1
    assert f"{state}:{line}: error: [USDF_UNKNOWN_JOINT]" in err, err
    assert ":0:" not in err


@pytest.mark.parametrize("args", [["state", "validate", "{d}"], ["state", "plot", "{d}", "-o", "{d}/x.png"],
                                  ["state", "from-model", "{d}", "--positions", "{{}}"]])
def test_a_directory_is_named_as_one(tmp_path: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _cli([a.format(d=tmp_path) for a in args], capsys)
    assert code == 2
    assert f"{tmp_path}: is a directory, expected a" in err, err


@pytest.mark.parametrize("node", ["state_publisher", "state_store"])
def test_nodes_exit_1_with_file_and_line_for_a_model_they_cannot_load(tmp_path: Path, node: str) -> None:
    pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")
    from ros_harness import configure_ros_environment

    path = tmp_path / "broken.urdf.xacro"
    path.write_text(HEAD + CASES[0][0])
    env = dict(__import__("os").environ)
    configure_ros_environment(env)
    done = subprocess.run([sys.executable, "-m", f"robot_state_format.ros.{node}", "--ros-args", "-p",
                           f"model_file:={path}", "-p", f"output_dir:={tmp_path}"] if node == "state_store" else
                          [sys.executable, "-m", f"robot_state_format.ros.{node}", "--ros-args", "-p",
                           f"model_file:={path}"], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{path}:5: error: [XACRO_ERROR]" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_cli_save_with_a_model_it_cannot_load_exits_1(tmp_path: Path) -> None:
    pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")
    from ros_harness import configure_ros_environment

    path = tmp_path / "broken.urdf.xacro"
    path.write_text(HEAD + CASES[0][0])
    env = dict(__import__("os").environ)
    configure_ros_environment(env)
    done = subprocess.run([*CLI, "save", "--output", str(tmp_path), "--model", str(path), "--timeout", "1"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 1, done.stderr
    assert f"{path}:5: error: [XACRO_ERROR]" in done.stderr
    assert list(tmp_path.glob("*.usdf")) == []
