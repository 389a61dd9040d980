"""Inertia checks shared by the readers: whether a mass and inertia matrix are physically valid.

libsdformat's test (ignition-math ``MassMatrix3::IsValid``) is what SDFormat reading refuses
(``model/sdf/elements.py``) and what libsdformat's URDF conversion refuses (``model/urdf/gazebo.py``).
"""

from __future__ import annotations

import numpy as np

_DBL_EPS = float(np.finfo(float).eps)


def valid_mass_matrix(mass: float, six: tuple[float, float, float, float, float, float],
                      tolerance: float = 10.0) -> bool:
    """libsdformat's (ignition-math ``MassMatrix3::IsValid``) test: mass >= 0, the leading minors of
    the inertia matrix and its principal moments non-negative, the moments obeying the triangle
    inequality, each within ``tolerance * DBL_EPSILON * trace / 2``."""
    ixx, ixy, ixz, iyy, iyz, izz = six
    eps = tolerance * _DBL_EPS * 0.5 * abs(ixx + iyy + izz)
    if ixy == ixz == iyz == 0.0:  # diagonal (most links): the moments are the principal moments
        return (mass >= 0 and ixx + eps >= 0 and iyy + eps >= 0 and izz + eps >= 0 and ixx + iyy + eps >= izz
                and iyy + izz + eps >= ixx and izz + ixx + eps >= iyy and ixx * iyy + eps >= 0
                and ixx * iyy * izz + eps >= 0)
    # Gershgorin: every eigenvalue lies within [I_ii - r_i, I_ii + r_i]; when those bounds alone prove
    # the moments positive and the triangle inequality (with a margin for rounding), no eigenvalues needed
    r0, r1, r2 = abs(ixy) + abs(ixz), abs(ixy) + abs(iyz), abs(ixz) + abs(iyz)
    trace = ixx + iyy + izz
    margin = 1e-9 * abs(trace)
    if mass >= 0 and min(ixx - r0, iyy - r1, izz - r2) > margin and trace - 2 * max(
            ixx + r0, iyy + r1, izz + r2) > margin:
        return True
    moi = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if not (mass >= 0 and ixx + eps >= 0 and ixx * iyy - ixy * ixy + eps >= 0 and np.linalg.det(moi) + eps >= 0):
        return False
    m = np.linalg.eigvalsh(moi)
    eps = tolerance * np.finfo(float).eps * 0.5 * abs(float(m.sum()))
    return bool(m.min() + eps >= 0 and m[0] + m[1] + eps >= m[2] and m[1] + m[2] + eps >= m[0]
                and m[2] + m[0] + eps >= m[1])


__all__ = ["valid_mass_matrix"]
