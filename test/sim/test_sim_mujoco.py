"""MuJoCo restart files: save mid-run, restart from the file, the run continues identically.

The reference is the uninterrupted run itself: 2N steps saving at N, then N steps from the
written-and-read-back file in a fresh simulation; every coordinate (qpos, qvel) must be equal
(bit for bit with the simulator-state extension; within 1e-9 from the spec's elements alone).
Captured link poses and twists are checked against the package's own kinematics.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco", reason="the mujoco package is not installed")

from real_robots import SKIP_REASON  # noqa: E402
from sim_helpers import ROBOTS, kick_mujoco, load, solo12  # noqa: E402

from robot_state_format.errors import UsdfError  # noqa: E402
from robot_state_format.kinematics.fk import forward, link_twists  # noqa: E402
from robot_state_format.model import load_model_file  # noqa: E402
from robot_state_format.sim import capture, restore  # noqa: E402
from robot_state_format.sim.mujoco_sim import MujocoSim  # noqa: E402
from robot_state_format.usdf.reader import read_world_state  # noqa: E402
from robot_state_format.usdf.resolve import world_poses  # noqa: E402
from robot_state_format.usdf.simulator_state import NAMESPACE, find_simulator_state  # noqa: E402
from robot_state_format.usdf.validate import validate_schema  # noqa: E402
from robot_state_format.usdf.writer import write_world_state  # noqa: E402

N = 150


@pytest.fixture(autouse=True)
def _run_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MuJoCo writes MUJOCO_LOG.TXT into the working directory on warnings: keep it out of the repo."""
    monkeypatch.chdir(tmp_path)


def _states(sim: MujocoSim, n: int) -> np.ndarray:
    out = []
    for _ in range(n):
        sim.step()
        out.append(np.concatenate([[sim.d.time], sim.d.qpos, sim.d.qvel]))
    return np.array(out)


def _save_and_restart(model, fb, *, strip_extension: bool = False) -> tuple[np.ndarray, np.ndarray, list[str]]:
    first = MujocoSim(model, floating_base=fb)
    kick_mujoco(first)
    _states(first, N)
    text = write_world_state(capture(first))
    cont = _states(first, N)
    state = read_world_state(text).state
    if strip_extension:
        state.extensions = []
    second = MujocoSim(model, floating_base=fb)
    warnings = restore(second, state)
    assert second.step_count == N
    return cont, _states(second, N), warnings


@pytest.mark.parametrize("robot", sorted(ROBOTS))
def test_restart_continues_bit_for_bit(robot: str) -> None:
    model, fb = load(robot)
    cont, again, warnings = _save_and_restart(model, fb)
    assert warnings == []
    assert again.shape == cont.shape
    assert np.array_equal(again, cont), np.abs(again - cont).max()
    assert np.abs(cont[-1] - cont[0]).max() > 1e-3  # the robot really moved


@pytest.mark.parametrize("robot", sorted(ROBOTS))
def test_restart_without_extension_restores_positions_and_velocities(robot: str) -> None:
    model, fb = load(robot)
    sim = MujocoSim(model, floating_base=fb)
    kick_mujoco(sim)
    sim.step(N)
    state = read_world_state(write_world_state(capture(sim))).state
    state.extensions = []
    fresh = MujocoSim(model, floating_base=fb)
    restore(fresh, state)
    assert np.abs(fresh.d.qvel - sim.d.qvel).max() <= 1e-12
    for j in range(sim.m.njnt):  # quaternions up to sign, the rest directly
        a, t = sim.m.jnt_qposadr[j], sim.m.jnt_type[j]
        n = {0: 7, 1: 4}.get(int(t), 1)
        x, y = fresh.d.qpos[a:a + n], sim.d.qpos[a:a + n]
        if n > 1:
            y = y if np.abs(x[-4:] - y[-4:]).max() < 1 else np.concatenate([y[:-4], -y[-4:]])
        assert np.abs(x - y).max() <= 1e-12
    assert fresh.d.time == pytest.approx(sim.d.time, abs=1e-9, rel=0)
    if robot != "legged_world":
        # no contacts: continuing without MuJoCo's warm start gives the same run within 1e-9 (with
        # contacts the solver's warm start matters and the difference grows: the extension's reason)
        cont, again, _ = _save_and_restart(model, fb, strip_extension=True)
        assert np.abs(again - cont).max() <= 1e-9


def test_floating_base_legged_robot_from_example_robot_data() -> None:
    path = solo12()
    if path is None:
        pytest.skip(SKIP_REASON)
    model = load_model_file(path)
    cont, again, warnings = _save_and_restart(model, True)
    assert warnings == []
    assert np.array_equal(again, cont)


def test_capture_matches_the_package_kinematics() -> None:
    """Fixed-base arm: link poses and twists from MuJoCo equal forward kinematics of its joints."""
    model, fb = load("arm7_gripper")
    sim = MujocoSim(model, floating_base=fb)
    kick_mujoco(sim)
    sim.step(40)
    state = capture(sim)
    tree = sim.map.tree
    pos, vel = sim.joint_values()
    q = np.concatenate([pos[n] for n in tree.moving_joint_names])
    v = np.concatenate([vel[n] for n in tree.moving_joint_names])
    x = forward(tree, q, world=True)
    tw = link_twists(tree, q, v)
    wp = world_poses(state)
    ms = state.model("arm7_gripper")
    for i, name in enumerate(tree.link_names):
        if name == "finger_right":  # follows a soft equality constraint, not the exact mimic
            continue
        assert np.abs(wp[f"arm7_gripper::{name}"] - x[i]).max() < 1e-9, name
        assert np.abs(np.array(ms.link(name).twist) - tw[i]).max() < 1e-9, name
    assert state.stamp is not None and state.stamp.to_seconds() == pytest.approx(40 * 0.002, rel=0, abs=1e-12)
    adr = sim.m.jnt_qposadr[mujoco.mj_name2id(sim.m, mujoco.mjtObj.mjOBJ_JOINT, "finger_right_joint")]
    assert ms.joint("finger_right_joint").positions == (sim.d.qpos[adr],)  # the simulator's own value


def test_floating_base_is_the_model_pose_and_twist() -> None:
    model, fb = load("legged_world")
    sim = MujocoSim(model, floating_base=fb)
    kick_mujoco(sim)
    sim.step(30)
    state = capture(sim)
    quad = state.model("quadruped")
    b = mujoco.mj_name2id(sim.m, mujoco.mjtObj.mjOBJ_BODY, "quadruped::torso")
    d = mujoco.MjData(sim.m)  # sim.d's poses are those before the last step's integration
    d.qpos[:] = sim.d.qpos
    mujoco.mj_kinematics(sim.m, d)
    wp = world_poses(state)
    assert np.abs(wp["quadruped::torso"][:3, 3] - d.xpos[b]).max() < 1e-12
    assert np.abs(wp["quadruped::torso"][:3, :3] - d.xmat[b].reshape(3, 3)).max() < 1e-12
    # the free joint: world linear velocity, angular velocity in the body: the model frame is fixed
    # to the canonical link torso, so the model twist is the torso's in the world
    adr = sim.m.jnt_dofadr[mujoco.mj_name2id(sim.m, mujoco.mjtObj.mjOBJ_JOINT, "quadruped::torso__free")]
    assert quad.twist is not None
    w = d.xmat[b].reshape(3, 3) @ sim.d.qvel[adr + 3:adr + 6]
    v_model = sim.d.qvel[adr:adr + 3] + np.cross(w, wp["quadruped"][:3, 3] - d.xpos[b])  # rigid-body transport
    assert np.abs(np.array(quad.twist[3:]) - w).max() < 1e-12
    assert np.abs(np.array(quad.twist[:3]) - v_model).max() < 1e-12
    assert quad.joint("tail_joint").positions is not None and len(quad.joint("tail_joint").positions) == 4
    assert state.model("pendulum").joint("swing") is not None


def test_extension_round_trips_and_validates() -> None:
    model, fb = load("legged_world")
    sim = MujocoSim(model, floating_base=fb)
    sim.step(20)
    text = write_world_state(capture(sim))
    assert f'xmlns:sim="{NAMESPACE}"' in text
    assert validate_schema(text) == []
    state = read_world_state(text).state
    assert write_world_state(state) == text
    ext = find_simulator_state(state, "mujoco")
    assert ext is not None and ext.step == 20 and ext.time == sim.time
    assert np.array_equal(np.array(ext.arrays["qpos"]), sim.d.qpos)
    assert {"qpos", "qvel", "warmstart"} <= set(ext.arrays)


def test_an_edited_file_wins_over_a_stale_extension() -> None:
    model, fb = load("arm7_gripper")
    sim = MujocoSim(model, floating_base=fb)
    sim.step(10)
    state = capture(sim)
    ms = state.model("arm7_gripper")
    ms.joint("joint2").positions = (0.75,)
    fresh = MujocoSim(model, floating_base=fb)
    warnings = restore(fresh, read_world_state(write_world_state(state)).state)
    assert any("extension ignored" in w for w in warnings)
    adr = fresh.m.jnt_qposadr[mujoco.mj_name2id(fresh.m, mujoco.mjtObj.mjOBJ_JOINT, "joint2")]
    assert fresh.d.qpos[adr] == 0.75


def test_extension_of_another_model_is_ignored() -> None:
    arm, _ = load("arm7_gripper")
    cart, _ = load("planar_cart")
    s1 = capture(MujocoSim(cart))
    s2 = capture(MujocoSim(arm))
    s2.extensions = s1.extensions
    warnings = restore(MujocoSim(arm), s2)
    assert any("another MuJoCo model layout" in w for w in warnings)


def test_a_state_that_does_not_fit_is_refused() -> None:
    arm, _ = load("arm7_gripper")
    cart, _ = load("planar_cart")
    state = capture(MujocoSim(cart))
    with pytest.raises(UsdfError) as info:
        restore(MujocoSim(arm), state)
    assert "joint1" in str(info.value)
    good = capture(MujocoSim(arm))
    good.model("arm7_gripper").joint("joint3").positions = (0.1, 0.2)
    with pytest.raises(UsdfError) as info:
        restore(MujocoSim(arm), good)
    assert info.value.diagnostics[0].code == "USDF_DOF_MISMATCH"
