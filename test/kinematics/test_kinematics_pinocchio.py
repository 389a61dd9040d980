"""Link poses against Pinocchio on every real URDF of example-robot-data (random configurations).

Pinocchio is given every joint (mimic followers included) as independent, with the values our
mimic resolution computes, so its own mimic parsing (which depends on declaration order) is not
involved.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from real_robots import SKIP_REASON, real_urdfs, robots_dir, romeo_urdf

from robot_state_format.errors import ModelError
from robot_state_format.kinematics import fk
from robot_state_format.kinematics.tree import CompiledTree, compile_model
from robot_state_format.model.loader import load_model_file
from robot_state_format.model.types import JointType, Model

pin = pytest.importorskip("pinocchio", reason="pin (Pinocchio) is not installed")

URDFS = real_urdfs()


def random_q(model: Model, tree: CompiledTree, rng: np.random.Generator, n: int) -> np.ndarray:
    """Configurations within the joint limits (continuous joints in [-pi, pi])."""
    q = np.empty((n, tree.nq))
    for name in tree.moving_joint_names:
        j = model.joints[name]
        s = tree.q_slice(name)
        if j.type is JointType.FLOATING:
            q[:, s.start:s.start + 3] = rng.uniform(-2, 2, (n, 3))
            quat = rng.normal(size=(n, 4))
            q[:, s.start + 3:s.stop] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
        elif j.type is JointType.BALL:
            quat = rng.normal(size=(n, 4))
            q[:, s] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
        else:
            lo, hi = -math.pi, math.pi
            if (j.type in (JointType.REVOLUTE, JointType.PRISMATIC) and j.limits is not None
                    and j.limits.lower is not None and j.limits.upper is not None and j.limits.lower < j.limits.upper):
                lo, hi = j.limits.lower, j.limits.upper
            q[:, s] = rng.uniform(lo, hi, (n, s.stop - s.start))
    return q


def pin_q(pmodel: object, tree: CompiledTree, q: np.ndarray) -> np.ndarray:
    allq = tree.all_joint_positions(q)
    out = pin.neutral(pmodel)
    for jid in range(1, pmodel.njoints):  # type: ignore[attr-defined]
        jm = pmodel.joints[jid]  # type: ignore[attr-defined]
        val = allq[pmodel.names[jid]]  # type: ignore[attr-defined]
        kind = jm.shortname()
        if jm.nq == 2 and jm.nv == 1:  # continuous, on an axis of the frame (RUB*) or any other: cos, sin
            out[jm.idx_q:jm.idx_q + 2] = [math.cos(val[0]), math.sin(val[0])]
        elif kind == "JointModelPlanar":  # x, y, cos, sin
            out[jm.idx_q:jm.idx_q + 4] = [val[0], val[1], math.cos(val[2]), math.sin(val[2])]
        else:
            out[jm.idx_q:jm.idx_q + jm.nq] = val
    return out


def _readable(paths: list[Path]) -> list[Path]:
    """The robots our reader accepts (a few real files are invalid URDF; the reader's tests cover them)."""
    out = []
    for p in paths:
        try:
            load_model_file(p)
        except ModelError:
            continue
        out.append(p)
    return out


READABLE = _readable(URDFS)


def test_most_real_robots_are_compared() -> None:
    if not URDFS:
        pytest.skip(SKIP_REASON)
    assert len(READABLE) >= 0.9 * len(URDFS)


def compare(path: Path, n: int = 4, seed: int = 0) -> int:
    model = load_model_file(path)
    tree = compile_model(model)
    pmodel = pin.buildModelFromUrdf(str(path))
    pdata = pmodel.createData()
    rng = np.random.default_rng(seed)
    qs = random_q(model, tree, rng, n)
    batch = fk.forward_batch(tree, qs)
    frames = {pmodel.frames[i].name: i for i in range(len(pmodel.frames)) if pmodel.frames[i].type == pin.BODY}
    # every link is a body frame of Pinocchio's model (fixed-joint children included): all are compared
    assert [name for name in tree.link_names if name not in frames] == [], f"{path.name}: links Pinocchio lacks"
    compared = 0
    for k, q in enumerate(qs):
        pin.framesForwardKinematics(pmodel, pdata, pin_q(pmodel, tree, q))
        ours = fk.forward(tree, q)
        assert np.array_equal(batch[k], ours)
        for i, name in enumerate(tree.link_names):
            np.testing.assert_allclose(ours[i], pdata.oMf[frames[name]].homogeneous, rtol=0, atol=1e-9,
                                       err_msg=f"{path.name}: link {name}")
            compared += 1
    return compared


@pytest.mark.skipif(not URDFS, reason=SKIP_REASON)
@pytest.mark.parametrize("path", READABLE, ids=lambda p: str(p.relative_to(robots_dir() or p.parent)))
def test_link_poses_match_pinocchio(path: Path) -> None:
    model = load_model_file(path)
    n = 4
    assert compare(path, n=n) == n * len(model.links)  # every link of the robot, in every configuration


@pytest.mark.skipif(romeo_urdf() is None, reason=SKIP_REASON)
def test_romeo_with_mimic_matches_pinocchio() -> None:
    path = romeo_urdf()
    assert path is not None
    tree = compile_model(load_model_file(path))
    assert len(tree.mimic_followers) == 22 and tree.nlinks == 82
    assert compare(path, n=20, seed=7) == 20 * 82


def test_a_continuous_joint_on_any_axis_against_pinocchio(tmp_path: Path) -> None:
    # a continuous joint off the frame's axes is Pinocchio's JointModelRevoluteUnboundedUnaligned
    # (moveit_resources' Kinova gen3 has them); its configuration is (cos, sin) too
    path = tmp_path / "r.urdf"
    path.write_text('<robot name="r"><link name="a"/><link name="b"/><link name="c"/>'
                    '<joint name="j" type="continuous"><parent link="a"/><child link="b"/>'
                    '<origin xyz="0.1 0.2 0.3" rpy="0.3 -0.2 0.1"/><axis xyz="0 -1 0"/></joint>'
                    '<joint name="k" type="continuous"><parent link="b"/><child link="c"/>'
                    '<origin xyz="0 0 0.4"/><axis xyz="0.6 0 0.8"/></joint></robot>')
    kinds = {j.shortname() for j in pin.buildModelFromUrdf(str(path)).joints[1:]}
    assert "JointModelRevoluteUnboundedUnaligned" in kinds, kinds
    assert compare(path) == 4 * 3
