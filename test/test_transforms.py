"""Rigid-transform conventions: fixed-axis rpy, ROS-order quaternions, and rpy extraction near gimbal lock."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robot_state_format.spatial import (
    matrices_to_rpy,
    matrix_to_quaternion,
    matrix_to_rpy,
    quaternion_to_matrix,
    rpy_to_matrix,
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
    assert np.allclose(rpy_to_matrix(r, p, y), _rz(y) @ _ry(p) @ _rx(r), atol=1e-15)
    assert np.allclose(matrix_to_rpy(rpy_to_matrix(r, p, y)), (r, p, y), atol=1e-14)


def test_quaternion_is_x_y_z_w() -> None:
    # 90 degrees about z: (0, 0, sin 45, cos 45)
    q = (0.0, 0.0, math.sqrt(0.5), math.sqrt(0.5))
    assert np.allclose(quaternion_to_matrix(q), _rz(math.pi / 2), atol=1e-15)
    assert np.allclose(matrix_to_quaternion(_rz(math.pi / 2)), q, atol=1e-15)


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
