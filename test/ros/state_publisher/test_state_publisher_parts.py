"""The state_publisher's collaborators, without a running node: parameter plans, description loading,
the hot path (JointState in, TFMessage bytes out), the TF tree of the model-pose listener and the
snapshot text. Expected values are derived by hand from the models written here."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed (run the tests through ./run test)")

from geometry_msgs.msg import TransformStamped  # noqa: E402
from rclpy.serialization import deserialize_message  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from robot_state_format.errors import ModelIOError  # noqa: E402
from robot_state_format.model.loader import load_model  # noqa: E402
from robot_state_format.ros.description import (  # noqa: E402
    DescriptionConfigError,
    DescriptionRefused,
    LoadedDescription,
    XacroPolicy,
    load_description,
)
from robot_state_format.ros.model_pose import TfTree, gid_key  # noqa: E402
from robot_state_format.ros.publisher_params import (  # noqa: E402
    Load,
    PublisherParams,
    check_frequency,
    plan_change,
)
from robot_state_format.ros.publisher_runtime import Runtime, waiting_text  # noqa: E402
from robot_state_format.usdf.build import Placement  # noqa: E402
from robot_state_format.usdf.reader import read_world_state  # noqa: E402
from robot_state_format.usdf.validate import validate_schema  # noqa: E402

URDF = """<robot name="two">
  <link name="base"/><link name="arm"/><link name="tool"/>
  <joint name="turn" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="1 0 0"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="mount" type="fixed"><parent link="arm"/><child link="tool"/><origin xyz="0 0 0.5"/></joint>
</robot>"""
XACRO = """<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="link" default="a"/><link name="$(arg link)"/>
</robot>"""


# -- parameters ---------------------------------------------------------------------------------------
def test_frequency_check_bounds() -> None:
    assert check_frequency("publish_frequency", 0) is None
    assert check_frequency("publish_frequency", 1000.0) is None
    assert check_frequency("snapshot_frequency", -1) is None
    for bad in (1000.5, -0.5, math.nan, math.inf, True, "10"):
        assert check_frequency("publish_frequency", bad) is not None, bad
    assert "or -1" in (check_frequency("snapshot_frequency", -2.0) or "")
    assert check_frequency("publish_frequency", -1.0) is not None  # -1 is only a snapshot rate


def test_plan_refuses_with_a_reason_and_keeps_the_values() -> None:
    now = PublisherParams(model_file="m.urdf")
    for changes, words in (({"publish_frequency": 2000.0}, "0..1000"), ({"model_parent_frame": " "}, "non-empty"),
                           ({"frame_prefix": " r1/"}, "white space")):
        plan, after = plan_change(changes, now, has_model=True)
        assert plan.refused is not None and words in plan.refused
        assert after is None


def test_plan_says_what_a_change_asks_of_the_model() -> None:
    now = PublisherParams(model_file="m.urdf")
    plan, after = plan_change({"publish_frequency": 50}, now, has_model=True)
    assert (plan.refused, plan.load) == (None, Load.NOTHING)
    assert after is not None and after.publish_frequency == 50.0 and after.publish_period_ns == 20_000_000
    assert plan_change({"xacro_args": "a:=1"}, now, has_model=True)[0].load is Load.RELOAD
    assert plan_change({"frame_prefix": "r1/"}, now, has_model=True)[0].load is Load.REBUILD
    assert plan_change({"frame_prefix": "r1/"}, now, has_model=False)[0].load is Load.RELOAD
    waiting = PublisherParams(use_robot_description_topic=True)
    assert plan_change({"frame_prefix": "r1/"}, waiting, has_model=False)[0].load is Load.NOTHING
    assert plan_change({"snapshot_frequency": 0.0}, now, has_model=True)[1] == PublisherParams(
        model_file="m.urdf", snapshot_frequency=0.0)
    assert PublisherParams(model_parent_frame="/map").parent_frame == "map"


# -- description ---------------------------------------------------------------------------------------
def test_description_needs_exactly_one_source(tmp_path: Path) -> None:
    with pytest.raises(DescriptionConfigError, match="neither is set"):
        load_description("", " ", "")
    with pytest.raises(DescriptionConfigError, match="both are set"):
        load_description(URDF, "x.urdf", "")
    with pytest.raises(DescriptionConfigError, match="xacro_args"):
        load_description(URDF, "", "a:='unterminated")
    with pytest.raises(ModelIOError, match="is a directory"):
        load_description("", str(tmp_path), "")


def test_description_text_file_and_xacro(tmp_path: Path) -> None:
    loaded = load_description(URDF, "", "")
    assert (loaded.model.name, loaded.source, loaded.text) == ("two", "robot_description", URDF)
    path = tmp_path / "r.xacro"
    path.write_text(XACRO)
    loaded = load_description("", str(path), "link:='my link'")
    assert loaded.source == str(path) and list(loaded.model.links) == ["my link"]
    assert "xacro:arg" not in loaded.text and 'name="my link"' in loaded.text



SPY = """<robot name="spy" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:include filename="part.xacro"/>
  <link name="env_$(optenv RSF_TEST_SECRET none)"/>
  <joint name="j" type="fixed"><parent link="part"/><child link="env_$(optenv RSF_TEST_SECRET none)"/></joint>
</robot>"""


def test_a_model_file_set_at_runtime_is_read_as_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the start-up model_file is the user's: a different one is a peer's; its xacro is refused unless
    allowed, then expanded without the node's environment, reading its own directory only."""
    monkeypatch.setenv("RSF_TEST_SECRET", "s3cr3t-77")
    (tmp_path / "part.xacro").write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="part"/>'
                                         "</robot>")
    spy = tmp_path / "spy.xacro"
    spy.write_text(SPY)
    own = load_description("", str(spy), "", own_model_file=str(spy))  # the user's file: as the xacro command
    assert sorted(own.model.links) == ["env_s3cr3t-77", "part"]
    with pytest.raises(DescriptionRefused, match="allow_xacro_descriptions") as refused:
        load_description("", str(spy), "", XacroPolicy(), own_model_file="start.urdf")
    assert refused.value.kind == "xacro"
    peer = load_description("", str(spy), "", XacroPolicy(allow=True), own_model_file="")
    assert sorted(peer.model.links) == ["env_none", "part"] and "s3cr3t" not in peer.text
    # an include outside the file's directory and the include paths is not readable
    other = tmp_path / "sub"
    other.mkdir()
    (other / "spy.xacro").write_text(SPY.replace("part.xacro", "../part.xacro"))
    with pytest.raises(DescriptionRefused, match=r"\[XACRO_"):
        load_description("", str(other / "spy.xacro"), "", XacroPolicy(allow=True), own_model_file="")
    included = XacroPolicy.from_params(True, str(tmp_path))
    assert "part" in load_description("", str(other / "spy.xacro"), "", included, own_model_file="").model.links
    # a file that is no model: the path and the code, not a word of it
    (tmp_path / "secret.urdf").write_text('<robot name="r"><link name="a"/>\n<joint name="TOPSECRET"/></robot>')
    with pytest.raises(DescriptionRefused) as bad:
        load_description("", str(tmp_path / "secret.urdf"), "", own_model_file="")
    assert str(tmp_path / "secret.urdf") in str(bad.value) and "TOPSECRET" not in str(bad.value)
    assert ":2: [URDF_" in str(bad.value)
    with pytest.raises(DescriptionRefused, match="No such file"):
        load_description("", str(tmp_path / "missing.urdf"), "", own_model_file="")
    # a plain URDF set at runtime is read as before
    (tmp_path / "two.urdf").write_text(URDF)
    assert load_description("", str(tmp_path / "two.urdf"), "", own_model_file="").text == URDF


# -- hot path ------------------------------------------------------------------------------------------
def _runtime(prefix: str = "", period_ns: int = 0) -> Runtime:
    return Runtime(LoadedDescription(URDF, load_model(URDF), "test"), prefix, period_ns, False)


def _decoded(data: bytes) -> list[tuple[str, str, tuple[float, ...], tuple[float, ...], int]]:
    msg = deserialize_message(data, TFMessage)
    return [(t.header.frame_id, t.child_frame_id,
             (t.transform.translation.x, t.transform.translation.y, t.transform.translation.z),
             (t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z, t.transform.rotation.w),
             t.header.stamp.sec * 1_000_000_000 + t.header.stamp.nanosec) for t in msg.transforms]


def test_joint_state_gives_the_tf_bytes_of_the_moved_joint() -> None:
    rt = _runtime("r1/")
    out = rt.apply(["turn"], np.array([math.pi / 2]), np.array([0.25]), np.array([]), 5_000_000_123, 9)
    assert out.tf is not None and out.update.changed and not out.update.problems
    [(parent, child, xyz, quat, stamp)] = _decoded(out.tf)
    assert (parent, child, stamp) == ("r1/base", "r1/arm", 5_000_000_123)
    assert xyz == pytest.approx((1.0, 0.0, 0.0), abs=1e-12, rel=0)  # the joint origin; rotation about z keeps it
    assert quat == pytest.approx((0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4)), abs=1e-12, rel=0)
    assert rt.cache.velocities().tolist() == [0.25]
    assert rt.child_frames == {"r1/arm", "r1/tool"} and rt.root_frame == "r1/base"


def test_static_transforms_and_unknown_joints() -> None:
    rt = _runtime()
    frames, x = rt.static_transforms()
    assert frames == [("arm", "tool")]
    assert x[0][:3, 3] == pytest.approx([0.0, 0.0, 0.5], rel=0, abs=1e-12)
    out = rt.apply(["nope"], np.array([1.0]), np.array([]), np.array([]), 1, 1)
    assert out.tf is None and not out.update.changed
    assert any("nope" in p.text for p in out.update.problems)


def test_publish_period_throttles_per_joint() -> None:
    rt = _runtime(period_ns=100_000_000)  # 10 Hz
    first = rt.apply(["turn"], np.array([0.1]), np.array([]), np.array([]), 1_000_000_000, 1)
    again = rt.apply(["turn"], np.array([0.2]), np.array([]), np.array([]), 1_050_000_000, 2)
    later = rt.apply(["turn"], np.array([0.3]), np.array([]), np.array([]), 1_100_000_000, 3)
    assert first.tf is not None and again.tf is None and later.tf is not None
    assert again.update.changed  # the value is kept for the snapshot even when no TF is due


# -- TF tree -------------------------------------------------------------------------------------------
def _tf(parent: str, child: str, xyz: tuple[float, float, float], yaw: float) -> TransformStamped:
    t = TransformStamped()
    t.header.frame_id, t.child_frame_id = parent, child
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = xyz
    t.transform.rotation.z, t.transform.rotation.w = math.sin(yaw / 2), math.cos(yaw / 2)
    return t


def test_tf_tree_walks_the_chain() -> None:
    tree = TfTree()
    tree.add([_tf("/map", "odom", (1.0, 0.0, 0.0), math.pi / 2), _tf("odom", "base", (0.0, 2.0, 0.0), 0.0)])
    assert tree.version == 1
    x = tree.lookup("map", "base")
    assert x is not None
    # odom is turned 90 degrees about z: its +y is map's -x, so base sits at (1 - 2, 0, 0) in map
    assert x[:3, 3] == pytest.approx([-1.0, 0.0, 0.0], abs=1e-12, rel=0)
    assert x[:3, 0] == pytest.approx([0.0, 1.0, 0.0], abs=1e-12, rel=0)
    assert tree.lookup("base", "base") == pytest.approx(np.eye(4), rel=0, abs=1e-12)
    assert tree.lookup("elsewhere", "base") is None
    tree.add([_tf("a", "b", (0.0, 0.0, 0.0), 0.0), _tf("b", "a", (0.0, 0.0, 0.0), 0.0)])
    assert tree.lookup("z", "a") is None  # a loop ends, bounded


def test_gid_key_reads_what_rclpy_gives() -> None:
    assert gid_key({"publisher_gid": {"data": [1, 2, 3]}}) == b"\x01\x02\x03"
    assert gid_key({"publisher_gid": b"\x07"}) == b"\x07"
    for info in (None, {}, {"publisher_gid": None}, {"publisher_gid": {"data": None}}, {"publisher_gid": {"data": [300]}}):
        assert gid_key(info) is None


# -- snapshot text ------------------------------------------------------------------------------------
def _snapshot(rt: Runtime, placement: Placement | None) -> str:
    rt.apply(["turn"], np.array([0.5]), np.array([]), np.array([]), 7_000_000_000, 1)
    return rt.snapshots().build(rt.cache.q, rt.cache.velocities(), rt.cache.efforts(), stamp=(7, 0),
                                placement=placement)


def test_model_pose_set_in_a_parent_frame() -> None:
    text = _snapshot(_runtime(), Placement((1.0, 2.0, 3.0, 0.0, 0.0, 0.5), "map", (0.0, 0.0, 1.0, 0.0, 0.0, 0.0)))
    assert validate_schema(text) == []
    state = read_world_state(text).state
    ms = state.model_states[0]
    assert (ms.name, ms.parent, ms.pose, ms.twist) == ("two", "map", (1.0, 2.0, 3.0, 0.0, 0.0, 0.5), None)
    [frame] = state.frames
    assert (frame.name, frame.parent, frame.pose) == ("map", None, (0.0, 0.0, 1.0, 0.0, 0.0, 0.0))
    assert ms.link("arm") is not None and state.stamp is not None and state.stamp.sec == 7
    # the arm turned by 0.5 rad about z, 1 m out from the base (hand-derived), in the model frame
    arm = ms.link("arm")
    assert arm is not None and arm.pose == pytest.approx((1.0, 0.0, 0.0, 0.0, 0.0, 0.5), abs=1e-15, rel=0)
    [turn] = ms.joint_states
    assert turn.positions == (0.5,)
    # the parent's world pose unknown: the frame is declared without a pose
    bare = read_world_state(_snapshot(_runtime(), Placement((1.0, 2.0, 3.0, 0.0, 0.0, 0.5), "map"))).state
    assert [(f.name, f.pose) for f in bare.frames] == [("map", None)]


def test_model_pose_unknown_or_in_the_world() -> None:
    rt = _runtime()
    unknown = read_world_state(_snapshot(rt, Placement(None))).state.model_states[0]
    assert (unknown.pose, unknown.parent, unknown.twist) == (None, None, None)
    assert unknown.link("tool") is not None  # only the model's own pose is unknown
    world = read_world_state(_snapshot(rt, Placement((0.0, 0.0, 0.0, 0.0, 0.0, 1.0)))).state
    assert world.model_states[0].pose == (0.0, 0.0, 0.0, 0.0, 0.0, 1.0) and world.frames == []
    assert world.model_states[0].parent is None


def test_waiting_text_names_at_most_twenty() -> None:
    names = [f"j{i}" for i in range(23)]
    text = waiting_text(names, 30)
    assert "23 of 30" in text and "j19" in text and "j20" not in text and text.endswith("and 3 more")
