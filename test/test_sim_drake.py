"""Drake and MuJoCo agree on a state: captured in one, restored in the other, the same link poses.

Both engines load the same model file (Drake through pydrake's own Parser, MuJoCo through the MJCF
generated from the package's Model), so a restart file carried across is checked against two
independent implementations of the robot's kinematics.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco", reason="the mujoco package is not installed")
pytest.importorskip("pydrake", reason="the drake package is not installed")

from robot_state_format.sim import capture, restore
from robot_state_format.sim.drake_sim import DrakeSim
from robot_state_format.sim.mujoco_sim import MujocoSim
from robot_state_format.usdf.reader import read_world_state
from robot_state_format.usdf.resolve import world_poses
from robot_state_format.usdf.writer import write_world_state

sys.path.insert(0, str(Path(__file__).parent))
from sim_helpers import ROBOTS, kick_mujoco, load


@pytest.fixture(autouse=True)
def _run_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _world_links(sim) -> tuple[list[str], np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    poses, twists = sim.link_motions()
    return sim.map.tree.link_names, poses, twists


def _compare(a, b) -> None:  # type: ignore[no-untyped-def]
    names, pa, ta = _world_links(a)
    _, pb, tb = _world_links(b)
    assert np.abs(pa - pb).max() <= 1e-9, names[int(np.abs(pa - pb).max(axis=(1, 2)).argmax())]
    assert np.abs(ta - tb).max() <= 1e-9 * (1 + np.abs(ta).max())


def _through_file(state):  # type: ignore[no-untyped-def]
    return read_world_state(write_world_state(state))


@pytest.mark.parametrize("robot", sorted(ROBOTS))
def test_mujoco_state_restored_in_drake(robot: str) -> None:
    model, fb = load(robot)
    mj = MujocoSim(model, floating_base=fb)
    kick_mujoco(mj)
    mj.step(120)
    state = _through_file(capture(mj))
    dk = DrakeSim(model, floating_base=fb)
    assert not [w for w in restore(dk, state) if "extension" not in w]
    _compare(mj, dk)
    # and the world poses written in the file are Drake's
    wp, wd = world_poses(state), world_poses(capture(dk))
    assert max(np.abs(wp[k] - wd[k]).max() for k in wp) <= 1e-9


@pytest.mark.parametrize("robot", sorted(ROBOTS))
def test_drake_state_restored_in_mujoco(robot: str) -> None:
    model, fb = load(robot)
    dk = DrakeSim(model, floating_base=fb)
    mj0 = MujocoSim(model, floating_base=fb)  # a moving start for Drake: MuJoCo's kicked state
    kick_mujoco(mj0)
    mj0.step(5)
    restore(dk, _through_file(capture(mj0)))
    dk.step(80)
    state = _through_file(capture(dk))
    mj = MujocoSim(model, floating_base=fb)
    assert not [w for w in restore(mj, state) if "extension" not in w]
    _compare(dk, mj)


def test_drake_restart_continues_bit_for_bit() -> None:
    model, fb = load("legged_world")
    dk = DrakeSim(model, floating_base=fb)
    mj0 = MujocoSim(model, floating_base=fb)
    kick_mujoco(mj0)
    restore(dk, _through_file(capture(mj0)))
    dk.step(60)
    text = write_world_state(capture(dk))
    ref = []
    for _ in range(60):
        dk.step()
        ref.append(np.concatenate([dk.plant.GetPositions(dk.pctx), dk.plant.GetVelocities(dk.pctx)]))
    again = DrakeSim(model, floating_base=fb)
    assert restore(again, read_world_state(text)) == []
    assert again.step_count == 60
    out = []
    for _ in range(60):
        again.step()
        out.append(np.concatenate([again.plant.GetPositions(again.pctx), again.plant.GetVelocities(again.pctx)]))
    assert np.array_equal(np.array(out), np.array(ref))
