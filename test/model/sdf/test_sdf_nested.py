"""Nested models, worlds, //include (model://, relative, package://, URDF, merge) for SDFormat."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from repo_paths import TEST_DIR
from sdf_helpers import T, assert_pose

from robot_state_format.errors import ModelError
from robot_state_format.model import packages
from robot_state_format.model.sdf import read_sdf
from robot_state_format.model.types import WORLD, JointType, Model

HERE = TEST_DIR
FIX = HERE / "fixtures" / "sdf"
MODELS = FIX / "models"
SAMPLES = HERE.parent / "robot_state_format" / "samples"
HALF_PI = math.pi / 2


def read(path: Path, **kw):  # type: ignore[no-untyped-def]
    return read_sdf(path.read_bytes(), file=str(path), **kw)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GZ_SIM_RESOURCE_PATH", "IGN_GAZEBO_RESOURCE_PATH", "SDF_PATH", "GAZEBO_MODEL_PATH",
                "ROS_PACKAGE_PATH"):
        monkeypatch.delenv(var, raising=False)


# --------------------------------------------------------------------------- nested_world sample
def test_nested_world_sample_poses() -> None:
    m = read(SAMPLES / "nested_world.sdf")
    assert m.is_world and m.name == "nested_world"
    assert_pose(m.pose, np.eye(4))
    # robot sits at table_frame (1,0,0.5) turned 90 deg; arm 0.2 along robot x (= world y).
    assert_pose(m.links["robot::base"].pose, T(1, 0, 0.5, 0, 0, HALF_PI))
    assert_pose(m.links["robot::arm::upper"].pose, T(1, 0.2, 0.6, 0, 0, HALF_PI))
    # elbow = upper + 0.3 z, yaw +90 -> yaw 180; lower 0.2 above elbow.
    assert_pose(m.links["robot::arm::lower"].pose, T(1, 0.2, 1.1, 0, 0, math.pi))
    assert_pose(m.links["robot::gripper::palm"].pose, T(1, 0.2, 1.15, 0, 0, math.pi))
    assert_pose(m.links["box::body"].pose, T(2, 0, 0))
    # Joint between nested models: parent arm::lower, child gripper::palm, joint at the palm.
    wrist = m.joints["robot::wrist"]
    assert (wrist.parent, wrist.child) == ("robot::arm::lower", "robot::gripper::palm")
    assert_pose(wrist.origin, T(0, 0, 0.05))
    # elbow_joint axis: arm-frame x (world y) in the joint frame (yaw 180): (0,-1,0).
    np.testing.assert_allclose(m.joints["robot::arm::elbow_joint"].axis, (0, -1, 0), atol=1e-12, rtol=0)
    lim = m.joints["robot::arm::elbow_joint"].limits
    assert lim is not None and (lim.lower, lim.upper) == (-1.5, 1.5)
    # shoulder: 0.1 below upper = (1,0.2,0.5); in base (yaw 90) that is (0.2, 0, 0).
    assert_pose(m.joints["robot::shoulder"].origin, T(0.2, 0, 0))
    assert_pose(m.joints["robot::shoulder"].child_offset, T(0, 0, 0.1))


def test_nested_world_sample_frames_and_models() -> None:
    m = read(SAMPLES / "nested_world.sdf")
    assert m.frames["table_frame"].attached_to == WORLD
    assert_pose(m.frames["table_frame"].pose, T(1, 0, 0.5))
    elbow = m.frames["robot::arm::elbow"]
    assert elbow.attached_to == "robot::arm::upper"
    assert_pose(elbow.pose, T(0, 0, 0.3, 0, 0, HALF_PI))
    tool = m.frames["robot::tool"]
    # tool: 0.1 along the gripper's x (world -x) from (1,0.2,1.15) -> (0.9, 0.2, 1.15); palm = gripper frame.
    assert tool.attached_to == "robot::gripper::palm"
    assert_pose(m.links["robot::gripper::palm"].pose @ tool.pose, T(0.9, 0.2, 1.15, 0, 0, math.pi))
    assert m.models["robot"].attached_to == "robot::base"
    assert m.models["robot::arm"].canonical_link == "robot::arm::upper"
    assert_pose(m.models["robot::arm"].pose, T(0, 0, -0.1))
    assert m.models["box"].attached_to == WORLD and m.models["box"].static
    assert m.scoped("robot::arm::upper") == "robot::arm::upper"


# --------------------------------------------------------------------------- includes
def test_include_model_uri_with_search_path_and_model_config() -> None:
    m = read(FIX / "include_nested.sdf", search_paths=[str(MODELS)])
    # model.config names model-1_6.sdf (1.6) and model.sdf (1.9): the highest supported version wins.
    assert set(m.links) == {"base", "left::upper", "left::lower"}
    assert_pose(m.links["left::upper"].pose, T(0, 0.5, 0.1))
    assert_pose(m.links["left::lower"].pose, T(0, 0.5, 0.4))
    assert_pose(m.frames["left::tip"].pose, T(0, 0, 0.2))
    assert m.joints["mount"].child == "left::upper"
    assert m.joints["left::elbow"].type is JointType.REVOLUTE
    assert_pose(m.models["left"].pose, T(0, 0, -0.1))


def test_include_model_uri_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GZ_SIM_RESOURCE_PATH", "SDF_PATH"):
        monkeypatch.setenv(var, str(MODELS))
        m = read(FIX / "include_nested.sdf")
        assert "left::lower" in m.links
        monkeypatch.delenv(var)


def test_include_not_found() -> None:
    with pytest.raises(ModelError) as info:
        read(FIX / "include_nested.sdf")
    assert info.value.code == "SDF_INCLUDE_NOT_FOUND"
    assert info.value.errors[0].line == 5


def test_include_merge_equals_inlined_model() -> None:
    merged = read(FIX / "include_merge.sdf")  # relative URI models/arm next to the file
    inlined = read(FIX / "inlined_merge.sdf")
    assert set(merged.links) == set(inlined.links) == {"base", "upper", "lower"}
    for name in inlined.links:
        assert_pose(merged.links[name].pose, inlined.links[name].pose)
    for name, j in inlined.joints.items():
        assert_pose(merged.joints[name].origin, j.origin)
        assert_pose(merged.joints[name].child_offset, j.child_offset)
        assert merged.joints[name].axis == pytest.approx(j.axis, rel=0, abs=1e-12)
    assert_pose(merged.frames["tip"].pose, inlined.frames["tip"].pose)
    # The merged model frame survives as a frame on the canonical link: 0.1 below upper.
    proxy = merged.frames["_merged__arm__model__"]
    assert proxy.attached_to == "upper"
    assert_pose(proxy.pose, T(0, 0, -0.1))


def test_include_overrides_placement_frame_and_static(tmp_path: Path) -> None:
    (tmp_path / "w.sdf").write_text(f"""<sdf version="1.9"><world name="w">
      <include><uri>model://arm</uri><name>p</name><placement_frame>tip</placement_frame>
        <pose>1 0 0 0 0 0</pose></include>
      <include><uri>{MODELS / 'arm'}</uri><name>s</name><static>true</static></include>
      </world></sdf>""")
    m = read(tmp_path / "w.sdf", search_paths=[str(MODELS)])
    # tip is 0.1 + 0.3 + 0.2 = 0.6 above the arm frame; placing tip at (1,0,0) puts the arm at (1,0,-0.6).
    assert_pose(m.links["p::upper"].pose, T(1, 0, -0.5))
    assert m.frames["p::tip"].attached_to == "p::lower"
    assert_pose(m.links["p::lower"].pose @ m.frames["p::tip"].pose, T(1, 0, 0))
    assert m.models["s"].static and m.models["s"].attached_to == WORLD
    assert "p" in m.models and m.models["p"].attached_to == "p::upper"


def test_include_package_uri(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "src" / "arm_description"
    (pkg / "sdf").mkdir(parents=True)
    (pkg / "package.xml").write_text("<package format='3'><name>arm_description</name></package>")
    shutil.copy(MODELS / "arm" / "model.sdf", pkg / "sdf" / "arm.sdf")
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tmp_path / "src"))
    packages.clear_cache()  # package:// lookups are cached per ROS_PACKAGE_PATH seen before
    (tmp_path / "r.sdf").write_text("""<sdf version="1.9"><model name="r"><link name="base"/>
      <include><uri>package://arm_description/sdf/arm.sdf</uri></include></model></sdf>""")
    m = read(tmp_path / "r.sdf")
    assert "arm::upper" in m.links


def test_include_urdf(tmp_path: Path) -> None:
    (tmp_path / "r.sdf").write_text("""<sdf version="1.9"><model name="r"><link name="base"/>
      <include><uri>model://urdf_arm/model.urdf</uri><name>ua</name><pose>0 0 1 0 0 0</pose></include>
      </model></sdf>""")
    m = read(tmp_path / "r.sdf", search_paths=[str(MODELS)])
    # URDF: forearm = shoulder + (0,0,0.5) yaw 90; the include puts the URDF root frame at (0,0,1).
    assert_pose(m.links["ua::shoulder"].pose, T(0, 0, 1))
    assert_pose(m.links["ua::forearm"].pose, T(0, 0, 1.5, 0, 0, HALF_PI))
    j = m.joints["ua::elbow"]
    assert_pose(j.origin, T(0, 0, 0.5, 0, 0, HALF_PI))
    assert_pose(j.child_offset, np.eye(4))
    assert j.axis == pytest.approx((1, 0, 0), rel=0, abs=1e-12)
    assert j.limits is not None and j.limits.upper == 1


def test_include_cycle() -> None:
    with pytest.raises(ModelError) as info:
        read(FIX / "cycle" / "model.sdf")
    assert info.value.code == "SDF_INCLUDE_CYCLE"


def test_include_in_world_scopes_names_at_the_model() -> None:
    m = read_sdf(f"""<sdf version="1.8"><world name="w"><include><uri>{MODELS / 'arm'}</uri></include>
      <include><uri>{MODELS / 'arm'}</uri><name>arm2</name><pose>1 0 0 0 0 0</pose></include></world></sdf>""")
    assert {"arm::upper", "arm2::upper"} <= set(m.links)
    assert_pose(m.links["arm2::lower"].pose, T(1, 0, 0.4))


def test_merge_in_every_version_and_only_in_a_model() -> None:
    """``merge`` is SDFormat 1.9's; libsdformat 12.3 merges in files of older versions too (measured with
    conformance/sdf_ref: test/fixtures/sdf/reference/loads/include_merge_in_1_8.sdf)."""
    def merged(version: str) -> Model:
        return read_sdf(f"""<sdf version="{version}"><model name="m"><link name="l"/>
          <include merge="true"><uri>{MODELS / 'arm'}</uri></include></model></sdf>""")
    m18, m19 = merged("1.8"), merged("1.9")
    assert sorted(m18.links) == sorted(m19.links) and "l" in m18.links
    for name, link in m19.links.items():
        assert_pose(m18.links[name].pose, link.pose)
    text = f"""<sdf version="1.9"><world name="w">
      <include merge="true"><uri>{MODELS / 'arm'}</uri></include></world></sdf>"""
    with pytest.raises(ModelError) as info:
        read_sdf(text)
    assert info.value.code == "SDF_INCLUDE_MERGE_IN_WORLD"


def test_world_joint_between_models() -> None:
    m = read_sdf("""<sdf version="1.10"><world name="w">
      <model name="a"><pose>1 0 0 0 0 0</pose><link name="l"/></model>
      <model name="b"><pose>2 0 0 0 0 0</pose><link name="l"/></model>
      <joint name="j" type="revolute"><parent>a::l</parent><child>b::l</child><axis><xyz>0 0 1</xyz></axis></joint>
      </world></sdf>""")
    assert (m.joints["j"].parent, m.joints["j"].child) == ("a::l", "b::l")
    assert_pose(m.joints["j"].origin, T(1, 0, 0))


def test_joint_to_world_in_model_with_pose() -> None:
    m = read_sdf("""<sdf version="1.7"><model name="m"><pose>0 0 2 0 0 1.5707963267948966</pose>
      <link name="l"><pose>1 0 0 0 0 0</pose></link>
      <joint name="j" type="revolute"><pose>0 0 0.5 0 0 0</pose><parent>world</parent><child>l</child></joint>
      </model></sdf>""")
    # The joint frame is 0.5 above l, i.e. (1, 0, 0.5) in the model (root) frame; the world is the
    # model's parent, so origin = inv(model pose) @ X_WJ = X_MJ.
    j = m.joints["j"]
    assert j.parent == WORLD
    assert_pose(j.origin, T(1, 0, 0.5))
    assert_pose(m.pose, T(0, 0, 2, 0, 0, HALF_PI))
    x_wj = T(0, 0, 2, 0, 0, HALF_PI) @ T(1, 0, 0.5)
    assert_pose(j.origin, np.linalg.inv(m.pose) @ x_wj)


def test_1_4_child_world_joint_is_refused() -> None:
    # libsdformat refuses a joint whose child is the world in every version
    with pytest.raises(ModelError) as info:
        read_sdf("""<sdf version="1.4"><model name="m"><pose>0 0 2 0 0 0</pose><link name="l"/>
      <joint name="j" type="fixed"><pose>1 0 0 0 0 0</pose><parent>l</parent><child>world</child></joint>
      </model></sdf>""")
    assert [d.code for d in info.value.errors] == ["SDF_JOINT_CHILD_WORLD"]
