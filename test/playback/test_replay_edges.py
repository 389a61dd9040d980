"""The static TF a restart file replays to: frames, model poses (every model of a world), joints.

Expectations are derived by hand from the world below (poses in x y z roll pitch yaw):
  cart:  model frame at (1, 2, 0); chassis at (0, 0, 0.3, yaw 90°) in it; wheel at (0.5, 0, 0.3),
         joined to the chassis by the revolute `axle` about y.
  crate: model frame at (3, 0, 0, yaw 0.5); body at (0, 0, 0.25) in it; static.
The restart file moves both models: cart to (4, 5, 0, yaw 1.0), crate to (0, -1, 0, yaw 0.2).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from robot_state_format.model.loader import load_model_file
from robot_state_format.playback.edges import replay_edges
from robot_state_format.playback.fit import check_fit
from robot_state_format.spatial import pose6_to_transform
from robot_state_format.usdf.types import FrameState, JointState, LinkState, ModelState, WorldState

WORLD_SDF = """<?xml version="1.0"?>
<sdf version="1.9">
  <world name="yard">
    <model name="cart">
      <pose>1 2 0 0 0 0</pose>
      <link name="chassis"><pose>0 0 0.3 0 0 1.5707963267948966</pose></link>
      <link name="wheel"><pose>0.5 0 0.3 0 0 0</pose></link>
      <joint name="axle" type="revolute">
        <parent>chassis</parent><child>wheel</child><axis><xyz>0 1 0</xyz></axis>
      </joint>
    </model>
    <model name="crate">
      <static>true</static>
      <pose>3 0 0 0 0 0.5</pose>
      <link name="body"><pose>0 0 0.25 0 0 0</pose></link>
    </model>
  </world>
</sdf>
"""
HALF_PI = math.pi / 2


def world_state() -> WorldState:
    return WorldState("yard", frames=[FrameState("dock", None, (7.0, 0.0, 0.0, 0.0, 0.0, 0.0))], model_states=[
        ModelState("cart", None, (4.0, 5.0, 0.0, 0.0, 0.0, 1.0),
                   link_states=[LinkState("chassis", (0.0, 0.0, 0.3, 0.0, 0.0, HALF_PI)),
                                LinkState("wheel", (0.5, 0.0, 0.3, 0.0, 0.0, 0.0))],
                   joint_states=[JointState("axle", (0.0,))]),
        ModelState("crate", None, (0.0, -1.0, 0.0, 0.0, 0.0, 0.2),
                   link_states=[LinkState("body", (0.0, 0.0, 0.25, 0.0, 0.0, 0.0))]),
    ])


def edges_of(edges: list[tuple[str, str, np.ndarray]]) -> dict[tuple[str, str], np.ndarray]:
    out = {(p, c): x for p, c, x in edges}
    assert len(out) == len(edges)  # no edge twice
    return out


def test_world_replay_places_every_model_at_its_saved_pose(tmp_path: Path) -> None:
    path = tmp_path / "yard.sdf"
    path.write_text(WORLD_SDF)
    model = load_model_file(path)
    state = world_state()
    assert check_fit(state, model).problems == []
    got = edges_of(replay_edges(state, model))
    assert set(got) == {("world", "dock"), ("world", "cart::chassis"), ("world", "crate::body")}
    assert np.allclose(got[("world", "dock")], pose6_to_transform((7, 0, 0, 0, 0, 0)), atol=1e-12, rtol=0)
    # (4, 5, 0, yaw 1) ∘ (0, 0, 0.3, yaw 90°) = (4, 5, 0.3, yaw 1 + 90°)
    assert np.allclose(got[("world", "cart::chassis")], pose6_to_transform((4, 5, 0.3, 0, 0, 1 + HALF_PI)), atol=1e-12,
                       rtol=0)
    # (0, -1, 0, yaw 0.2) ∘ (0, 0, 0.25) = (0, -1, 0.25, yaw 0.2)
    assert np.allclose(got[("world", "crate::body")], pose6_to_transform((0, -1, 0.25, 0, 0, 0.2)), atol=1e-12, rtol=0)


def test_world_replay_link_tf_joins_links_from_their_saved_poses(tmp_path: Path) -> None:
    path = tmp_path / "yard.sdf"
    path.write_text(WORLD_SDF)
    model = load_model_file(path)
    got = edges_of(replay_edges(world_state(), model, link_tf=True))
    # wheel in chassis: chassis yaw 90° at (0, 0, 0.3), wheel at (0.5, 0, 0.3): offset (0.5, 0, 0) seen
    # from the chassis is (0, -0.5, 0), rotated by yaw -90°
    assert np.allclose(got[("cart::chassis", "cart::wheel")], pose6_to_transform((0, -0.5, 0, 0, 0, -HALF_PI)),
                       atol=1e-12, rtol=0)


NESTED_URDF_FREE_SDF = """<?xml version="1.0"?>
<sdf version="1.9">
  <model name="rig">
    <link name="base"/>
    <model name="arm">
      <pose>0 0 1 0 0 0</pose>
      <link name="upper"/>
    </model>
    <joint name="lift" type="prismatic">
      <parent>base</parent><child>arm::upper</child><axis><xyz>0 0 1</xyz></axis>
    </joint>
  </model>
</sdf>
"""


def test_model_replay_reaches_links_of_nested_model_states(tmp_path: Path) -> None:
    path = tmp_path / "rig.sdf"
    path.write_text(NESTED_URDF_FREE_SDF)
    model = load_model_file(path)
    # lift at 0.2: arm::upper 1.2 above base; the nested model_state is posed in rig's frame
    state = WorldState("w", model_states=[ModelState(
        "rig", None, (0.0, 0.0, 0.0, 0.0, 0.0, HALF_PI),
        link_states=[LinkState("base", (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))],
        joint_states=[JointState("lift", (0.2,))],
        model_states=[ModelState("arm", None, (0.0, 0.0, 1.2, 0.0, 0.0, 0.0),
                                 link_states=[LinkState("upper", (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))])])])
    assert check_fit(state, model).problems == []
    got = edges_of(replay_edges(state, model, link_tf=True))
    assert np.allclose(got[("world", "base")], pose6_to_transform((0, 0, 0, 0, 0, HALF_PI)), atol=1e-12, rtol=0)
    assert np.allclose(got[("base", "arm::upper")], pose6_to_transform((0, 0, 1.2, 0, 0, 0)), atol=1e-12, rtol=0)
