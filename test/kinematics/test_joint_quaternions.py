"""TF's quaternions straight from the joint angles (kinematics/joint_quaternions.py).

Checked against a hand-derived joint, against the matrix path (``matrices_to_quaternions`` of
``fk.joint_transforms``: the numbers TF carried before) on every joint type, mimic chains and a real
humanoid, and for the composition with a model pose (joints to the world).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_kinematics import every_type_model, random_q
from test_pose6_twists import sample_models

from robot_state_format.kinematics import fk
from robot_state_format.kinematics.joint_quaternions import joint_pose7, left_compose_pose7
from robot_state_format.kinematics.tree import compile_model
from robot_state_format.model.loader import load_model
from robot_state_format.spatial import matrices_to_quaternions, rpy_to_matrix

ONE_JOINT = """<robot name="r">
  <link name="a"/><link name="b"/>
  <joint name="j" type="revolute">
    <parent link="a"/><child link="b"/>
    <origin xyz="1 2 3" rpy="0 0 {yaw}"/>
    <axis xyz="1 0 0"/>
    <limit lower="-4" upper="4" effort="1" velocity="1"/>
  </joint>
</robot>"""


@pytest.mark.parametrize("yaw, q", [(0.0, 0.5), (math.pi / 2, -1.2), (0.3, 3.0)])
def test_a_revolute_joint_by_hand(yaw: float, q: float) -> None:
    # X = Rz(yaw) Rx(q): quat = (0, 0, sin(yaw/2), cos(yaw/2)) (x) (sin(q/2), 0, 0, cos(q/2))
    tree = compile_model(load_model(ONE_JOINT.format(yaw=yaw)))
    sz, cz, sx, cx = math.sin(yaw / 2), math.cos(yaw / 2), math.sin(q / 2), math.cos(q / 2)
    expected = np.array([cz * sx, sz * sx, sz * cx, cz * cx])
    expected *= math.copysign(1.0, expected[3])
    row = joint_pose7(tree, np.array([q]))[0]
    assert row[:3].tolist() == [1.0, 2.0, 3.0]
    assert np.allclose(row[3:], expected, rtol=0, atol=4e-16)


@pytest.mark.parametrize("name_model", sample_models(17), ids=lambda nm: nm[0])
def test_the_matrix_path_to_rounding(name_model: tuple[str, object]) -> None:
    tree = compile_model(name_model[1])  # type: ignore[arg-type]
    rng = np.random.default_rng(2)
    worst = 0.0
    for q in random_q(tree, rng, 20):
        x = fk.joint_transforms(tree, q)
        rows = joint_pose7(tree, q)
        assert np.array_equal(rows[:, :3], x[:, :3, 3])  # the same translation arithmetic
        quat = rows[:, 3:]
        assert (quat[:, 3] >= 0).all()
        assert np.allclose(np.einsum("ij,ij->i", quat, quat), 1.0, rtol=0, atol=1e-15)
        worst = max(worst, float(np.abs(quat - matrices_to_quaternions(x[:, :3, :3])).max()))
    assert worst < 1e-14  # rounding only (w near 0 may pick the other sign: not on random angles)


def test_left_composition_is_the_matrix_product() -> None:
    rng = np.random.default_rng(4)
    tree = compile_model(every_type_model(rng))
    q = random_q(tree, rng, 1)[0]
    x = fk.joint_transforms(tree, q)
    left = np.eye(4)
    left[:3, :3] = rpy_to_matrix(0.3, -0.7, 2.0)
    left[:3, 3] = [0.5, -1.0, 2.0]
    got = left_compose_pose7(left, joint_pose7(tree, q))
    assert np.array_equal(left_compose_pose7(left, joint_pose7(tree, q), matrices_to_quaternions(left[None, :3, :3])[0]), got)
    want = left @ x
    assert np.allclose(got[:, :3], want[:, :3, 3], rtol=0, atol=1e-14)
    assert np.allclose(got[:, 3:], matrices_to_quaternions(want[:, :3, :3]), rtol=0, atol=1e-14)
    assert (got[:, 6] >= 0).all()
