"""The Drake Model Directives reader on its own: hand-derived poses, Drake's schema and refusals
(file, line, directive), safe YAML, package resolution, detection and the commands that read models.
pydrake is compared in test_directives_drake.py."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from repo_paths import REPO_ROOT

from robot_state_format import limits
from robot_state_format.cli.frames import default_link_poses
from robot_state_format.errors import ModelError
from robot_state_format.model.detect import detect_format
from robot_state_format.model.frames import frame_poses_in_root
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.packages import clear_cache
from robot_state_format.model.types import WORLD, JointType
from robot_state_format.spatial import matrix_to_quaternion
from robot_state_format.usdf.build import state_from_model
from robot_state_format.usdf.writer import write_world_state

ROOT = REPO_ROOT
SAMPLES = ROOT / "robot_state_format" / "samples"
ARM = "file://" + str(SAMPLES / "arm7_gripper.urdf")
SDF_ARM = "file://" + str(ROOT / "test" / "fixtures" / "sdf" / "models" / "arm" / "model.sdf")
CLI = [sys.executable, "-m", "robot_state_format"]


def scene(tmp_path: Path, text: str, name: str = "scene.dmd.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def refused(path: Path) -> tuple[str, int | None, str]:
    with pytest.raises(ModelError) as info:
        load_model_file(path)
    d = info.value.diagnostics[0]
    return d.code, d.line, d.message


def test_frame_chain_poses_by_hand(tmp_path: Path) -> None:
    p = scene(tmp_path, """directives:
- add_frame:
    name: a
    X_PF:
      base_frame: world
      translation: [1, 2, 3]
      rotation: !Rpy { deg: [90, 0, 0] }
- add_frame:
    name: b
    X_PF: {base_frame: a, translation: [0, 1, 0], rotation: !AngleAxis {angle_deg: 90, axis: [0, 0, 2]}}
- add_frame:
    name: c
    X_PF: {base_frame: b, rotation: !Identity {}}
- add_frame:
    name: d
    X_PF: {base_frame: c, translation: [1, 0, 0], rotation: {}}
""")
    m = load_model_file(p)
    assert m.format == "dmd" and m.is_world and m.name == "scene"
    poses = frame_poses_in_root(m)
    # a: Rx(90); b = a + Rx(90) [0 1 0] = [1 2 4], rotation Rx(90) Rz(90)
    np.testing.assert_allclose(poses["a"][:3, 3], [1, 2, 3], atol=1e-15, rtol=0)
    np.testing.assert_allclose(poses["b"][:3, 3], [1, 2, 4], atol=1e-15, rtol=0)
    s = math.sqrt(0.5)
    rx = np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]])
    rz = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]])
    np.testing.assert_allclose(poses["b"][:3, :3], rx @ rz, atol=1e-15, rtol=0)
    np.testing.assert_allclose(poses["c"], poses["b"], atol=1e-15, rtol=0)
    # d: one metre along b's x axis = Rx Rz e_x = Rx e_y = e_z
    np.testing.assert_allclose(poses["d"][:3, 3], [1, 2, 5], atol=1e-15, rtol=0)
    assert np.allclose(matrix_to_quaternion(poses["a"][:3, :3]), (s, 0, 0, s), rtol=0, atol=1e-12)
    assert all(m.frames[n].attached_to == WORLD for n in "abcd")


def test_arm_welded_to_a_frame(tmp_path: Path) -> None:
    p = scene(tmp_path, f"""directives:
- add_frame:
    name: mount
    X_PF: {{base_frame: world, translation: [0, 0, 0.7], rotation: !Rpy {{deg: [0, 0, 90]}}}}
- add_model:
    name: arm
    file: {ARM}
    default_joint_positions: {{joint2: [0.5], hand_joint: []}}
- add_weld:
    parent: mount
    child: arm::base_link
    X_PC: {{translation: [0.1, 0, 0]}}
""")
    m = load_model_file(p)
    weld = m.joints["arm::mount_welds_to_base_link"]
    assert weld.type is JointType.FIXED and weld.parent == WORLD and weld.child == "arm::base_link"
    # base_link at mount @ [0.1 0 0]: the mount turned 90 degrees about z puts it at (0, 0.1, 0.7)
    np.testing.assert_allclose(m.links["arm::base_link"].pose[:3, 3], [0, 0.1, 0.7], atol=1e-15, rtol=0)
    # link1 is 0.1 above the base in the URDF, link2 0.2 above link1 (test_frames_cli's hand values)
    np.testing.assert_allclose(m.links["arm::link2"].pose[:3, 3], [0, 0.1, 1.0], atol=1e-15, rtol=0)
    assert m.default_positions == {"arm::joint2": [0.5]}
    assert "arm" in m.models and m.models["arm"].attached_to == "arm::base_link"
    assert set(m.links) >= {"arm::link7", "arm::tool_frame"} and "arm::joint1" in m.joints


def test_welding_a_middle_link_reverses_the_joints_above_it(tmp_path: Path) -> None:
    p = scene(tmp_path, f"directives:\n- add_model: {{name: a, file: '{ARM}'}}\n"
                        "- add_weld: {parent: world, child: a::link2}\n")
    m = load_model_file(p)
    j2, j1 = m.joints["a::joint2"], m.joints["a::joint1"]
    assert (j2.parent, j2.child, j1.parent, j1.child) == ("a::link2", "a::link1", "a::link1", "a::base_link")
    # link2 sits at the world origin. In the URDF, X_base_link2 = T(0, 0, 0.3) Rx(-90 deg) (joint1 0.1 up,
    # joint2 0.2 up and turned -90 deg about x), so the base is at -Rx(90 deg) (0, 0, 0.3) = (0, 0.3, 0)
    np.testing.assert_allclose(m.links["a::link2"].pose, np.eye(4), atol=1e-15, rtol=0)
    np.testing.assert_allclose(m.links["a::base_link"].pose[:3, 3], [0, 0.3, 0], atol=1e-15, rtol=0)
    np.testing.assert_allclose(m.links["a::link1"].pose[:3, 3], [0, 0.2, 0], atol=1e-15, rtol=0)
    assert m.joints["a::joint3"].parent == "a::link2"


def test_namespaces_and_included_directives(tmp_path: Path) -> None:
    sub = scene(tmp_path, f"""directives:
- add_model: {{name: robot, file: "{ARM}"}}
- add_weld: {{parent: base, child: robot::base_link}}
- add_frame:
    name: robot::flange
    X_PF: {{base_frame: robot::tool_frame, translation: [0, 0, 0.01]}}
""", "sub.dmd.yaml")
    top = scene(tmp_path, f"""directives:
- add_model_instance: {{name: left}}
- add_frame:
    name: left::base
    X_PF: {{base_frame: world, translation: [0, 1, 0]}}
- add_directives: {{file: "file://{sub}", model_namespace: left}}
""")
    m = load_model_file(top)
    assert "left::robot::link3" in m.links and "left::robot::joint3" in m.joints
    assert m.joints["left::robot::base_welds_to_base_link"].parent == WORLD
    assert m.frames["left::robot::flange"].attached_to == "left::robot::tool_frame"
    assert set(m.models) == {"left", "left::robot"}
    np.testing.assert_allclose(m.links["left::robot::base_link"].pose[:3, 3], [0, 1, 0], atol=1e-15, rtol=0)


def test_default_free_body_pose(tmp_path: Path) -> None:
    pend = "file://" + str(SAMPLES / "double_pendulum.urdf")
    p = scene(tmp_path, f"""directives:
- add_model:
    name: p1
    file: {pend}
    default_free_body_pose:
      link A: {{translation: [1, 2, 3], rotation: !Rpy {{deg: [0, 0, 90]}}}}
- add_model:
    name: p2
    file: {pend}
    default_free_body_pose:
      link A: {{base_frame: p1::link C, translation: [0, 0, -1]}}
- add_model:
    name: s
    file: {SDF_ARM}
    default_free_body_pose:
      __model__: {{translation: [0, 0, 2]}}
""")
    m = load_model_file(p)
    np.testing.assert_allclose(m.links["p1::link A"].pose[:3, 3], [1, 2, 3], atol=1e-15, rtol=0)
    fj = m.joints["p2::link A"]
    assert fj.type is JointType.FLOATING and fj.parent == "p1::link C" and fj.child == "p2::link A"
    assert m.default_positions["p2::link A"] == [0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0]
    # a frame that is not a body frame (the SDFormat model frame): Drake adds a floating joint from the world
    mj = m.joints["s::upper"]
    assert mj.type is JointType.FLOATING and mj.parent == WORLD and mj.child == "s::upper"
    assert m.default_positions["s::upper"] == [0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0]
    # at its default the model frame is at z=2: 'upper' is 0.1 above the model frame, 'lower' 0.3 above upper
    poses = default_link_poses(m)
    np.testing.assert_allclose(poses["s::upper"][:3, 3], [0, 0, 2.1], atol=1e-15, rtol=0)
    np.testing.assert_allclose(poses["s::lower"][:3, 3], [0, 0, 2.4], atol=1e-15, rtol=0)
    np.testing.assert_allclose(m.links["s::upper"].pose[:3, 3], [0, 0, 0.1], atol=1e-15, rtol=0)  # zero configuration


@pytest.mark.parametrize(("text", "code", "line"), [
    ("directives:\n- add_thing: {name: a}\n", "DMD_UNKNOWN_KEY", 2),
    ("directives:\n- add_model_instance: {name: a}\n  add_frame: {name: f, X_PF: {base_frame: world}}\n",
     "DMD_SCHEMA", 2),
    ("directives:\n- add_model:\n    name: a\n    file: robot_state_format/samples/arm7_gripper.urdf\n",
     "DMD_BAD_URI", 4),
    (f"directives:\n- add_model:\n    name: a\n    file: {SAMPLES}/arm7_gripper.urdf\n", "DMD_BAD_URI", 4),
    ("directives:\n- add_model:\n    name: a\n    file: http://example.com/a.urdf\n", "DMD_BAD_URI", 4),
    ("directives:\n- add_model:\n    name: a\n    file: package://no_such_package_xyz/a.urdf\n",
     "MODEL_PACKAGE_NOT_FOUND", 4),
    ("directives:\n- add_model_instance: {name: a}\n- add_model_instance: {name: a}\n", "DMD_DUPLICATE_INSTANCE", 3),
    ("directives:\n- add_directives: {file: 'file:///nonexistent.dmd.yaml', model_namespace: zz}\n",
     "DMD_NAMESPACE_NOT_FOUND", 2),
    ("directives:\n- add_frame:\n    name: f\n    X_PF: {base_frame: nowhere}\n", "DMD_FRAME_NOT_FOUND", 2),
    ("directives:\n- add_frame:\n    name: f\n    X_PF: {translation: [1, 2, 3]}\n", "DMD_MISSING", 4),
    ("directives:\n- add_frame:\n    name: f\n    X_PF: {base_frame: world, rotation: {deg: [1, 2, 3]}}\n",
     "DMD_UNKNOWN_KEY", 4),
    ("directives:\n- add_frame:\n    name: f\n    X_PF: {base_frame: world, rotation: !Quaternion {w: 1}}\n",
     "DMD_SCHEMA", 4),
    ("directives:\n- add_frame:\n    name: f\n    X_PF:\n      base_frame: world\n      translation: "
     "!UniformVector {min: [0, 0, 0], max: [1, 1, 1]}\n", "DMD_NOT_DETERMINISTIC", 6),
    ("directives:\n- add_frame:\n    name: f\n    X_PF: {base_frame: world, translation: [1, 2]}\n", "DMD_SCHEMA", 4),
    ("directives:\n- add_frame: {name: f, X_PF: {base_frame: world}}\n- add_frame: {name: f, X_PF: "
     "{base_frame: world}}\n", "DMD_DUPLICATE_FRAME", 3),
    (f"directives:\n- add_model: {{name: a, file: '{ARM}'}}\n- add_weld: {{parent: world, child: a::link3}}\n"
     "- add_weld: {parent: world, child: a::base_link}\n", "DMD_LOOP", 4),
    (f"directives:\n- add_model: {{name: t, file: 'file://{SAMPLES / 'table.sdf'}'}}\n"
     "- add_weld: {parent: world, child: t::tray::drawer}\n", "DMD_WELD_CHILD_INSTANCE", 3),
    (f"directives:\n- add_model: {{name: a, file: '{ARM}'}}\n- add_weld: {{parent: a::link3, child: a::base_link}}\n",
     "DMD_LOOP", 3),
    (f"directives:\n- add_model: {{name: a, file: '{ARM}'}}\n- add_weld: {{parent: a::link1, child: a::link3}}\n",
     "DMD_LOOP", 3),
    (f"directives:\n- add_model: {{name: a, file: '{ARM}'}}\n- add_weld: {{parent: world, child: a::base_link}}\n"
     "- add_weld: {parent: world, child: a::base_link}\n", "DMD_DUPLICATE_JOINT", 4),
    (f"directives:\n- add_model:\n    name: a\n    file: {ARM}\n    default_joint_positions:\n      joint1: [1, 2]\n",
     "DMD_JOINT_POSITIONS_SIZE", 6),
    (f"directives:\n- add_model:\n    name: a\n    file: {ARM}\n    default_joint_positions:\n      nope: [1]\n",
     "DMD_JOINT_NOT_FOUND", 6),
    (f"directives:\n- add_model:\n    name: a\n    file: {ARM}\n    default_free_body_pose:\n      link3: {{}}\n",
     "DMD_FREE_BODY_NOT_FREE", 6),
    ("directives:\n- add_model:\n    name: w\n    file: file://" + str(SAMPLES / "nested_world.sdf") + "\n",
     "DMD_WORLD_FILE", 4),
    ("directives:\n- add_model: {name: a, file: [1, 2]}\n", "DMD_SCHEMA", 2),
    ("directives:\n  - add_model: {name: a\n", "DMD_YAML", 3),
    ("directives: 3\n", "DMD_SCHEMA", 1),
    ("something: else\n", "DMD_UNKNOWN_KEY", 1),
])
def test_refusals_name_file_line_and_directive(tmp_path: Path, text: str, code: str, line: int) -> None:
    p = scene(tmp_path, text)
    got = refused(p)
    assert (got[0], got[1]) == (code, line), got


def test_refusal_is_formatted_with_file_line_directive(tmp_path: Path) -> None:
    p = scene(tmp_path, "directives:\n- add_frame:\n    name: f\n    X_PF: {base_frame: nowhere}\n")
    with pytest.raises(ModelError) as info:
        load_model_file(p)
    assert info.value.diagnostics[0].format() == (
        f"{p}:2: error: [DMD_FRAME_NOT_FOUND] there is no frame 'nowhere' in any model instance "
        "(add_frame[name=f])")


def test_error_inside_an_added_model_names_both_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="r"><link name="a"/><joint name="j" type="bogus"><parent link="a"/>'
                   '<child link="b"/></joint></robot>', encoding="utf-8")
    p = scene(tmp_path, f"directives:\n- add_model:\n    name: r\n    file: file://{bad}\n")
    with pytest.raises(ModelError) as info:
        load_model_file(p)
    d0, d1 = info.value.diagnostics[:2]
    assert (d0.code, d0.file, d0.line) == ("DMD_MODEL_FILE", str(p), 4)
    assert d1.file == str(bad) and d1.code.startswith("URDF_")


def test_include_cycle_and_included_error_location(tmp_path: Path) -> None:
    a = tmp_path / "a.dmd.yaml"
    a.write_text(f"directives:\n- add_directives: {{file: 'file://{a}'}}\n", encoding="utf-8")
    assert refused(a)[:2] == ("DMD_INCLUDE_CYCLE", 2)
    sub = scene(tmp_path, "directives:\n- add_frame: {name: f, X_PF: {base_frame: nowhere}}\n", "sub.dmd.yaml")
    top = scene(tmp_path, f"directives:\n- add_directives: {{file: 'file://{sub}'}}\n")
    with pytest.raises(ModelError) as info:
        load_model_file(top)
    first, last = info.value.diagnostics[0], info.value.diagnostics[-1]
    assert (first.file, first.line, first.code) == (str(sub), 2, "DMD_FRAME_NOT_FOUND")
    assert (last.file, last.line, last.code) == (str(top), 2, "DMD_INCLUDED_FILE")


def test_yaml_is_never_constructed_into_objects(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    p = scene(tmp_path, f"directives:\n- add_model_instance:\n    name: !!python/object/apply:os.system "
                        f"['touch {marker}']\n")
    code, line, _ = refused(p)
    assert code == "DMD_SCHEMA" and line == 3 and not marker.exists()


def test_alias_bomb_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = ["a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    for i in range(1, 12):
        lines.append(f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]")
    p = scene(tmp_path, "\n".join(lines) + "\ndirectives: []\n")
    monkeypatch.setattr(limits, "MAX_XML_ELEMENTS", 10_000)
    assert refused(p)[0] == "DMD_TOO_LARGE"


def test_merge_keys_and_anchors_are_yaml(tmp_path: Path) -> None:
    p = scene(tmp_path, """base: &pose {base_frame: world, translation: [1, 0, 0]}
directives:
- add_frame:
    name: a
    X_PF: *pose
- add_frame:
    name: b
    X_PF:
      <<: *pose
      rotation: !Rpy {deg: [0, 0, 180]}
""")
    with pytest.raises(ModelError):  # 'base' is no key of Drake's schema
        load_model_file(p)
    p = scene(tmp_path, """directives:
- add_frame:
    name: a
    X_PF: &pose {base_frame: world, translation: [1, 0, 0]}
- add_frame:
    name: b
    X_PF:
      <<: *pose
      rotation: !Rpy {deg: [0, 0, 180]}
""")
    poses = frame_poses_in_root(load_model_file(p))
    np.testing.assert_allclose(poses["b"][:3, 3], [1, 0, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(poses["b"][:2, :2], [[-1, 0], [0, -1]], atol=1e-15, rtol=0)


def test_package_uris_resolve_like_the_other_readers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "ws" / "my_robots"
    pkg.mkdir(parents=True)
    (pkg / "package.xml").write_text("<package><name>my_robots</name></package>", encoding="utf-8")
    (pkg / "arm.urdf").write_text((SAMPLES / "arm7_gripper.urdf").read_text(encoding="utf-8"), encoding="utf-8")
    text = "directives:\n- add_model: {name: a, file: 'package://my_robots/arm.urdf'}\n" \
           "- add_model: {name: b, file: 'model://my_robots/arm.urdf'}\n"
    p = scene(tmp_path, text)
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "ws"))
    clear_cache()
    try:
        m = load_model_file(p)
        assert "a::link7" in m.links and "b::link7" in m.links
        monkeypatch.delenv("ROS_PACKAGE_PATH")
        clear_cache()
        assert refused(p)[0] == "MODEL_PACKAGE_NOT_FOUND"
        m = load_model_file(p, search_paths=[str(tmp_path / "ws")])  # --search-path
        assert "b::hand" in m.links
    finally:
        clear_cache()


def test_detection() -> None:
    assert detect_format(b"directives:\n- add_model_instance: {name: a}\n", "x.yaml") == "dmd"
    assert detect_format(b"# a scene\n---\ndirectives: []\n") == "dmd"
    assert detect_format(b"anything", "scene.dmd.yaml") == "dmd"
    with pytest.raises(ModelError):
        detect_format(b"cameras: {}\n", "scenario.yaml")


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, **(env or {})})


def test_commands_read_a_scene(tmp_path: Path) -> None:
    p = scene(tmp_path, f"""directives:
- add_model:
    name: arm
    file: {ARM}
    default_joint_positions: {{joint2: [0.5]}}
- add_weld: {{parent: world, child: arm::base_link}}
""")
    r = _run("check", str(p))
    assert r.returncode == 0 and "valid dmd world 'scene': 12 links" in r.stdout, r.stdout + r.stderr
    frames = json.loads(_run("frames", str(p), "--json").stdout)["frames"]
    at_default = json.loads(_run("fk", str(p), "--json", "--positions", '{"arm::joint2": 0.5}').stdout)["frames"]
    at_zero = json.loads(_run("fk", str(p), "--json", "--positions", '{"arm::joint2": 0}').stdout)["frames"]
    assert frames["arm::link3"]["position"] == pytest.approx(at_default["arm::link3"]["position"], abs=1e-15, rel=0)
    assert frames["arm::link3"]["position"] != pytest.approx(at_zero["arm::link3"]["position"], abs=1e-3, rel=0)
    assert at_zero["arm::link3"]["position"] == pytest.approx([0, 0, 0.7],
                                                              rel=0, abs=1e-12)  # link2 0.3 above the base, link3 0.4 above it
    out = tmp_path / "s.usdf"
    r = _run("state", "from-model", str(p), "--positions", '{"arm::joint1": 0.1}', "-o", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    assert '<model_state name="arm">' in text and '<joint_state name="joint1">' in text
    bad = scene(tmp_path, "directives:\n- add_frame: {name: f, X_PF: {base_frame: nowhere}}\n", "bad.dmd.yaml")
    r = _run("check", str(bad))
    assert r.returncode == 1 and f"{bad}:2: error: [DMD_FRAME_NOT_FOUND]" in r.stdout + r.stderr


def test_scoped_instance_name_without_its_namespace(tmp_path: Path) -> None:
    """Drake accepts add_model name 'outer::arm' with no instance 'outer': the USDF still nests it."""
    p = scene(tmp_path, f"directives:\n- add_model: {{name: 'outer::arm', file: '{ARM}'}}\n"
                        "- add_weld: {parent: world, child: 'outer::arm::base_link'}\n")
    m = load_model_file(p)
    assert "outer" in m.models and "outer::arm::link7" in m.links
    text = write_world_state(state_from_model(m, {"outer::arm::joint1": 0.2}))
    assert '<model_state name="outer">' in text and '<model_state name="arm">' in text


def test_empty_base_frame_names_no_frame(tmp_path: Path) -> None:
    pend = "file://" + str(SAMPLES / "double_pendulum.urdf")
    p = scene(tmp_path, f"directives:\n- add_model:\n    name: p\n    file: {pend}\n    default_free_body_pose:\n"
                        "      link A: {base_frame: '', translation: [0, 0, 1]}\n")
    assert refused(p)[0] == "DMD_FRAME_NOT_FOUND"


def test_drake_urdf_extensions_world_parent_and_frames(tmp_path: Path) -> None:
    urdf = tmp_path / "rooted.urdf"
    urdf.write_text("""<robot name="rooted">
  <link name="base"/><link name="arm"/>
  <joint name="fix" type="fixed"><parent link="world"/><child link="base"/><origin xyz="0 0 1"/></joint>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.5"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <frame name="tip" link="arm" xyz="0.25 0 0" rpy="0 0 1.5707963267948966"/>
</robot>
""", encoding="utf-8")
    p = scene(tmp_path, f"directives:\n- add_model: {{name: r, file: 'file://{urdf}'}}\n")
    m = load_model_file(p)
    assert "r::world" not in m.links and m.joints["r::fix"].parent == WORLD
    poses = frame_poses_in_root(m)
    np.testing.assert_allclose(poses["r::arm"][:3, 3], [0, 0, 1.5], atol=1e-15, rtol=0)
    np.testing.assert_allclose(poses["r::tip"][:3, 3], [0.25, 0, 1.5], atol=1e-15, rtol=0)
    assert m.frames["r::tip"].attached_to == "r::arm"
    urdf.write_text(urdf.read_text(encoding="utf-8").replace('link="arm" xyz', 'link="nope" xyz'), encoding="utf-8")
    assert refused(p)[0] == "DMD_MODEL_FILE"


def test_damaged_scenes_raise_only_model_errors(tmp_path: Path) -> None:
    """Random damage to a scene (characters deleted, doubled or replaced by YAML punctuation, tags and
    numbers): every outcome is a Model or a ModelError, never another exception."""
    pend = "file://" + str(SAMPLES / "double_pendulum.urdf")
    base = f"""directives:
- add_model_instance: {{name: ns}}
- add_model:
    name: ns::arm
    file: {ARM}
    default_joint_positions: {{joint2: [0.5]}}
- add_frame:
    name: mount
    X_PF: {{base_frame: world, translation: [0, 0, 0.7], rotation: !Rpy {{deg: [0, 0, 90]}}}}
- add_weld: {{parent: mount, child: ns::arm::base_link, X_PC: {{rotation: !AngleAxis {{angle_deg: 5}}}}}}
- add_model:
    name: p
    file: {pend}
    default_free_body_pose:
      link A: {{base_frame: ns::arm::hand, translation: [0, 0, 0.1]}}
"""
    rng = np.random.default_rng(5)
    pieces = ["{", "}", "[", "]", ":", "-", " ", "\n", "!", "&a", "*a", "<<: ", "'", '"', "::", "1e999", ".nan",
              "!!python/name:os.system", "?", "|", ">", "#", "\t", "\x00", "é"]
    outcomes = {"loads": 0, "refused": 0}
    for _ in range(150):
        text = base
        for _ in range(int(rng.integers(1, 4))):
            i = int(rng.integers(len(text)))
            op = int(rng.integers(3))
            if op == 0:
                text = text[:i] + text[i + int(rng.integers(1, 8)):]
            elif op == 1:
                text = text[:i] + pieces[int(rng.integers(len(pieces)))] + text[i:]
            else:
                j = int(rng.integers(len(text)))
                text = text[:i] + text[j:j + 5] + text[i:]
        p = scene(tmp_path, text)
        try:
            load_model_file(p)
            outcomes["loads"] += 1
        except ModelError as exc:
            assert exc.diagnostics and exc.diagnostics[0].code, text
            outcomes["refused"] += 1
    assert outcomes["loads"] > 0 and outcomes["refused"] > 50, outcomes
