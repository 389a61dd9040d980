"""MuJoCo restart from an exported USDF keyframe: every body's pose equals ours within 1e-9.

MuJoCo is the independent reference: it loads the robot (MJCF, or URDF through its own
importer), takes the exported ``<key>``, runs ``mj_resetDataKeyframe`` + ``mj_forward``, and its
body poses are compared with the world poses our kinematics put in the USDF state.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from repo_paths import REPO_ROOT, TEST_DIR

mujoco = pytest.importorskip("mujoco", reason="the mujoco package is not installed")

from real_robots import SKIP_REASON, real_urdf  # noqa: E402

from robot_state_format.model.types import WORLD, Joint, JointType, Link, Model  # noqa: E402
from robot_state_format.spatial import pose_to_transform  # noqa: E402
from robot_state_format.usdf.build import state_from_model, world_poses  # noqa: E402
from robot_state_format.usdf.export.mujoco import (  # noqa: E402
    load_mujoco_model,
    mujoco_keyframe,
    parse_keyframe,
)
from robot_state_format.usdf.reader import read_world_state  # noqa: E402
from robot_state_format.usdf.types import FrameState, ModelState, WorldState  # noqa: E402
from robot_state_format.usdf.writer import write_world_state  # noqa: E402


@pytest.fixture(autouse=True)
def _run_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MuJoCo writes MUJOCO_LOG.TXT into the working directory on warnings: keep it out of the repo."""
    monkeypatch.chdir(tmp_path)

ROBOTS = TEST_DIR / "fixtures" / "usdf" / "robots"
SAMPLES = REPO_ROOT / "robot_state_format" / "samples"


def _restore(spec: Any, state: WorldState) -> tuple[Any, Any, list[str]]:
    """Compile, add the exported key, reset to it, forward: MuJoCo's view of the state."""
    text, warnings = mujoco_keyframe(state, spec.compile())
    qpos, qvel, time = parse_keyframe(text)
    key = spec.add_key()
    key.name = "usdf"
    key.qpos = qpos
    key.qvel = qvel
    key.time = time
    m = spec.compile()
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, "usdf"))
    mujoco.mj_forward(m, d)
    return m, d, warnings


def _compare_bodies(m: Any, d: Any, state: WorldState, model_state: str) -> int:
    wp = world_poses(state)
    compared = 0
    for b in range(1, m.nbody):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b)
        ours = wp[f"{model_state}::{name}"]
        assert np.abs(d.xpos[b] - ours[:3, 3]).max() < 1e-9, name
        assert np.abs(d.xmat[b].reshape(3, 3) - ours[:3, :3]).max() < 1e-9, name
        compared += 1
    return compared


def _random_positions(model: Model, seed: int) -> dict[str, Any]:
    from robot_state_format.kinematics.tree import compile_model

    tree = compile_model(model)
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {}
    for n in tree.moving_joint_names:
        j = model.joints[n]
        if j.type in (JointType.BALL, JointType.FLOATING):
            quat = rng.normal(size=4)
            quat /= np.linalg.norm(quat)
            out[n] = ([*rng.uniform(-1, 1, 3)] if j.type is JointType.FLOATING else []) + quat.tolist()
            continue
        lo = j.limits.lower if j.limits and j.limits.lower is not None else -math.pi
        hi = j.limits.upper if j.limits and j.limits.upper is not None else math.pi
        out[n] = [float(rng.uniform(lo, hi)) for _ in range(j.type.nq)] if hi > lo else [lo] * j.type.nq
    return out


def toy_model() -> Model:
    """test/fixtures/usdf/robots/toy.xml, by hand."""
    m = Model(name="toy", format="urdf")
    for n in ("base", "carriage", "head", "arm", "tip"):
        m.links[n] = Link(n)
    m.joints["free"] = Joint("free", JointType.FLOATING, WORLD, "base")
    m.joints["slider"] = Joint("slider", JointType.PRISMATIC, "base", "carriage",
                               origin=pose_to_transform((1, 0, 0), (0, 0, 0)), axis=(0.0, 0.0, 1.0))
    m.joints["neck"] = Joint("neck", JointType.BALL, "carriage", "head",
                             origin=pose_to_transform((0, 0, 0.5), (0, 0, 0)))
    m.joints["hinge"] = Joint("hinge", JointType.REVOLUTE, "base", "arm",
                              origin=pose_to_transform((0, 1, 0), (0.1, 0.2, 0.3)), axis=(1.0, 0.0, 0.0))
    m.joints["finger"] = Joint("finger", JointType.REVOLUTE, "arm", "tip",
                               origin=pose_to_transform((0, 0, 1), (0, 0, 0)), axis=(0.6, 0.0, 0.8))
    return m


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mjcf_free_ball_slide_hinge(seed: int) -> None:
    model = toy_model()
    rng = np.random.default_rng(100 + seed)
    velocities = {"free": rng.normal(size=6).tolist(), "slider": 0.7, "neck": rng.normal(size=3).tolist(),
                  "hinge": -1.3, "finger": 0.4}
    state = state_from_model(model, _random_positions(model, seed), velocities)
    state = read_world_state(write_world_state(state)).state  # through the file format
    m, d, warnings = _restore(load_mujoco_model(ROBOTS / "toy.xml"), state)
    assert warnings == []
    assert _compare_bodies(m, d, state, "toy") == 5
    # velocities: MuJoCo's world-frame body velocities equal our link twists (model frame = world here)
    ms = state.model_states[0]
    res = np.zeros(6)
    for b in range(1, m.nbody):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b)
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, b, res, 0)  # [angular, linear], world axes
        twist = ms.link(name).twist  # type: ignore[union-attr]
        assert twist is not None
        assert np.abs(res[3:] - twist[:3]).max() < 1e-9, name
        assert np.abs(res[:3] - twist[3:]).max() < 1e-9, name


def test_planar_cart_urdf() -> None:
    from robot_state_format.model import load_model_file

    path = ROBOTS / "planar_cart.urdf"
    model = load_model_file(path)
    state = state_from_model(model, {"plane": [0.4, -0.3, 2.0], "pole_joint": 0.8, "slide_joint": -0.35})
    m, d, warnings = _restore(load_mujoco_model(path), state)
    assert warnings == []
    assert _compare_bodies(m, d, state, "planar_cart") == 4


def test_double_pendulum_sample_continuous() -> None:
    from robot_state_format.model import load_model_file

    path = SAMPLES / "double_pendulum.urdf"
    model = load_model_file(path)
    state = state_from_model(model, {"joint A": 2.5, "joint B": -4.0})
    m, d, _ = _restore(load_mujoco_model(path, strip_geometry=True), state)
    assert _compare_bodies(m, d, state, model.name) == 3


@pytest.mark.parametrize("relative, free_base", [
    ("panda_description/urdf/panda.urdf", False),  # revolute, prismatic fingers with a mimic, fixed
    ("kinova_description/robots/kinova.urdf", False),  # continuous, revolute, fixed
    ("pr2_description/urdf/pr2.urdf", True),  # 82 links: continuous, prismatic, revolute, fixed
    ("talos_data/robots/talos_reduced.urdf", True),  # floating base (free joint), 32 revolute
    ("solo_description/robots/solo12.urdf", True),
])
def test_real_robots(relative: str, free_base: bool) -> None:
    from robot_state_format.model import load_model_file

    path = real_urdf(relative)
    if path is None:
        pytest.skip(SKIP_REASON)
    model = load_model_file(path)
    state = state_from_model(model, _random_positions(model, 7))
    if free_base:  # the robot floats: its model_state pose is the base pose in the world
        state.model_states[0].pose = (0.3, -0.2, 0.9, 0.1, -0.2, 0.7)
    state = read_world_state(write_world_state(state)).state
    m, d, warnings = _restore(load_mujoco_model(path, free_base=free_base, strip_geometry=True), state)
    assert warnings == []
    assert _compare_bodies(m, d, state, model.name) == len(model.links)


# --------------------------------------------------------------------------------------------
# a floating base restored from its own joint_state (no link poses in the state)

S45 = math.sqrt(0.5)
TOY_Q = {"free": [1.0, 2.0, 3.0, 0.0, 0.0, S45, S45], "slider": 0.3, "neck": [S45, 0.0, 0.0, S45],
         "hinge": 0.2, "finger": -0.4}
TOY_V = {"free": [1.0, 0.0, 0.0, 0.0, 0.0, 2.0], "slider": 0.7, "neck": [0.1, -0.2, 0.3], "hinge": -1.3,
         "finger": 0.4}


def _joint_states_only(state: WorldState) -> WorldState:
    """The same state without link_states, model pose or twist: joint values only."""
    ms = state.model_states[0]
    return WorldState(name=state.name, model_states=[ModelState(ms.name, joint_states=ms.joint_states)])


def _expected_world_twists(state: WorldState) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """World (v, w) of each link origin by the spec's composition (docs/usdf-spec.md §4)."""
    (ms,) = state.model_states
    assert ms.pose is not None and ms.twist is not None and ms.parent is None
    rm = pose_to_transform(ms.pose[:3], ms.pose[3:])[:3, :3]
    vm, wm = np.array(ms.twist[:3]), np.array(ms.twist[3:])
    out = {}
    for ls in ms.link_states:
        assert ls.pose is not None and ls.twist is not None
        p, v, w = np.array(ls.pose[:3]), np.array(ls.twist[:3]), np.array(ls.twist[3:])
        out[ls.name] = (vm + np.cross(wm, rm @ p) + rm @ v, wm + rm @ w)
    return out


def _compare_velocities(m: Any, d: Any, expected: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    res = np.zeros(6)
    for b in range(1, m.nbody):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b)
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, b, res, 0)  # [angular, linear], world axes
        v, w = expected[name]
        assert np.abs(res[3:] - v).max() < 1e-9, name
        assert np.abs(res[:3] - w).max() < 1e-9, name


def test_free_joint_from_its_joint_state_without_model_pose() -> None:
    full = state_from_model(toy_model(), TOY_Q, TOY_V)
    only = read_world_state(write_world_state(_joint_states_only(full))).state
    m, d, warnings = _restore(load_mujoco_model(ROBOTS / "toy.xml"), only)
    assert warnings == ["free joint 'free': model_state 'toy' has no pose; its frame is taken as the world "
                        "(at rest)"]
    # hand-derived: MuJoCo's free qpos is x y z qw qx qy qz; qvel the world linear velocity (the
    # body-frame (1, 0, 0) turned by yaw 90 deg: world +y), then the body-frame angular velocity
    assert d.qpos[:7].tolist() == [1.0, 2.0, 3.0, S45, 0.0, 0.0, S45]
    assert np.abs(d.qvel[:6] - [0, 1, 0, 0, 0, 2]).max() < 1e-15
    assert _compare_bodies(m, d, full, "toy") == 5  # poses our kinematics computed from the same joints
    _compare_velocities(m, d, _expected_world_twists(full))


def test_free_joint_from_its_joint_state_in_a_moving_model_frame() -> None:
    full = state_from_model(toy_model(), TOY_Q, TOY_V)
    pose, twist = (0.5, -0.25, 0.1, 0.1, -0.2, 0.7), (0.1, 0.2, -0.3, 0.05, -0.1, 0.2)
    full.model_states[0].pose, full.model_states[0].twist = pose, twist
    only = _joint_states_only(full)
    only.model_states[0].pose, only.model_states[0].twist = pose, twist
    m, d, warnings = _restore(load_mujoco_model(ROBOTS / "toy.xml"), only)
    assert warnings == []
    assert _compare_bodies(m, d, full, "toy") == 5
    _compare_velocities(m, d, _expected_world_twists(full))


@pytest.mark.parametrize("joint_states_only", [True, False])
def test_free_joint_velocity_in_a_frame_parent_is_warned(joint_states_only: bool) -> None:
    full = state_from_model(toy_model(), TOY_Q, TOY_V)
    full.frames = [FrameState("odom", pose=(1.5, -2.0, 0.0, 0.0, 0.0, math.pi / 2), twist=(0.1, 0, 0, 0, 0, 0.05))]
    ms = full.model_states[0]
    ms.parent, ms.pose = "odom", (0.2, 0.0, 0.0, 0.0, 0.0, 0.3)
    state = full
    if joint_states_only:
        state = _joint_states_only(full)
        state.frames = full.frames
        state.model_states[0].parent, state.model_states[0].pose = ms.parent, ms.pose
        state.model_states[0].twist = ms.twist
    m, d, warnings = _restore(load_mujoco_model(ROBOTS / "toy.xml"), state)
    assert len(warnings) == 1
    assert warnings[0].startswith("free joint 'free': ")
    assert "model_state 'toy' is posed in 'odom', not the world" in warnings[0] and warnings[0].endswith("qvel zero")
    assert d.qvel[:6].tolist() == [0.0] * 6
    assert _compare_bodies(m, d, full, "toy") == 5  # the pose is still placed, through odom
