"""Drake and MuJoCo agree on a state: captured in one, restored in the other, the same link poses.

Both engines load the same model file (Drake through pydrake's own Parser, MuJoCo through the MJCF
generated from the package's Model), so a restart file carried across is checked against two
independent implementations of the robot's kinematics.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("mujoco", reason="the mujoco package is not installed")
pytest.importorskip("pydrake", reason="the drake package is not installed")

import mujoco
from sim_helpers import ROBOTS, SIM, kick_mujoco, load

from robot_state_format.model import load_model_file
from robot_state_format.model.types import Inertial
from robot_state_format.sim import capture, restore
from robot_state_format.sim.drake_sim import DrakeSim
from robot_state_format.sim.mjcf_writer import mujoco_inertial
from robot_state_format.sim.mujoco_sim import MujocoSim
from robot_state_format.usdf.reader import read_world_state
from robot_state_format.usdf.resolve import world_poses
from robot_state_format.usdf.writer import write_world_state


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
    return read_world_state(write_world_state(state)).state


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
    assert restore(again, read_world_state(text).state) == []
    assert again.step_count == 60
    out = []
    for _ in range(60):
        again.step()
        out.append(np.concatenate([again.plant.GetPositions(again.pctx), again.plant.GetVelocities(again.pctx)]))
    assert np.array_equal(np.array(out), np.array(ref))


def test_links_without_inertia_get_mujocos_bounds() -> None:
    """A URDF whose links have no <inertial> (and one point mass): Drake's mass matrix equals
    MuJoCo's at a bent configuration, entry for entry, so both engines simulate the same robot
    (MuJoCo: its compiler's boundmass/boundinertia; Drake: the same values written into the URDF)."""
    model = load_model_file(SIM / "no_inertia.urdf")
    mj = MujocoSim(model)
    mj.d.qpos[:] = [0.4, -0.7, 1.1]
    mj.d.qvel[:] = [0.3, 0.2, -0.5]
    dk = DrakeSim(model)
    assert dk.notes == ["links 'base', 'upper', 'tool', 'slider' without inertia: MuJoCo's lower bounds used "
                        "(mass 1e-06 kg, principal moments 1e-09 kg m^2 at the link origin)",
                        "link 'lower': mass or principal moments below MuJoCo's lower bounds (1e-06 kg, "
                        "1e-09 kg m^2), raised to them"]
    assert restore(dk, capture(mj)) == []
    mujoco.mj_forward(mj.m, mj.d)
    m_mj = np.zeros((mj.m.nv, mj.m.nv))
    mujoco.mj_fullM(mj.m, mj.d, m_mj)
    m_dk = dk.plant.CalcMassMatrix(dk.pctx)
    names = ["shoulder", "elbow", "wrist"]
    i_mj = [int(mj.m.jnt_dofadr[mujoco.mj_name2id(mj.m, mujoco.mjtObj.mjOBJ_JOINT, n)]) for n in names]
    i_dk = [dk._joints[n].velocity_start() for n in names]
    a, b = m_mj[np.ix_(i_mj, i_mj)], m_dk[np.ix_(i_dk, i_dk)]
    assert np.abs(a - b).max() <= 1e-12 * np.abs(a).max()
    # the wrist's own entry is the slider's bound about its axis through the link origin
    assert a[2, 2] == pytest.approx(1e-9, rel=1e-12, abs=1e-12)
    dk.step(100)  # and it steps (Drake refused a massless link on a joint before)
    assert np.isfinite(dk.plant.GetPositions(dk.pctx)).all()


def test_mujoco_inertial_rules() -> None:
    """The bounds as MuJoCo's compiler applies them, hand-derived."""
    none = mujoco_inertial(None)
    assert none[0] == 1e-6 and (none[1] == np.eye(4)).all() and (none[2] == 1e-9).all()
    zero = mujoco_inertial(Inertial(mass=0.0, inertia=(1.0, 0.0, 0.0, 1.0, 0.0, 1.0)))
    assert zero[0] == 1e-6 and (zero[2] == 1e-9).all()  # no positive mass: no inertial at all
    given = mujoco_inertial(Inertial(mass=2.0, inertia=(1.0, 0.0, 0.0, 2.0, 0.0, 2.5)))
    assert given[0] == 2.0 and given[1] is None  # valid: used as it is
    light = mujoco_inertial(Inertial(mass=1e-9, inertia=(1.0, 0.0, 0.0, 1.0, 0.0, 1.0)))
    assert light[0] == 1e-6 and light[1] is None
    point = mujoco_inertial(Inertial(mass=0.2))
    assert point[0] == 0.2 and point[1] is not None and (point[2] == 1e-9).all()
    lopsided = mujoco_inertial(Inertial(mass=1.0, inertia=(1.0, 0.0, 0.0, 1.0, 0.0, 3.0)))  # 1 + 1 < 3
    assert lopsided[2] == pytest.approx([5 / 3] * 3, rel=0, abs=1e-12)
