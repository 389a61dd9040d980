"""The ROS-free world of several robots (robot_state_format/world): naming, poses from TF, joint
states turned into a state, stale robots; expected values derived by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robot_state_format.model.loader import load_model
from robot_state_format.spatial import pose6_to_transform
from robot_state_format.usdf.reader import read_world_state
from robot_state_format.usdf.types import LinkState, ModelState, Stamp, WorldState
from robot_state_format.usdf.writer import write_world_state
from robot_state_format.world.aggregate import (
    WorldAggregator,
    WorldSourceError,
    default_frame_prefix,
    normalise_namespace,
)
from robot_state_format.world.tf_tree import TfTree

ARM = """<robot name="arm">
  <link name="base"/><link name="l1"/><link name="l2"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 1"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="1 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""


def xyz_yaw(x: float, y: float, z: float, yaw: float) -> np.ndarray:
    return pose6_to_transform((x, y, z, 0.0, 0.0, yaw))


def snapshot(model_name: str, joint: float, sec: int, pose: tuple[float, ...] | None = None) -> str:
    from robot_state_format.usdf.types import JointState

    ms = ModelState(model_name, None, pose, None, [LinkState("base", (0.0,) * 6)],
                    [JointState("j1", (joint,))])
    return write_world_state(WorldState(model_name, stamp=Stamp(sec, 5), model_states=[ms]))


def test_namespaces_and_prefixes() -> None:
    assert normalise_namespace("r1") == "/r1"
    assert normalise_namespace("r1", "/fleet") == "/fleet/r1"
    assert normalise_namespace("/a/b/") == "/a/b"
    assert default_frame_prefix("/r1") == "r1/" and default_frame_prefix("/") == ""
    with pytest.raises(WorldSourceError, match="not a valid ROS namespace"):
        normalise_namespace("/r-1")
    with pytest.raises(WorldSourceError, match="more than once"):
        WorldAggregator(["r1", "/r1"])
    with pytest.raises(WorldSourceError, match="frame_prefixes has 1 entries for 2 sources"):
        WorldAggregator(["r1", "r2"], frame_prefixes=["a/"])
    with pytest.raises(WorldSourceError, match="empty"):
        WorldAggregator([])


def test_tf_tree_lookup_through_a_common_ancestor() -> None:
    tf = TfTree()
    tf.set("world", "/odom", xyz_yaw(1, 0, 0, math.pi / 2))
    tf.set("odom", "r1/base", xyz_yaw(0, 2, 0, 0))
    tf.set("world", "map", xyz_yaw(0, 0, 3, 0))
    # r1/base in the world: odom at x=1 turned 90°, base 2 m along odom's y = world -x
    assert np.allclose(tf.lookup("world", "r1/base"), xyz_yaw(-1, 0, 0, math.pi / 2), rtol=0, atol=1e-12)
    # in map (3 m up): same, 3 m lower
    assert np.allclose(tf.lookup("map", "r1/base"), xyz_yaw(-1, 0, -3, math.pi / 2), rtol=0, atol=1e-12)
    assert np.allclose(tf.lookup("r1/base", "world"), np.linalg.inv(xyz_yaw(-1, 0, 0, math.pi / 2)), rtol=0, atol=1e-12)
    assert tf.lookup("world", "nowhere") is None


def test_world_of_two_snapshots_posed_by_tf_and_stale() -> None:
    agg = WorldAggregator(["/r1", "/r2"], world_name="lab")
    agg.set_model("/r1", load_model(ARM))
    agg.on_world_state("/r1", snapshot("arm", 0.5, 100), now_s=10.0)
    agg.on_world_state("/r2", snapshot("other", -0.25, 101, pose=(0, 0, 0.5, 0, 0, 0)), now_s=10.5)
    tf = TfTree()
    tf.set("world", "r1/base", xyz_yaw(2, 3, 0, 0.3))
    agg.update_poses(tf)
    world = agg.world()
    assert world is not None and world.name == "lab"
    assert [m.name for m in world.model_states] == ["r1", "r2"]
    assert world.stamp == Stamp(101, 5)  # the newest
    r1, r2 = world.model("r1"), world.model("r2")
    assert r1 is not None and r2 is not None
    assert r1.joint("j1").positions == (0.5,) and r2.joint("j1").positions == (-0.25,)  # type: ignore[union-attr]
    assert np.allclose(pose6_to_transform(r1.pose), xyz_yaw(2, 3, 0, 0.3), rtol=0, atol=1e-12)  # type: ignore[arg-type]
    assert r2.pose == (0.0, 0.0, 0.5, 0.0, 0.0, 0.0)  # no model, no TF: the snapshot's world pose
    text = write_world_state(world)
    assert read_world_state(text).state.model("r2") is not None

    st = {s.name: s for s in agg.status(now_s=12.6, stale_after=2.5)}
    assert st["r1"].stale and not st["r2"].stale  # 2.6 s vs 2.1 s of silence
    assert st["r1"].stamp == Stamp(100, 5) and st["r1"].posed_by_tf and not st["r2"].posed_by_tf
    assert agg.world() is not None and [m.name for m in agg.world().model_states] == ["r1", "r2"]  # kept
    agg.on_world_state("/r1", snapshot("arm", 0.75, 102), now_s=12.7)
    st = {s.name: s for s in agg.status(now_s=12.8, stale_after=2.5)}
    assert not st["r1"].stale and st["r1"].stamp == Stamp(102, 5)
    assert all(not s.stale for s in agg.status(now_s=1e6, stale_after=0.0))  # 0: never stale


def test_joint_states_source_leaves_unmeasured_joints_absent() -> None:
    agg = WorldAggregator(["/r1", "/r2"])
    agg.set_model("/r1", load_model(ARM))
    assert agg.world() is None
    assert [s.seen for s in agg.status(0.0, 1.0)] == [False, False]
    agg.on_joint_state("/r1", ["j1"], [0.4], [], [], 7_000_000_000, 0, now_s=1.0)
    w = agg.world()
    assert w is not None and [m.name for m in w.model_states] == ["r1"]
    r1 = w.model_states[0]
    assert [(j.name, j.positions) for j in r1.joint_states] == [("j1", (0.4,))]
    assert r1.link_states == [] and r1.pose is None  # j2 unknown: no link poses; no TF: no pose
    assert w.stamp == Stamp(7, 0)
    q1, q2 = 0.4, -1.1
    agg.on_joint_state("/r1", ["j2"], [q2], [], [], 8_000_000_000, 0, now_s=2.0)
    r1 = agg.world().model_states[0]  # type: ignore[union-attr]
    poses = {ls.name: ls.pose for ls in r1.link_states}
    assert np.allclose(pose6_to_transform(poses["l2"]),  # type: ignore[arg-type]
                       xyz_yaw(math.cos(q1), math.sin(q1), 1, q1 + q2), rtol=0, atol=1e-12)
    assert {j.name: j.positions for j in r1.joint_states} == {"j1": (q1,), "j2": (q2,)}
    # a snapshot newer than the joint states is taken; joint states newer than the snapshot win
    agg.on_world_state("/r1", snapshot("arm", 0.9, 9), now_s=3.0)
    assert agg.world().model_states[0].joint("j1").positions == (0.9,)  # type: ignore[union-attr]
    agg.on_joint_state("/r1", ["j1"], [0.2], [], [], 10_000_000_000, 0, now_s=4.0)
    assert agg.world().model_states[0].joint("j1").positions == (0.9,)  # type: ignore[union-attr]  # j2 older
    agg.on_joint_state("/r1", ["j2"], [0.3], [], [], 10_000_000_000, 0, now_s=4.0)
    r1 = agg.world().model_states[0]  # type: ignore[union-attr]
    assert {j.name: j.positions for j in r1.joint_states} == {"j1": (0.2,), "j2": (0.3,)}
    assert agg.world().stamp == Stamp(10, 0)  # type: ignore[union-attr]


def test_root_namespace_keeps_the_model_name_and_common_frame() -> None:
    agg = WorldAggregator(["/", "/r2"], common_frame="map")
    agg.set_model("/", load_model(ARM))
    agg.on_world_state("/", snapshot("arm", 0.1, 5), now_s=0.0)
    tf = TfTree()
    tf.set("map", "base", xyz_yaw(1, 0, 0, 0))
    agg.update_poses(tf)
    w = agg.world()
    assert w is not None and [m.name for m in w.model_states] == ["arm"]
    assert w.model_states[0].parent == "map" and [f.name for f in w.frames] == ["map"]
    assert read_world_state(write_world_state(w)).state.model("arm").parent == "map"  # type: ignore[union-attr]
