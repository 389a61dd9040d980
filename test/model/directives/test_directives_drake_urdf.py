"""A URDF added by a Model Directives scene is read with Drake's URDF rules, not urdfdom's (issue 36):
``<limit>`` attributes all optional, a revolute or prismatic joint without ``<limit>``, ``effort="0"``
meaning no effort limit, a continuous joint with bounds read as a limited revolute joint; checked
against pydrake (poses and limits) and against urdfdom's verdict for the same file read on its own."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

pytest.importorskip("pydrake", reason="pydrake (drake on PyPI) is the reference for Model Directives: not installed")

from robot_state_format.errors import ModelError
from robot_state_format.model.loader import load_model_file

ROOT = REPO_ROOT
sys.path.insert(0, str(ROOT / "conformance"))
from directives_ref import compare, drake_plant, verdicts  # noqa: E402

# Drake's own examples' style (acrobot): <limit> without velocity, a revolute joint without <limit>,
# effort="0", a continuous joint with bounds, a prismatic one with only upper, attributes on several lines
DRAKE_STYLE = """<?xml version="1.0"?>
<robot name="acrobot_like">
  <link name="base"/>
  <link name="upper"/>
  <link name="lower"/>
  <link name="slider"/>
  <link name="tip"/>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/>
    <origin xyz="0 0.1 0.2" rpy="0.1 0.2 0.3"/>
    <axis xyz="1 0 0"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="upper"/><child link="lower"/>
    <origin xyz="0 0 -1"/>
    <axis xyz="0 1 0"/>
    <limit lower="-1.5"
           upper="2" effort="0"/>
  </joint>
  <joint name="slide" type="prismatic">
    <parent link="lower"/><child link="slider"/>
    <origin xyz="0.3 0 0" rpy="0 0.5 0"/>
    <axis xyz="0 0 1"/>
    <limit upper="0.4" velocity="3"/>
  </joint>
  <joint name="wrist" type="continuous">
    <parent link="slider"/><child link="tip"/>
    <axis xyz="0 0 1"/>
    <limit lower="-0.5" upper="0.5" effort="7"/>
  </joint>
</robot>
"""


def _scene(tmp_path: Path, urdf: str) -> Path:
    model = tmp_path / "robot.urdf"
    model.write_text(urdf, encoding="utf-8")
    scene = tmp_path / "scene.dmd.yaml"
    scene.write_text(f"directives:\n- add_model:\n    name: bot\n    file: file://{model}\n"
                     "- add_weld:\n    parent: world\n    child: bot::base\n", encoding="utf-8")
    return scene


def test_drake_style_urdf_loads_in_a_scene_as_drake_reads_it(tmp_path: Path) -> None:
    scene = _scene(tmp_path, DRAKE_STYLE)
    with pytest.raises(ModelError):  # the same file on its own: urdfdom's verdict
        load_model_file(tmp_path / "robot.urdf")
    r = compare(scene, samples=4, seed=2, prefix=None)
    assert r["worst"] <= 1e-9 and not r["ours_not_in_drake"] and not r["drake_not_in_ours"], r
    model = load_model_file(scene)
    plant, _ = drake_plant(scene, None)
    for name in ("shoulder", "elbow", "slide", "wrist"):
        joint, ref = model.joints[f"bot::{name}"], plant.GetJointByName(name)
        lim = joint.limits
        lower = -math.inf if lim is None or lim.lower is None else lim.lower
        upper = math.inf if lim is None or lim.upper is None else lim.upper
        velocity = math.inf if lim is None or lim.velocity is None else lim.velocity
        assert (lower, upper) == (ref.position_lower_limits()[0], ref.position_upper_limits()[0]), name
        assert velocity == ref.velocity_upper_limits()[0], name
    assert model.joints["bot::elbow"].limits is not None and model.joints["bot::elbow"].limits.effort is None
    assert model.joints["bot::wrist"].type.value == "revolute"  # Drake: a bounded continuous joint
    assert model.joints["bot::wrist"].limits is not None and model.joints["bot::wrist"].limits.effort == 7.0


@pytest.mark.parametrize("limit", ['<limit lower="1" upper="-1"/>', '<limit velocity="-1"/>',
                                   '<limit lower="nan"/>', '<limit upper="1e400"/>'])
def test_limits_drake_refuses_are_refused(tmp_path: Path, limit: str) -> None:
    """Drake refuses (or aborts on: pydrake in a child process) these; the reader refuses them in one line
    naming the model file's line."""
    urdf = DRAKE_STYLE.replace('<limit upper="0.4" velocity="3"/>', limit)
    scene = _scene(tmp_path, urdf)
    ours, drake = verdicts(scene, None)
    assert (ours, drake) == ("refused", "refused")
    with pytest.raises(ModelError) as info:
        load_model_file(scene)
    d = info.value.diagnostics[0]
    assert d.code == "DMD_MODEL_FILE" and "robot.urdf:24:" in d.message, d


DRAKE_SCENES = ROOT / "conformance" / "drake_scenes"


@pytest.mark.parametrize("scene", sorted(p.name for p in DRAKE_SCENES.glob("share/*/*.dmd.yaml")))
def test_drakes_own_test_scenes(scene: str) -> None:
    """Drake's process_model_directives_test scenes (conformance/drake_scenes): the same verdict, and every
    frame pose equal where both load (default_positions adds Drake's acrobot.urdf: a revolute joint without
    <limit>, <limit effort="0"/>)."""
    path = next(DRAKE_SCENES.glob(f"share/*/{scene}"))
    ours, drake = verdicts(path, str(DRAKE_SCENES))
    assert ours == drake, (ours, drake)
    if ours == "loads":
        r = compare(path, samples=3, seed=4, prefix=str(DRAKE_SCENES))
        assert r["worst"] <= 1e-9 and not r["ours_not_in_drake"] and not r["drake_not_in_ours"], r


@pytest.mark.parametrize("extension", ['<visual><geometry><drake:ellipsoid a="0.1" b="0.1" c="0.3"/></geometry></visual>',
                                       '<xacro:property name="unused" value="1"/>'])
def test_an_undeclared_prefix_reads_in_a_scene_as_the_file_alone_reads_it(tmp_path: Path, extension: str) -> None:
    # manipulation's mecanum base uses drake: without declaring it: Drake reads it, and so does our reader
    # the file alone (declaring the prefix, with a warning); in a scene it was an XML_SYNTAX error
    urdf = DRAKE_STYLE.replace('<link name="base"/>', f'<link name="base">{extension}</link>')
    scene = _scene(tmp_path, urdf)
    assert verdicts(scene, None) == ("loads", "loads")
    r = compare(scene, samples=3, seed=1, prefix=None)
    assert r["worst"] <= 1e-9 and not r["ours_not_in_drake"] and not r["drake_not_in_ours"], r
    codes = {w.code for w in load_model_file(scene).warnings}
    assert codes & {"URDF_UNDECLARED_DRAKE_NAMESPACE", "URDF_UNDECLARED_PREFIX"}, codes
