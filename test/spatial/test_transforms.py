"""Rigid-transform conventions: fixed-axis rpy, ROS-order quaternions, and rpy extraction near gimbal lock."""

from __future__ import annotations

import math

import numpy as np
import pytest
import reference_kinematics as ref

from robot_state_format.spatial import (
    axis_angle_to_matrix,
    matrices_to_quaternions,
    matrices_to_rpy,
    matrix_to_quaternion,
    matrix_to_rpy,
    quaternion_components_to_rotation,
    quaternion_to_matrix,
    quaternions_to_matrices,
    rpy_to_matrix,
    transforms_to_quaternions,
    xyz_rpy_to_transform,
)


def _rx(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _ry(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def _rz(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def test_rpy_is_fixed_axis_z_y_x() -> None:
    r, p, y = 0.3, -0.7, 1.9
    assert np.allclose(rpy_to_matrix(r, p, y), _rz(y) @ _ry(p) @ _rx(r), atol=1e-15, rtol=0)
    assert np.allclose(matrix_to_rpy(rpy_to_matrix(r, p, y)), (r, p, y), atol=1e-14, rtol=0)


def test_quaternion_is_x_y_z_w() -> None:
    # 90 degrees about z: (0, 0, sin 45, cos 45)
    q = (0.0, 0.0, math.sqrt(0.5), math.sqrt(0.5))
    assert np.allclose(quaternion_to_matrix(q), _rz(math.pi / 2), atol=1e-15, rtol=0)
    assert np.allclose(matrix_to_quaternion(_rz(math.pi / 2)), q, atol=1e-15, rtol=0)


@pytest.mark.parametrize("eps", [0.0, 1e-12, 6e-8, 1e-6, 1e-3])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_rpy_round_trip_reproduces_the_matrix_at_and_near_gimbal_lock(eps: float, sign: float) -> None:
    # A rotation a hair away from pitch = +-90 degrees, built as FK builds them (a product of matrices).
    rot = _rz(0.4) @ _ry(sign * (math.pi / 2 - eps)) @ _rx(-1.2)
    back = rpy_to_matrix(*matrix_to_rpy(rot))
    assert np.abs(back - rot).max() < 1e-14


def test_quaternion_near_lock_from_a_snapshot_round_trips() -> None:
    # The case that asin-based extraction got wrong by 1.2e-7: 90 degrees about y, slightly perturbed.
    q = np.array([5.96e-8, 1.0, 5.96e-8, 1.0])
    rot = quaternion_to_matrix(q / np.linalg.norm(q))
    assert np.abs(rpy_to_matrix(*matrix_to_rpy(rot)) - rot).max() < 1e-14


def test_batch_extraction_equals_single() -> None:
    rng = np.random.default_rng(7)
    qs = rng.normal(size=(200, 4))
    mats = np.stack([quaternion_to_matrix(q / np.linalg.norm(q)) for q in qs])
    batch = matrices_to_rpy(mats)
    for m, row in zip(mats, batch):
        assert tuple(row) == matrix_to_rpy(m)


def _unit_quaternions(n: int, seed: int) -> np.ndarray:
    q = np.random.default_rng(seed).normal(size=(n, 4))
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def test_reference_quaternion_helpers_hand_derived() -> None:
    # the test reference itself (test/reference_kinematics.py), against hand-derived matrices
    s45 = math.sqrt(0.5)
    np.testing.assert_allclose(ref.quaternion_matrix((0.0, 0.0, s45, s45)), _rz(math.pi / 2), atol=1e-15, rtol=0)
    np.testing.assert_allclose(ref.quaternion_matrix((s45, 0.0, 0.0, s45)), _rx(math.pi / 2), atol=1e-15, rtol=0)
    np.testing.assert_allclose(ref.matrix_quaternion(_ry(math.pi / 2)), (0.0, s45, 0.0, s45), atol=1e-15, rtol=0)
    np.testing.assert_allclose(ref.matrix_quaternion(np.diag([1.0, -1.0, -1.0])), (1.0, 0.0, 0.0, 0.0), atol=1e-15,
                               rtol=0)
    # i j = k in (x, y, z, w) order
    assert ref.hamilton((1.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0, 0.0)) == (0.0, 0.0, 1.0, 0.0)
    np.testing.assert_allclose(ref.axis_angle((0, 0, 2), math.pi / 2), _rz(math.pi / 2), atol=1e-15, rtol=0)


def test_vectorised_quaternions_to_matrices_match_the_reference() -> None:
    qs = _unit_quaternions(300, 11)
    mats = quaternions_to_matrices(qs.reshape(3, 100, 4))
    assert mats.shape == (3, 100, 3, 3)
    for q, m in zip(qs, mats.reshape(300, 3, 3)):
        np.testing.assert_allclose(m, ref.quaternion_matrix(q), rtol=0, atol=4e-15)  # a few ulps: other formulas
        # the scalar helper is the same formula: the same bits
        assert np.array_equal(quaternion_to_matrix(q), m)
    comp = quaternion_components_to_rotation(qs[:, 0], qs[:, 1], qs[:, 2], qs[:, 3])
    assert comp.shape == (3, 3, 300) and np.array_equal(np.moveaxis(comp, 2, 0), mats.reshape(300, 3, 3))


def test_vectorised_matrices_to_quaternions_match_the_reference() -> None:
    qs = _unit_quaternions(300, 12)
    mats = np.stack([ref.quaternion_matrix(q) for q in qs])
    got = matrices_to_quaternions(mats.reshape(30, 10, 3, 3))
    assert got.shape == (30, 10, 4)
    got = got.reshape(300, 4)
    assert np.all(got[:, 3] >= 0.0)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=0, atol=1e-15)
    for g, m, q in zip(got, mats, qs):
        np.testing.assert_allclose(g, ref.matrix_quaternion(m), rtol=0, atol=1e-14)
        np.testing.assert_allclose(g, q if q[3] >= 0 else -q, rtol=0, atol=1e-14)
        np.testing.assert_allclose(matrix_to_quaternion(m), g, rtol=0, atol=1e-15)  # the scalar form
    # the 4x4 path (TF messages) gives the same bits as the 3x3 one
    x = np.tile(np.eye(4), (300, 1, 1))
    x[:, :3, :3] = mats
    x[:, :3, 3] = np.random.default_rng(13).normal(size=(300, 3))
    assert np.array_equal(transforms_to_quaternions(x), got)
    out = np.full((300, 7), np.nan)
    transforms_to_quaternions(x, out=out[:, 3:])
    assert np.array_equal(out[:, 3:], got) and np.isnan(out[:, :3]).all()


@pytest.mark.parametrize("rot", [np.eye(3), np.diag([1.0, -1.0, -1.0]), np.diag([-1.0, 1.0, -1.0]),
                                 np.diag([-1.0, -1.0, 1.0])], ids=["identity", "x180", "y180", "z180"])
def test_matrices_to_quaternions_at_half_turns(rot: np.ndarray) -> None:
    # w = 0 for half turns: the quaternion is the axis itself, either sign; the reference picks one
    got = matrices_to_quaternions(rot[None])[0]
    expect = ref.matrix_quaternion(rot)
    assert abs(abs(float(got @ expect)) - 1.0) < 1e-15
    np.testing.assert_allclose(ref.quaternion_matrix(got), rot, atol=1e-15, rtol=0)


def test_axis_angle_matches_rodrigues_reference() -> None:
    rng = np.random.default_rng(14)
    for _ in range(50):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        angle = float(rng.uniform(-4, 4))
        np.testing.assert_allclose(axis_angle_to_matrix(axis, angle), ref.axis_angle(axis, angle), rtol=0,  # ulps
                                   atol=4e-15)
        r, p, y = rng.uniform(-3, 3, 3)
        np.testing.assert_allclose(rpy_to_matrix(r, p, y), ref.rpy(r, p, y), rtol=0, atol=4e-15)


def test_xyz_rpy_to_transform_matches_the_reference() -> None:
    rng = np.random.default_rng(15)
    for _ in range(50):
        x, y, z, r, p, yaw = rng.uniform(-3, 3, 6)
        np.testing.assert_allclose(xyz_rpy_to_transform(x, y, z, r, p, yaw), ref.pose(x, y, z, r, p, yaw), rtol=0,
                                   atol=4e-15)
        assert np.array_equal(xyz_rpy_to_transform(x, y, z, 0.0, 0.0, 0.0), ref.pose(x, y, z))
