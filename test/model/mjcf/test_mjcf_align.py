"""The principal axes behind ``<freejoint align>`` against MuJoCo's own ``mju_eig3`` (the installed wheel)."""

from __future__ import annotations

import numpy as np
import pytest

from robot_state_format.model.mjcf.align import _principal

mujoco = pytest.importorskip("mujoco")


def _reference(inertia: np.ndarray) -> np.ndarray:
    values, vectors, quat = np.zeros(3), np.zeros(9), np.zeros(4)
    mujoco.mju_eig3(values, vectors, quat, inertia.flatten())
    out = np.zeros(9)
    mujoco.mju_quat2Mat(out, quat)
    return out.reshape(3, 3)


def test_principal_axes_equal_mju_eig3_on_random_inertias() -> None:
    rng = np.random.default_rng(7)
    worst = 0.0
    for _ in range(300):
        a = np.diag(rng.uniform(0.2, 3.0, 3))
        off = rng.uniform(-0.5, 0.5, 3) * rng.choice([1.0, 1e-3, 1e-7], 3)
        a[0, 1] = a[1, 0] = off[0]
        a[0, 2] = a[2, 0] = off[1]
        a[1, 2] = a[2, 1] = off[2]
        worst = max(worst, float(np.abs(_principal(a) - _reference(a)).max()))
    # the 5e-8 of the old half-angle formula (sqrt((1 - c) / 2) stalls below ~1e-8 rad) would fail this
    assert worst <= 1e-13, worst


@pytest.mark.parametrize("diag", [(1.0, 2.0, 3.0), (3.0, 2.0, 1.0), (2.0, 2.0, 1.0), (1.0, 1.0, 1.0), (1.0, 3.0, 3.0)])
def test_principal_axes_of_diagonal_and_repeated_moments(diag: tuple[float, float, float]) -> None:
    a = np.diag(diag)
    np.testing.assert_allclose(_principal(a), _reference(a), rtol=0, atol=1e-14)  # order and signs
